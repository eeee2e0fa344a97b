/**
 * A fence a quantile sketch lands on in some scans and beside it in others (issue 41, the flights
 * history): `distance` has ~0.75 % of its values below 89, its baseline's 1st percentile, and 89
 * itself holds ~0.25 %. The profile's KLL p1 is 89 on some days and a value on either side on others.
 * Past scans and this one are measured by one rule, so those days raise no tail alert, and a text
 * never states a share beyond what the quantiles prove.
 */
import { describe, expect, it } from "vitest";
import { QUANTILE_POINTS } from "../../src/contracts/profile";
import { evaluate, type MetricHistory, type PolicyAlert } from "../../src/detection";
import { tailShares } from "../../src/detection/policies/value-range";
import { alertDetails } from "../../src/incidents/monitor-store";
import { KllSketch } from "../../src/scan/profiler/kll";
import { disagreements } from "../support/alert-consistency";
import { prng } from "../support/random";
import { profileRows, record } from "./fixtures";

const FLIGHTS = { id: 9, name: "flights", type: "CSV" };
const ROWS = 10_000;

/**
 * One day of distances: 0.75 % in 31..88, 0.25 % exactly 89, 0.86 % exactly 733 (the busiest route:
 * the most frequent value, under the 1 % an atom is recorded at), the rest 90..2500 (whole miles).
 */
function distances(day: number, below = 0.0075): number[] {
  const rand = prng(900 + day);
  return Array.from({ length: ROWS }, () => {
    const u = rand();
    if (u < below) return 31 + Math.floor(rand() * 58);
    if (u < below + 0.0025) return 89;
    if (u < below + 0.0025 + 0.0086) return 733;
    return 90 + Math.floor(2410 * rand());
  });
}

/** The profile of a day, its quantiles read off the profiler's KLL sketch as the service reads them. */
function profile(values: number[]) {
  const p = profileRows(
    [{ name: "distance", type: "integer" }],
    values.map((distance) => ({ distance })),
  );
  const sketch = new KllSketch();
  for (const v of values) sketch.add(v);
  p.attributes[0]!.quantiles = sketch.quantiles(QUANTILE_POINTS);
  return p;
}

function judge(history: MetricHistory, day: number, values: number[]) {
  const job = { job_id: `d${day}`, scan_time: new Date(Date.UTC(2001, 0, 1 + day)).toISOString() };
  const evaluation = evaluate({
    asset: FLIGHTS,
    ...job,
    profile: profile(values),
    history,
    kinds: { distance: "quantity" },
    overrides: { value_range: { params: { stats: ["min", "max"] } } },
  });
  return { evaluation, history: record(history, job, evaluation), p1: profile(values).attributes[0]!.quantiles![1]! };
}

const tails = (alerts: PolicyAlert[]) => alerts.filter((a) => /:tail_(below|above)$/.test(a.metric));
const asApi = (a: PolicyAlert) => ({
  type: a.policy,
  description: a.description,
  metric: a.metric,
  details: alertDetails(a),
});

describe("a tail fence a sketch's quantile lands on some days", () => {
  it("clean days raise no tail alert, whether the day's p1 is on the fence or beside it", () => {
    let history: MetricHistory = {};
    const p1s = new Set<string>();
    const alerts: PolicyAlert[] = [];
    for (let day = 0; day < 40; day++) {
      const r = judge(history, day, distances(day));
      history = r.history;
      p1s.add(r.p1 === 89 ? "on" : r.p1 < 89 ? "below" : "above");
      if (day >= 10) alerts.push(...tails(r.evaluation.alerts));
    }
    // The sketch did land on the fence and beside it: the case this pins.
    expect(p1s).toContain("on");
    expect(p1s.size).toBeGreaterThan(1);
    expect(alerts.map((a) => a.description)).toEqual([]);
  });

  it("a real tail still alerts, and its text states the share within what the quantiles prove", () => {
    let history: MetricHistory = {};
    for (let day = 0; day < 20; day++) history = judge(history, day, distances(day)).history;
    // 4 % of the distances below 89: a tail, measured by the same rule.
    const values = distances(20, 0.04);
    const { evaluation } = judge(history, 20, values);
    const [tail] = tails(evaluation.alerts);
    expect(tail?.metric).toBe("attr:distance:tail_below");
    const m =
      /^About ([\d.]+)% \(its quantiles put it at ([\d.]+)% to ([\d.]+)%, their rank error included\) of the values/.exec(
        tail!.description,
      );
    expect(m, tail!.description).not.toBeNull();
    const [estimate, low, high] = m!.slice(1).map((x) => Number(x) / 100) as [number, number, number];
    const truth = values.filter((v) => v < 89).length / values.length;
    expect(low).toBeLessThanOrEqual(estimate);
    expect(estimate).toBeLessThanOrEqual(high);
    expect(low).toBeLessThanOrEqual(truth);
    expect(truth).toBeLessThanOrEqual(high);
    expect(disagreements(asApi(tail!))).toEqual([]);
  });

  it("tailShares: one rule on and beside a fence; its own value is never a tail", () => {
    const q = [31, 89, 200, 300, 500, 800, 1100, 1500, 1900, 2400, 2500];
    // On the fence, its value's share unknown (under 1 %): the CDF there, as beside it.
    const on = tailShares(q, 89, 2400, { known: () => 0, bound: () => 0.0086 }).below;
    expect(on).toEqual({ share: 0.01, low: 0.01 - 0.0086, high: 0.01 });
    const beside = tailShares([31, 88, ...q.slice(2)], 89, 2400).below;
    expect(beside.share).toBeCloseTo(0.01 + (0.04 * 1) / 112, 12);
    expect([beside.low, beside.high]).toEqual([0.01, 0.05]);
    // A recorded point mass on the fence (tolls: 0 in 71.5 % of the rows) is taken out: 90 % to 95 %
    // are at or below 0 (its last quantile on 0 is the 90th percentile), so 18.5 % to 23.5 % below.
    const tolls = [-5.76, -5.76, -5.76, -5.76, 0, 0, 0, 0, 5.76, 5.76, 20];
    const zeros = (v: number) => (v === 0 ? 0.715 : 0);
    const zero = tailShares(tolls, 0, 20, { known: zeros, bound: zeros }).below;
    expect(zero.share).toBeCloseTo(0.21, 12);
    expect(zero.low).toBeCloseTo(0.185, 12);
    expect(zero.high).toBe(0.25);
    // Nothing is above the maximum.
    expect(tailShares(tolls, 0, 20).above).toEqual({ share: 0, low: 0, high: 0 });
  });
});
