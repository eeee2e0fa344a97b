/**
 * Category shares early in an asset's life, on real data (the detection benchmark's birdstrikes,
 * one scan a year): a year of strikes moves its airlines' and states' shares 3–4 times as far as
 * binomial sampling of its ~800 rows would. Judged by sampling alone, the first scan with 7 past
 * scans cried wolf (1997: "FEDEX EXPRESS" 0.93% -> 4.7%; 2000: "ALOHA AIRLINES" 3.8% -> 1.0%,
 * "Tennessee" 4.5% -> 7.4%). Each value's band now takes the column's own dispersion between its
 * past scans and the uncertainty of their median; a real shift after the same short history alerts.
 */
import { describe, expect, it } from "vitest";
import birdstrikesCsv from "../../node_modules/vega-datasets/data/birdstrikes.csv?raw";
import type { AttributeProfile } from "../../src/contracts/profile";
import { evaluate, type MetricHistory, type PolicyAlert } from "../../src/detection";
import { countDispersion } from "../../src/detection/stats";
import { prng } from "../support/random";
import { record } from "./fixtures";

const COLUMNS = { operator: "Aircraft Airline Operator", origin_state: "Origin State" } as const;
type Column = keyof typeof COLUMNS;

/** Per year, the values of the two codes (every strike of the year). */
function years(): Map<string, Record<Column, string[]>> {
  const [header, ...lines] = birdstrikesCsv.trim().split(/\r?\n/);
  const names = header!.split(",");
  const date = names.indexOf("Flight Date");
  const at = { operator: names.indexOf(COLUMNS.operator), origin_state: names.indexOf(COLUMNS.origin_state) };
  const out = new Map<string, Record<Column, string[]>>();
  for (const line of lines) {
    const cells = line.split(",");
    const year = cells[date]!.slice(0, 4);
    const y = out.get(year) ?? { operator: [], origin_state: [] };
    for (const c of Object.keys(COLUMNS) as Column[]) if (cells[at[c]]) y[c].push(cells[at[c]]!);
    out.set(year, y);
  }
  return out;
}

/** A code's profile with every value listed (as the file profiler lists up to 256). */
function code(name: string, values: readonly string[]): AttributeProfile {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return {
    name,
    inferred_type: "string",
    count: values.length,
    nulls: 0,
    empties: 0,
    distinct: counts.size,
    distinct_exact: true,
    top_values: [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count),
    type_counts: { string: values.length },
    type_mismatches: 0,
    patterns: [],
  };
}

/** Scans one year after another from `from`, each judged against the ones before; the alerts per scan. */
function replay(
  data: Map<string, Record<Column, string[]>>,
  from: number,
  edit?: (y: Record<Column, string[]>) => void,
) {
  let history: MetricHistory = {};
  const alerts: PolicyAlert[][] = [];
  for (let year = from; year < from + 8; year++) {
    const y = { ...data.get(String(year))! };
    if (year === from + 7) edit?.(y);
    const job = { job_id: `y${year}`, scan_time: `${year}-12-31T00:00:00.000Z` };
    const evaluation = evaluate({
      asset: { id: 1, name: "birdstrikes", type: "S3" },
      ...job,
      profile: {
        row_count: Math.max(y.operator.length, y.origin_state.length),
        schema: [],
        attributes: [code("operator", y.operator), code("origin_state", y.origin_state)],
        sampled: false,
      },
      history,
      kinds: { operator: "code", origin_state: "code" },
    });
    alerts.push(evaluation.alerts);
    history = record(history, job, evaluation);
  }
  return alerts;
}

const drift = (alerts: PolicyAlert[]) =>
  alerts.filter((a) => a.policy === "distribution_drift").map((a) => `${a.attribute}: ${a.metric_value}`);

describe("category shares with a short history of real, lively data", () => {
  const data = years();

  it.each([1990, 1991, 1993, 1994])("clean years from %i: scans 1-8 raise no distribution_drift", (from) => {
    const alerts = replay(data, from);
    expect(alerts.flatMap(drift)).toEqual([]);
  });

  it("a state that jumps from ~5 % to 40 % after the same 7 scans alerts, and is named", () => {
    // 2000 with enough of its other states' strikes written as Tennessee (4.5 % of 1993-1999) for 40 %.
    const alerts = replay(data, 1993, (y) => {
      const target = Math.round(0.4 * y.origin_state.length);
      let have = y.origin_state.filter((v) => v === "Tennessee").length;
      y.origin_state = y.origin_state.map((v) => (v !== "Tennessee" && have < target && ++have ? "Tennessee" : v));
    });
    const last = alerts.at(-1)!.filter((a) => a.policy === "distribution_drift");
    expect(last.map((a) => a.attribute)).toEqual(["origin_state"]);
    expect(last[0]!.values?.find((v) => v.value === "Tennessee")?.change).toBe("up");
    expect(last[0]!.metric_value).toMatch(/"Tennessee" 4\.5% -> 40\.0%/);
  });

  it("a new airline taking 10 % after the same 7 scans alerts (new values are judged on their own)", () => {
    const alerts = replay(data, 1990, (y) => {
      y.operator = y.operator.map((v, i) => (i % 10 === 0 ? "ACME AIR" : v));
    });
    const last = alerts.at(-1)!.filter((a) => a.policy === "distribution_drift");
    expect(last.map((a) => a.attribute)).toEqual(["operator"]);
    expect(last[0]!.values?.some((v) => v.value === "ACME AIR" && v.change === "new")).toBe(true);
  });
});

describe("countDispersion", () => {
  /** `rows` samples of n values from fixed shares (multinomial), or from shares that wobble per sample. */
  function table(rows: number, n: number, wobble: number, seed: number): number[][] {
    const r = prng(seed);
    const base = [0.5, 0.3, 0.15, 0.05];
    return Array.from({ length: rows }, () => {
      const shares = base.map((p) => p * Math.exp(wobble * (r() - 0.5)));
      const sum = shares.reduce((s, p) => s + p, 0);
      const counts = base.map(() => 0);
      for (let i = 0; i < n; i++) {
        let u = r() * sum;
        let k = 0;
        while (k < shares.length - 1 && u >= shares[k]!) u -= shares[k++]!;
        counts[k]!++;
      }
      return counts;
    });
  }

  it("is about 1 for samples of one distribution and well above for batches whose shares move", () => {
    const fixed = countDispersion(table(30, 1_000, 0, 1));
    expect(fixed.df).toBe(29 * 3);
    expect(fixed.phi).toBeGreaterThan(0.6);
    expect(fixed.phi).toBeLessThan(1.5);
    expect(countDispersion(table(30, 1_000, 0.6, 2)).phi).toBeGreaterThan(3);
  });

  it("has nothing to estimate from one sample or one category", () => {
    expect(countDispersion([[10, 20, 30]])).toEqual({ phi: 1, df: 0 });
    expect(countDispersion([[10], [20]])).toEqual({ phi: 1, df: 0 });
    expect(
      countDispersion([
        [10, 0],
        [20, 0],
      ]),
    ).toEqual({ phi: 1, df: 0 });
  });
});
