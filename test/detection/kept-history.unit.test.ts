/**
 * The metric history an AssetMonitor keeps in memory between scans (detection/kept-history.ts):
 * trimmed as storage's read trims it, its points made afresh for each caller, and given up when it
 * grows past what an object should hold. history-store.test.ts checks it against storage's read.
 */
import { describe, expect, it } from "vitest";
import { KeptHistory, MAX_KEPT_POINTS } from "../../src/detection/kept-history";

const timeOf = (k: number) => new Date(Date.UTC(2026, 0, 1) + k * 60_000).toISOString();

describe("the kept metric history", () => {
  it("keeps each metric's points from its perMetric-th newest time on, excluded ones marked", () => {
    const kept = new KeptHistory(3, []);
    for (let k = 0; k < 6; k++) expect(kept.add("m", `job_${k}`, timeOf(k), k * 10, k === 4)).toBe(true);
    expect(kept.toHistory().m).toEqual([
      { job_id: "job_3", time: timeOf(3), value: 30, excluded: false },
      { job_id: "job_4", time: timeOf(4), value: 40, excluded: true },
      { job_id: "job_5", time: timeOf(5), value: 50, excluded: false },
    ]);
    expect(kept.points).toBe(3);
  });

  it("keeps the points tied with a metric's cut time that storage's read gave it", () => {
    const kept = new KeptHistory(2, []);
    // As read: the cut time (1) holds two points of two jobs.
    kept.addRead("m", "a", timeOf(1), 1, false);
    kept.addRead("m", "b", timeOf(1), 2, false);
    kept.addRead("m", "c", timeOf(2), 3, false);
    // One more scan: the 2nd newest is now time 2, so both points of time 1 go.
    expect(kept.add("m", "d", timeOf(3), 4, false)).toBe(true);
    expect(kept.toHistory().m?.map((p) => p.job_id)).toEqual(["c", "d"]);
  });

  it("refuses a point not newer than the metric's newest, and adds nothing then", () => {
    const kept = new KeptHistory(5, []);
    kept.add("m", "a", timeOf(5), 1, false);
    expect(kept.add("m", "late", timeOf(4), 2, false)).toBe(false);
    expect(kept.add("m", "tie", timeOf(5), 2, false)).toBe(false);
    expect(kept.toHistory().m?.map((p) => p.job_id)).toEqual(["a"]);
    expect(kept.points).toBe(1);
  });

  it("leaves out a share point from before its prefix's change point", () => {
    const kept = new KeptHistory(5, [{ prefix: "attr:c:value:", since: timeOf(10) }]);
    expect(kept.add("attr:c:value:x", "a", timeOf(9), 1, false)).toBe(true);
    kept.addRead("attr:c:value:y", "a", timeOf(9), 1, false);
    kept.add("attr:c:value:x", "b", timeOf(10), 2, false);
    kept.add("attr:d:mean", "a", timeOf(9), 3, false);
    expect(kept.toHistory()).toEqual({
      "attr:c:value:x": [{ job_id: "b", time: timeOf(10), value: 2, excluded: false }],
      "attr:d:mean": [{ job_id: "a", time: timeOf(9), value: 3, excluded: false }],
    });
  });

  it("keeps -0 as storage gives it back, 0", () => {
    const kept = new KeptHistory(5, []);
    kept.add("m", "a", timeOf(1), -0, false);
    expect(Object.is(kept.toHistory().m![0]!.value, 0)).toBe(true);
  });

  it("hands each caller points of its own", () => {
    const kept = new KeptHistory(5, []);
    kept.add("m", "a", timeOf(1), 1, false);
    const first = kept.toHistory();
    first.m![0]!.value = 99;
    first.m!.push({ job_id: "x", time: timeOf(2), value: 0, excluded: false });
    expect(kept.toHistory().m).toEqual([{ job_id: "a", time: timeOf(1), value: 1, excluded: false }]);
  });

  it("is oversized past MAX_KEPT_POINTS points, or past four windows of scans", () => {
    const wide = new KeptHistory(2, []);
    const metrics = Math.ceil(MAX_KEPT_POINTS / 2) + 1;
    for (let k = 0; k < 2; k++) {
      for (let m = 0; m < metrics; m++) wide.add(`m${m}`, `job_${k}`, timeOf(k), m, false);
    }
    expect(wide.points).toBe(2 * metrics);
    expect(wide.oversized).toBe(true);

    // Scans that trimming left in no metric still hold their row of the table of scans.
    const long = new KeptHistory(2, []);
    for (let k = 0; k < 8; k++) long.add("m", `job_${k}`, timeOf(k), k, false);
    expect(long.points).toBe(2);
    expect(long.oversized).toBe(false);
    long.add("m", "job_8", timeOf(8), 8, false);
    expect(long.oversized).toBe(true);
  });
});
