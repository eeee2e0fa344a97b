/**
 * The rules that judge a share by the row count it was measured on: completeness, type_mismatch
 * and duplicate rows (Wilson interval against the metric's own history), and the row-count band
 * of steady batch sizes.
 */
import { describe, expect, it } from "vitest";
import type { AssetProfile, AttributeProfile } from "../../src/contracts/profile";
import { evaluate, type MetricHistory } from "../../src/detection";
import { wilson } from "../../src/detection/stats";
import { alertKeys, pastPoints } from "./fixtures";

const ASSET = { id: 1, name: "trips", type: "CSV" };

function amount(n: number, nulls: number, mismatches = 0): AttributeProfile {
  return {
    name: "amount",
    inferred_type: "number",
    count: n,
    nulls,
    empties: 0,
    distinct: Math.max(1, Math.round((n - nulls) / 2)),
    distinct_exact: true,
    top_values: [],
    type_counts: { number: n - nulls - mismatches },
    type_mismatches: mismatches,
    patterns: [],
  };
}

/** 8 past scans where `metric` was `value` (and the row count `rows`). */
function history(metrics: Record<string, number>): MetricHistory {
  const h: MetricHistory = {};
  for (const [metric, value] of Object.entries(metrics)) h[metric] = pastPoints(Array(8).fill(value));
  return h;
}

function run(profile: AssetProfile, past: MetricHistory) {
  return evaluate({
    asset: ASSET,
    job_id: "now",
    scan_time: "2025-02-01T00:00:00.000Z",
    profile,
    history: past,
    kinds: { amount: "quantity" },
  });
}

const scan = (n: number, attrs: AttributeProfile[], extra: Partial<AssetProfile> = {}): AssetProfile => ({
  row_count: n,
  schema: [],
  attributes: attrs,
  sampled: false,
  ...extra,
});

describe("share tests know the row count", () => {
  it("wilson: the interval narrows with n", () => {
    expect(wilson(100, 10_000, 3.5).low).toBeGreaterThan(0.0065);
    expect(wilson(1, 50, 3.5).low).toBeLessThan(0.002);
    expect(wilson(0, 0, 3.5)).toEqual({ low: 0, high: 1 });
  });

  it("completeness: 1 % new nulls in a never-null column of 10,000 rows fire; the same share of 50 rows does not", () => {
    const past = history({ "attr:amount:missing_rate": 0 });
    const big = run(scan(10_000, [amount(10_000, 100)]), past);
    expect(alertKeys(big)).toEqual(["completeness:amount"]);
    expect(big.alerts[0]).toMatchObject({ strategy: "wilson_share", expected: { low: 0, high: 0.002 } });
    // 1 % of ~900 rows (a yearly batch) is evidence too: 9 nulls where 7,200 rows had none.
    expect(alertKeys(run(scan(907, [amount(907, 9)]), past))).toEqual(["completeness:amount"]);
    expect(big.alerts[0]!.description).toMatch(/Wilson lower bound 0\.\d+% of 100 in 10000/);
    expect(alertKeys(run(scan(50, [amount(50, 1)]), past))).toEqual([]);
    // Exactly 5 % is no longer under a fixed 5 % floor.
    expect(alertKeys(run(scan(10_000, [amount(10_000, 500)]), past))).toEqual(["completeness:amount"]);
  });

  it("completeness: a history that varies only as samples do adds no band of its own", () => {
    // 5 % nulls in each of 8 batches of 10,000 rows, with binomial noise (σ ≈ 0.22 points).
    const sampled: MetricHistory = {
      "attr:amount:missing_rate": pastPoints([0.0481, 0.0523, 0.0497, 0.0472, 0.0518, 0.0503, 0.0489, 0.0526]),
    };
    // 7 %: 2 points up, far beyond sampling. A band drawn from the raw spread (≈1.3 points wide on
    // 8 scans) with the Wilson bound on top would have let it pass.
    expect(alertKeys(run(scan(10_000, [amount(10_000, 700)]), sampled))).toEqual(["completeness:amount"]);
    expect(alertKeys(run(scan(10_000, [amount(10_000, 530)]), sampled))).toEqual([]);
  });

  it("completeness: a column whose share wanders keeps its own spread as the band", () => {
    const wandering: MetricHistory = {
      "attr:amount:missing_rate": pastPoints([0.1, 0.14, 0.12, 0.09, 0.13, 0.11, 0.1, 0.12]),
    };
    expect(alertKeys(run(scan(10_000, [amount(10_000, 1_500)]), wandering))).toEqual([]);
    expect(alertKeys(run(scan(10_000, [amount(10_000, 3_000)]), wandering))).toEqual(["completeness:amount"]);
  });

  it("completeness: the scan's sampling and the history's drift add in quadrature, not end to end", () => {
    // Yearly batches of ~440 values whose null share drifts beyond sampling (12–17 %).
    const drifting: MetricHistory = {
      "attr:amount:missing_rate": pastPoints([0.155, 0.136, 0.119, 0.153, 0.149, 0.168, 0.129, 0.116]),
    };
    // 26 %: 12 points above the usual 14 %. The Wilson bound (−6.6 points at 438 values) on top of
    // the drift's own band (+6.4 points) needed 27 %; as independent errors they allow ~9 points.
    expect(alertKeys(run(scan(438, [amount(438, 114)]), drifting))).toEqual(["completeness:amount"]);
    expect(alertKeys(run(scan(438, [amount(438, 88)]), drifting))).toEqual([]);
  });

  it("type_mismatch: 1 % of 10,000 values not of the type fire against a clean history", () => {
    const past = history({ "attr:amount:type_mismatch_rate": 0 });
    expect(alertKeys(run(scan(10_000, [amount(10_000, 0, 100)]), past))).toEqual(["type_mismatch:amount"]);
    expect(alertKeys(run(scan(60, [amount(60, 0, 1)]), past))).toEqual([]);
  });

  it("uniqueness: exact duplicate rows are found without id attributes", () => {
    const past = history({ duplicate_row_rate: 0 });
    const dup = run(scan(10_000, [amount(10_000, 0)], { duplicate_rows: 100 }), past);
    expect(alertKeys(dup)).toEqual(["uniqueness:"]);
    expect(dup.alerts[0]).toMatchObject({ metric: "duplicate_row_rate", observed: 0.01, adaptable: true });
    expect(dup.alerts[0]!.description).toMatch(/100 rows of trips \(1\.0%\) repeat an earlier row exactly/);
    expect(alertKeys(run(scan(10_000, [amount(10_000, 0)], { duplicate_rows: 2 }), past))).toEqual([]);
    // A table that always had a few duplicates keeps having them.
    const usual = history({ duplicate_row_rate: 0.02 });
    expect(alertKeys(run(scan(10_000, [amount(10_000, 0)], { duplicate_rows: 210 }), usual))).toEqual([]);
  });

  it("row_count_anomaly: identical batch sizes get a relative band, not ±10 rows", () => {
    const past = history({ row_count: 10_000 });
    const judge = (n: number) => run(scan(n, []), past);
    expect(alertKeys(judge(9_960))).toEqual([]);
    const short = judge(9_900);
    expect(alertKeys(short)).toEqual(["row_count_anomaly:"]);
    expect(short.alerts[0]!.expected).toEqual({ low: 9_950, high: 10_050 });
  });
});
