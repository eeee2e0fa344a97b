/**
 * Distances between distributions, for the drift policies, and the baseline distributions they
 * are measured against, rebuilt from the share/quantile points of the metric history.
 */
import { QUANTILE_POINTS } from "../../scan/profile";
import { baselinePoints, median } from "./anomaly";
import type { MetricHistory } from "./types";

/** Keeps empty bins from making a divergence infinite; the usual PSI smoothing. */
const EPSILON = 1e-4;

function smooth(p: readonly number[]): number[] {
  const clamped = p.map((v) => Math.max(v, EPSILON));
  const sum = clamped.reduce((s, v) => s + v, 0);
  return clamped.map((v) => v / sum);
}

/**
 * Population stability index Σ (a − e)·ln(a / e) over aligned bins. Rule of thumb: below 0.1
 * stable, 0.1–0.2 moderate, above 0.2 a significant shift.
 */
export function psi(expected: readonly number[], actual: readonly number[]): number {
  const e = smooth(expected);
  const a = smooth(actual);
  return e.reduce((s, ei, i) => s + (a[i]! - ei) * Math.log(a[i]! / ei), 0);
}

/** Jensen-Shannon divergence in bits: 0 identical, 1 disjoint. */
export function jensenShannon(p: readonly number[], q: readonly number[]): number {
  const sp = sumTo1(p);
  const sq = sumTo1(q);
  let d = 0;
  for (let i = 0; i < sp.length; i++) {
    const m = (sp[i]! + sq[i]!) / 2;
    if (sp[i]! > 0) d += 0.5 * sp[i]! * Math.log2(sp[i]! / m);
    if (sq[i]! > 0) d += 0.5 * sq[i]! * Math.log2(sq[i]! / m);
  }
  return Math.min(1, Math.max(0, d));
}

function sumTo1(p: readonly number[]): number[] {
  const sum = p.reduce((s, v) => s + Math.max(0, v), 0);
  return sum > 0 ? p.map((v) => Math.max(0, v) / sum) : p.map(() => 1 / p.length);
}

/**
 * CDF at `t` of a distribution known by its quantiles at QUANTILE_POINTS: the largest probability
 * whose quantile is ≤ t, interpolated linearly between distinct quantiles.
 */
export function quantileCdf(quantiles: readonly number[], t: number): number {
  const n = quantiles.length;
  if (n === 0 || t < quantiles[0]!) return 0;
  if (t >= quantiles[n - 1]!) return 1;
  let i = 0;
  while (i + 1 < n && quantiles[i + 1]! <= t) i++;
  const lo = quantiles[i]!;
  const hi = quantiles[i + 1]!;
  const pLo = QUANTILE_POINTS[i]!;
  const pHi = QUANTILE_POINTS[i + 1]!;
  return hi > lo ? pLo + ((pHi - pLo) * (t - lo)) / (hi - lo) : pLo;
}

/**
 * PSI between two quantile profiles over the baseline's bins: cut points are the baseline's
 * distinct quantiles, and both masses come from the same CDF interpolation, so identical
 * profiles give 0 even with tied quantiles.
 */
export function quantilePsi(baseline: readonly number[], current: readonly number[]): { psi: number; bins: number } {
  const cuts = [...new Set(baseline)].sort((a, b) => a - b);
  const masses = (q: readonly number[]) => {
    const cdf = cuts.map((c) => quantileCdf(q, c));
    return [...cdf.map((f, i) => f - (i === 0 ? 0 : cdf[i - 1]!)), 1 - cdf[cdf.length - 1]!];
  };
  const e = masses(baseline);
  const a = masses(current);
  return { psi: psi(e, a), bins: e.length };
}

/** Shares of named parts, with the unnamed rest under `OTHER`, aligned over the union of names. */
export const OTHER = "\u0000other";

export function alignShares(
  baseline: ReadonlyMap<string, number>,
  current: ReadonlyMap<string, number>,
): { names: string[]; expected: number[]; actual: number[] } {
  const names = [...new Set([...baseline.keys(), ...current.keys()])].sort();
  const rest = (m: ReadonlyMap<string, number>) => Math.max(0, 1 - [...m.values()].reduce((s, v) => s + v, 0));
  return {
    names: [...names, OTHER],
    expected: [...names.map((n) => baseline.get(n) ?? 0), rest(baseline)],
    actual: [...names.map((n) => current.get(n) ?? 0), rest(current)],
  };
}

export interface ComponentBaseline {
  /** Past scans in the baseline. */
  scans: number;
  /** Component name (metric name minus the prefix) → median over those scans. */
  values: Map<string, number>;
  /** Component name → its value in each of those scans, oldest first (`missing` where it had none). */
  series: Map<string, number[]>;
  /** The scans, oldest first. */
  jobs: Array<{ job: string; time: string }>;
  from?: string;
  to?: string;
}

/** Metrics of a multi-part metric: every metric under a prefix, or a fixed list. */
export type Parts = { prefix: string } | { metrics: readonly string[] };

/**
 * The baseline of a multi-part metric (quantiles, pattern shares, category shares): the last
 * `window` past scans that have a non-excluded point among the parts (a policy that fires
 * excludes every part of its scan), and per part its series over those scans and their median,
 * a missing part counting as `missing` (0 for shares: the pattern did not occur; undefined leaves
 * it out). Parts are keyed by their metric name minus the prefix, or by their full name.
 */
export function componentBaseline(
  history: MetricHistory,
  select: Parts,
  jobId: string,
  window: number,
  missing: number | undefined,
): ComponentBaseline {
  const prefix = "prefix" in select ? select.prefix : "";
  const parts = "prefix" in select ? Object.keys(history).filter((m) => m.startsWith(prefix)) : select.metrics;
  const byPart = new Map<string, Map<string, number>>();
  const jobs = new Map<string, string>();
  for (const m of parts) {
    const values = new Map<string, number>();
    for (const h of baselinePoints(history[m], jobId)) {
      values.set(h.job_id, h.value);
      if (!jobs.has(h.job_id)) jobs.set(h.job_id, h.time);
    }
    byPart.set(m.slice(prefix.length), values);
  }
  const ordered = [...jobs.entries()]
    .map(([job, time]) => ({ job, time, t: Date.parse(time) }))
    .sort((a, b) => a.t - b.t || (a.job < b.job ? -1 : a.job > b.job ? 1 : 0))
    .slice(-window);
  const values = new Map<string, number>();
  const series = new Map<string, number[]>();
  for (const [part, byJob] of byPart) {
    const xs = ordered.map((o) => byJob.get(o.job) ?? missing).filter((v): v is number => v !== undefined);
    if (xs.length === 0) continue;
    series.set(part, xs);
    values.set(part, median(xs));
  }
  return {
    scans: ordered.length,
    values,
    series,
    jobs: ordered.map(({ job, time }) => ({ job, time })),
    from: ordered[0]?.time,
    to: ordered[ordered.length - 1]?.time,
  };
}
