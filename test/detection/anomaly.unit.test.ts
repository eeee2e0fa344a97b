import { describe, expect, it } from "vitest";
import type { HistoryPoint } from "../../src/contracts/asset-monitor";
import {
  type AnomalyParams,
  DEFAULT_ANOMALY_PARAMS,
  detect,
  median,
  rateOfChange,
  robustZ,
  studentized,
  weeklySeasonal,
} from "../../src/detection";
import { normal, prng } from "../support/random";

const DAY = 86_400_000;
const T0 = Date.parse("2025-01-06T06:00:00.000Z"); // a Monday

function series(values: number[], excluded: (i: number) => boolean = () => false): HistoryPoint[] {
  return values.map((value, i) => ({
    job_id: `j${i}`,
    time: new Date(T0 + i * DAY).toISOString(),
    value,
    excluded: excluded(i),
  }));
}

const at = (i: number) => new Date(T0 + i * DAY).toISOString();
const params = (p: Partial<AnomalyParams> = {}): AnomalyParams => ({ ...DEFAULT_ANOMALY_PARAMS, ...p });

/** Share of anomalous verdicts on pure Gaussian noise, each value judged against the ones before it. */
function falsePositiveRate(judge: (past: number[], x: number) => boolean, seed: number, length: number): number {
  const r = prng(seed);
  const values = Array.from({ length }, () => 100 + 5 * normal(r));
  let judged = 0;
  let alarms = 0;
  for (let i = 7; i < values.length; i++) {
    judged++;
    if (judge(values.slice(0, i), values[i]!)) alarms++;
  }
  return alarms / judged;
}

describe("robust z-score (median/MAD)", () => {
  it("stays quiet on seeded Gaussian noise: under 1 % false alarms over 2000 verdicts", () => {
    let rate = 0;
    for (let seed = 1; seed <= 20; seed++) {
      rate += falsePositiveRate((past, x) => robustZ(past, x).anomalous, seed, 107) / 20;
    }
    expect(rate).toBeLessThan(0.01);
  });

  it("fires on a spike, with the band around the median", () => {
    const r = prng(3);
    const past = Array.from({ length: 20 }, () => 100 + 5 * normal(r));
    const quiet = robustZ(past, 104);
    const spike = robustZ(past, 160);
    expect(quiet).toMatchObject({ state: "ok", anomalous: false, strategy: "robust_z", window_size: 20 });
    expect(spike).toMatchObject({ state: "anomalous", anomalous: true });
    expect(spike.expected!.low).toBeLessThan(100);
    expect(spike.expected!.high).toBeGreaterThan(100);
    expect(spike.expected!.high).toBeLessThan(160);
    expect(spike.score).toBeGreaterThan(1);
    expect(quiet.score).toBeLessThan(1);
  });

  it("computes the band: median ± t-widened 3.5 × MAD/0.6745", () => {
    // median 12, |deviations| 2,0,1,1,0,1,0 → MAD 1; mean abs deviation 5/7 · 1.2533 < 1/0.6745
    const r = robustZ([10, 12, 11, 13, 12, 11, 12], 30);
    const half = studentized(3.5, 7) / 0.6745;
    expect(r.baseline).toBe(12);
    expect(r.expected!.low).toBeCloseTo(12 - half, 9);
    expect(r.expected!.high).toBeCloseTo(12 + half, 9);
    expect(studentized(3.5, 7)).toBeCloseTo(6.3937, 3);
    expect(studentized(3.5, 31)).toBeCloseTo(3.9249, 3);
    expect(studentized(3.5, 1e7)).toBeCloseTo(3.5, 5);
  });

  it("falls back to the mean absolute deviation when MAD is 0, and to the minimum change on a constant history", () => {
    const r = robustZ([100, 100, 100, 100, 100, 100, 104], 104.5);
    const half = studentized(3.5, 7) * 1.2533 * (4 / 7);
    expect(r.expected!.high).toBeCloseTo(100 + half, 9);
    expect(r.anomalous).toBe(false);
    expect(robustZ([100, 100, 100, 100, 100, 100, 104], 110).anomalous).toBe(true);
    const flat = [0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01];
    expect(robustZ(flat, 0.02, { min_abs_change: 0.02 }).anomalous).toBe(false);
    const jump = robustZ(flat, 0.04, { min_abs_change: 0.02 });
    expect(jump.anomalous).toBe(true);
    expect(jump.expected!.low).toBeCloseTo(-0.01, 12);
    expect(jump.expected!.high).toBeCloseTo(0.03, 12);
  });

  it("keeps a tiny table quiet with the minimum absolute change", () => {
    const rows = Array.from({ length: 20 }, (_, i) => [3, 4, 5, 4][i % 4]!);
    expect(robustZ(rows, 12, { min_abs_change: 0 }).anomalous).toBe(true);
    expect(robustZ(rows, 12, { min_abs_change: 10 })).toMatchObject({
      anomalous: false,
      expected: { low: -6, high: 14 },
    });
    expect(robustZ(rows, 15, { min_abs_change: 10 }).anomalous).toBe(true);
  });

  it("is training below min_history, and uses only the last window values", () => {
    expect(robustZ([1, 2, 3, 4, 5, 6], 1000)).toEqual({
      state: "training",
      anomalous: false,
      strategy: "robust_z",
      window_size: 6,
      needed: 7,
      score: 0,
    });
    expect(robustZ([1, 2, 3], 1000, { min_history: 3 }).state).toBe("anomalous");
    const old = Array.from({ length: 40 }, () => 1000);
    const recent = Array.from({ length: 30 }, (_, i) => 10 + (i % 3));
    const r = robustZ([...old, ...recent], 11);
    expect(r).toMatchObject({ anomalous: false, window_size: 30, baseline: 11 });
  });
});

describe("relative rate of change", () => {
  const past = [100, 101, 99, 100, 102, 98, 100];

  it("stays quiet on seeded noise and fires beyond max_change of the previous value", () => {
    let rate = 0;
    for (let seed = 1; seed <= 20; seed++) {
      rate += falsePositiveRate((p, x) => rateOfChange(p, x).anomalous, seed, 107) / 20;
    }
    expect(rate).toBe(0);
    expect(rateOfChange(past, 140)).toMatchObject({
      state: "ok",
      strategy: "rate_of_change",
      expected: { low: 50, high: 150 },
      baseline: 100,
    });
    expect(rateOfChange(past, 160).anomalous).toBe(true);
    expect(rateOfChange(past, 45).anomalous).toBe(true);
    expect(rateOfChange(past, 120, { max_change: 0.1 }).anomalous).toBe(true);
  });

  it("keeps a tiny table quiet and trains like the others", () => {
    expect(rateOfChange([4, 4, 4, 4, 4, 4, 4], 12, { min_abs_change: 10 }).anomalous).toBe(false);
    expect(rateOfChange([4, 4, 4, 4, 4, 4, 4], 15, { min_abs_change: 10 }).anomalous).toBe(true);
    expect(rateOfChange([100, 100], 1000).state).toBe("training");
  });
});

describe("weekly-seasonal baseline", () => {
  // Mondays carry five times the rows of the other days.
  const r = prng(11);
  const values = Array.from({ length: 35 }, (_, i) => (i % 7 === 0 ? 500 : 100) + Math.round(3 * normal(r)));
  const history = series(values);
  const monday = at(35);

  it("judges a Monday against past Mondays", () => {
    const p = { window: 60 };
    expect(weeklySeasonal(history, 500, monday, p)).toMatchObject({
      state: "ok",
      strategy: "weekly_seasonal",
      window_size: 5,
    });
    expect(weeklySeasonal(history, 100, monday, p).anomalous).toBe(true);
    // Without the season, the usual Monday is the anomaly.
    expect(robustZ(values, 500, p).anomalous).toBe(true);
    // A Tuesday at the Monday level is not normal.
    expect(weeklySeasonal(history, 500, at(36), p).anomalous).toBe(true);
  });

  it("looks back seasonal_weeks only, and falls back to robust_z with too few same-slot points", () => {
    const r2 = weeklySeasonal(history, 500, monday, { window: 60, seasonal_weeks: 2, seasonal_min_points: 3 });
    expect(r2.strategy).toBe("robust_z");
    expect(r2.anomalous).toBe(true);
    const otherHour = new Date(Date.parse(monday) + 3_600_000).toISOString();
    expect(weeklySeasonal(history, 500, otherHour, { window: 60 }).strategy).toBe("robust_z");
    expect(weeklySeasonal(history.slice(0, 5), 500, monday).state).toBe("training");
  });
});

describe("excluded points stay out of the baseline", () => {
  const normalDays = [100, 98, 103, 101, 99, 102, 100, 97];

  it("a bad scan followed by another bad scan still alerts", () => {
    const history = series([...normalDays, 40], (i) => i === 8);
    const strict = detect(history, 41, "j9", at(9), params());
    expect(strict.anomalous).toBe(true);
    expect(strict.window_size).toBe(8);
    // rate_of_change compares with the previous non-excluded point, 97, not with 40.
    const roc = detect(history, 41, "j9", at(9), params({ strategy: "rate_of_change" }));
    expect(roc).toMatchObject({ anomalous: true, baseline: 97, from: at(7), to: at(7) });
    // Had the bad point been kept, the second one would have looked normal.
    const kept = detect(series([...normalDays, 40]), 41, "j9", at(9), params({ strategy: "rate_of_change" }));
    expect(kept.anomalous).toBe(false);
  });

  it("once the user accepts the new level (excluded flipped back), it becomes the baseline", () => {
    const shifted = [...normalDays, 40, 41, 39, 40, 42, 40, 41, 40];
    const flagged = series(shifted, (i) => i >= 8);
    expect(detect(flagged, 40, "jn", at(16), params({ window: 8 })).anomalous).toBe(true);
    const accepted = series(shifted);
    const r = detect(accepted, 40, "jn", at(16), params({ window: 8 }));
    expect(r).toMatchObject({ anomalous: false, baseline: 40, from: at(8), to: at(15) });
  });

  it("ignores points of the job being evaluated, and non-finite values", () => {
    const history = series([...normalDays, 40]);
    history[8]!.job_id = "again";
    history.push({ job_id: "x", time: at(9), value: Number.NaN, excluded: false });
    const r = detect(history, 40, "again", at(8), params());
    expect(r).toMatchObject({ anomalous: true, window_size: 8, baseline: median(normalDays) });
  });
});
