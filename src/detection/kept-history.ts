/**
 * An AssetMonitor's metric history as the detectors read it (HistoryStore.history()), kept in the
 * object's memory between scans so that a scan does not read back the points of the scans before
 * it. Compact: each metric holds its values and, per value, the index of its scan in a table of
 * scans (job id and time, held once), negated (~index) when the point is excluded; the points the
 * detectors see are made afresh by each toHistory(), so no caller shares them.
 *
 * Memory: 1.45 MB for an asset of 540 metrics with 120 points each (measured in Node, metric names
 * and the table of scans included), where the same points as objects take 5 MB. Several objects
 * may share an isolate's 128 MB, so a history of more than MAX_KEPT_POINTS points, or whose table
 * of scans holds more than four windows (scans that trimming no longer leaves in any metric), is
 * not kept: HistoryStore reads it from storage again.
 */

import type { HistoryPoint } from "../contracts/asset-monitor";
import type { MetricHistory } from "./types";

/** Share metrics under `prefix` count from `since` on (an adopted level). */
export type ChangePoint = { prefix: string; since: string };

/** Points past which a history is read from storage on every scan instead of kept (~3.4 MB). */
export const MAX_KEPT_POINTS = 150_000;

interface Series {
  values: number[];
  /** Per value: its scan's index in the table of scans, or ~index when the point is excluded. */
  scans: number[];
}

export class KeptHistory {
  private readonly jobs: string[] = [];
  private readonly times: string[] = [];
  private readonly scanIndex = new Map<string, number>();
  private readonly series = new Map<string, Series>();
  private held = 0;

  /**
   * @param perMetric each metric keeps the points from its perMetric-th newest time on (ties kept)
   * @param changes the change points: a share point from before its prefix's is left out
   */
  constructor(
    private readonly perMetric: number,
    private readonly changes: readonly ChangePoint[],
  ) {}

  /** Points held, over all metrics. */
  get points(): number {
    return this.held;
  }

  /** Whether the history has outgrown what an object should hold in memory. */
  get oversized(): boolean {
    return this.held > MAX_KEPT_POINTS || this.jobs.length > 4 * this.perMetric;
  }

  /**
   * Adds a recorded scan's point after the metric's others and trims the metric as storage's read
   * does; false (nothing added) when the point is not newer than the metric's newest (a replay, a
   * backfill, a tie, whose order among the others storage does not fix).
   */
  add(metric: string, jobId: string, time: string, value: number, excluded: boolean): boolean {
    if (beforeChange(this.changes, metric, time)) return true;
    const s = this.seriesOf(metric);
    const n = s.values.length;
    if (n > 0 && this.times[scanOf(s.scans[n - 1]!)]! >= time) return false;
    // As storage gives it back: -0 is written as 0 (the JSON of recordScan). (Its JSON parse may
    // also round an extreme value such as 1e-300 by an ulp, which is kept as measured.)
    this.push(s, jobId, time, value + 0, excluded);
    if (n + 1 > this.perMetric) {
      const cut = this.times[scanOf(s.scans[n + 1 - this.perMetric]!)]!;
      let older = 0;
      while (this.times[scanOf(s.scans[older]!)]! < cut) older++;
      if (older > 0) {
        s.values.splice(0, older);
        s.scans.splice(0, older);
        this.held -= older;
      }
    }
    return true;
  }

  /**
   * Adds a point read from storage, in the order of its read (by metric, then time): the read has
   * cut each metric already, ties included, so nothing is checked or trimmed.
   */
  addRead(metric: string, jobId: string, time: string, value: number, excluded: boolean): void {
    if (!beforeChange(this.changes, metric, time)) this.push(this.seriesOf(metric), jobId, time, value, excluded);
  }

  /** Every metric's points, oldest first, as new objects. */
  toHistory(): MetricHistory {
    const history: MetricHistory = {};
    const { jobs, times } = this;
    for (const [metric, s] of this.series) {
      const n = s.values.length;
      if (n === 0) continue;
      const points: HistoryPoint[] = new Array(n);
      for (let i = 0; i < n; i++) {
        const ref = s.scans[i]!;
        const k = scanOf(ref);
        points[i] = { job_id: jobs[k]!, time: times[k]!, value: s.values[i]!, excluded: ref < 0 };
      }
      history[metric] = points;
    }
    return history;
  }

  private seriesOf(metric: string): Series {
    let s = this.series.get(metric);
    if (s === undefined) {
      s = { values: [], scans: [] };
      this.series.set(metric, s);
    }
    return s;
  }

  private push(s: Series, jobId: string, time: string, value: number, excluded: boolean): void {
    const scan = this.scanFor(jobId, time);
    s.values.push(value);
    s.scans.push(excluded ? ~scan : scan);
    this.held++;
  }

  private scanFor(jobId: string, time: string): number {
    const key = `${jobId}\u0000${time}`;
    let k = this.scanIndex.get(key);
    if (k === undefined) {
      k = this.jobs.length;
      this.jobs.push(jobId);
      this.times.push(time);
      this.scanIndex.set(key, k);
    }
    return k;
  }
}

/** The scan index of a point's reference (excluded points hold it negated). */
function scanOf(ref: number): number {
  return ref < 0 ? ~ref : ref;
}

/** Whether a share metric's point comes from before its change point (left out of the baselines). */
export function beforeChange(changes: readonly ChangePoint[], metric: string, time: string): boolean {
  return changes.some((c) => time < c.since && metric.startsWith(c.prefix));
}
