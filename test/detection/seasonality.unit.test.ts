import { describe, expect, it } from "vitest";
import type { HistoryPoint } from "../../src/contracts/asset-monitor";
import { type AssetRef, DEFAULT_ANOMALY_PARAMS, detect } from "../../src/detection";
import { alertDetails } from "../../src/incidents/monitor-store";
import { disagreements } from "../support/alert-consistency";
import { normal, prng } from "../support/random";
import { type Cell, profileRows, ReplayMonitor } from "./fixtures";

const DAY = 86_400_000;
/** A Wednesday: ReplayMonitor's first scan. */
const START = Date.parse("2025-01-01T06:00:00.000Z");
const isSaturday = (day: number) => new Date(START + day * DAY).getUTCDay() === 6;

const TRIPS: AssetRef = { id: 41, name: "trips", type: "bigquery" };
const COLUMNS = [
  { name: "distance", type: "number" as const },
  { name: "carrier", type: "string" as const },
];
const CARRIERS = ["AA", "UA", "DL", "WN", "B6", "AS"];

/**
 * Day `day` of a daily table with a weekly cycle: about 1,000 trips a day, 600 on Saturdays, each
 * with its distance and carrier; the same every week but for sampling noise.
 */
function tripsOf(day: number, saturdayShift = 0) {
  const r = prng(4100 + day);
  const shift = isSaturday(day) ? saturdayShift : 0;
  const n = (isSaturday(day) ? 600 : 1000) + Math.floor(r() * 11) - 5;
  const rows: Array<Record<string, Cell>> = [];
  for (let k = 0; k < n; k++) {
    rows.push({
      distance: Math.round(Math.exp(6.4 + shift + 0.6 * normal(r))),
      carrier: CARRIERS[Math.floor(r() * CARRIERS.length)]!,
    });
  }
  return profileRows(COLUMNS, rows);
}

describe("a daily table with a weekly cycle", () => {
  it("judges each day against the same weekday once three weeks show the cycle: no alert after", () => {
    const monitor = new ReplayMonitor(TRIPS, START);
    const alerted: number[] = [];
    for (let day = 0; day < 56; day++) {
      const e = monitor.judge(tripsOf(day));
      if (e.alerts.length > 0) alerted.push(day);
      expect(e.alerts.map((a) => a.policy).filter((p) => p !== "row_count_anomaly")).toEqual([]);
    }
    // The Saturdays of the first three weeks (day 3 still training) stand out from the days around
    // them; from the fourth on, each is judged against the Saturdays before it (which those alerts
    // had kept out of the baseline: the cycle is found in the history as measured).
    expect(alerted).toEqual([10, 17]);
  });

  it("longer trips on Saturdays: the distances' shape and mean are judged against past Saturdays", () => {
    const monitor = new ReplayMonitor(TRIPS, START);
    const alerts: string[] = [];
    for (let day = 0; day < 59; day++) {
      for (const a of monitor.judge(tripsOf(day, 0.4)).alerts) alerts.push(`${day} ${a.policy}:${a.attribute ?? ""}`);
    }
    // The Saturdays before the cycle shows are flagged (by the row count, the mean, the tails, the
    // shape); from the fourth on (day 24), none: 8 weeks hold 5 more Saturdays.
    expect(alerts.filter((a) => Number(a.split(" ")[0]) >= 24)).toEqual([]);
    expect(alerts).toContain("17 distribution_drift:distance");
    expect(alerts).toContain("17 value_range:distance");
    // A Saturday whose trips are as long as a weekday's is a change of its phase.
    expect(isSaturday(59)).toBe(true);
    const weekdayLike = monitor.peek(tripsOf(59, 0)).evaluation.alerts;
    expect(weekdayLike.find((a) => a.policy === "value_range")?.strategy).toBe("seasonal");
  });

  it("a Saturday's volume on a Tuesday is an anomaly, and says which baseline judged it", () => {
    const monitor = new ReplayMonitor(TRIPS, START);
    for (let day = 0; day < 41; day++) monitor.judge(tripsOf(day));
    // Day 41 is a Tuesday: 600 rows are a Saturday's level, not a Tuesday's.
    expect(new Date(START + 41 * DAY).getUTCDay()).toBe(2);
    const saturdayLike = tripsOf(45);
    expect(isSaturday(45)).toBe(true);
    const alert = monitor.peek(saturdayLike).evaluation.alerts.find((a) => a.policy === "row_count_anomaly");
    expect(alert).toMatchObject({ strategy: "seasonal" });
    expect(alert!.description).toContain("a weekly cycle");
    expect(alert!.description).toContain("same phase (Tuesday)");
    expect((alert!.expected as { low: number }).low).toBeGreaterThan(900);
    const shown = { type: alert!.policy, description: alert!.description, metric: alert!.metric };
    expect(disagreements({ ...shown, details: alertDetails(alert!) })).toEqual([]);
  });
});

/** A history of one value a day, `time` of day i from `start`, every `step` ms. */
function daily(values: readonly number[], step = DAY, start = START): HistoryPoint[] {
  return values.map((value, i) => ({
    job_id: `j${i}`,
    time: new Date(start + i * step).toISOString(),
    value,
    excluded: false,
  }));
}

describe("seasonal baseline of robust_z", () => {
  const r = prng(7);
  // Weekends at 60, weekdays at 100, noise of 2.
  const weekly = Array.from({ length: 56 }, (_, i) => {
    const d = new Date(START + i * DAY).getUTCDay();
    return (d === 0 || d === 6 ? 60 : 100) + 2 * normal(r);
  });
  const p = DEFAULT_ANOMALY_PARAMS;
  const at = (i: number, step = DAY) => new Date(START + i * step).toISOString();

  it("finds a weekly cycle by the scans' weekdays and centres the band on the phase's level", () => {
    // Day 59 is a Saturday.
    expect(new Date(START + 59 * DAY).getUTCDay()).toBe(6);
    const saturday = detect(daily(weekly), 61, "x", at(59), p);
    expect(saturday).toMatchObject({ strategy: "seasonal", anomalous: false, season: { cycle: "weekly" } });
    expect(saturday.season!.phase).toBe("Saturday");
    expect(saturday.baseline!).toBeCloseTo(60, -1);
    // The same value on a Monday is far below its phase.
    expect(detect(daily(weekly), 61, "x", at(61), p)).toMatchObject({ strategy: "seasonal", anomalous: true });
  });

  it("finds the same cycle by the order of scans when a backfill scans many days within the hour", () => {
    // Scan 52 is a Saturday's batch.
    expect(isSaturday(52)).toBe(true);
    const fast = daily(weekly.slice(0, 52), 20_000);
    const r1 = detect(fast, 61, "x", at(52, 20_000), p);
    expect(r1).toMatchObject({ strategy: "seasonal", anomalous: false, season: { cycle: "scans" } });
    expect(detect(fast, 100, "x", at(52, 20_000), p).anomalous).toBe(true);
  });

  it("needs three cycles, and none with seasonal_weeks below three", () => {
    expect(detect(daily(weekly.slice(0, 20)), 61, "x", at(20), p).strategy).toBe("robust_z");
    expect(detect(daily(weekly), 61, "x", at(59), { ...p, seasonal_weeks: 2 }).strategy).toBe("robust_z");
  });

  it("takes no cycle out of noise: under 0.1 % of verdicts on seeded Gaussian noise", () => {
    let seasonal = 0;
    let judged = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const g = prng(seed);
      const noise = daily(Array.from({ length: 90 }, () => 100 + 5 * normal(g)));
      for (let i = 21; i < 90; i++) {
        judged++;
        if (detect(noise.slice(0, i), 100, "x", noise[i]!.time, p).strategy === "seasonal") seasonal++;
      }
    }
    expect(seasonal / judged).toBeLessThan(0.001);
  });
});
