/**
 * The baselines the drift policies compare with, rebuilt from the share and quantile points of
 * the metric history, and the CDF of a distribution known by its quantiles.
 */
import { QUANTILE_POINTS } from "../contracts/profile";
import { baselinePoints, median } from "./anomaly";
import type { MetricHistory } from "./types";

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

/** An exact value holding a share of a quantity's values (a toll of 0). */
export interface Atom {
  value: number;
  share: number;
}

/**
 * The CDF of a quantity's continuous part (its values other than the atoms), as knots (x, G(x))
 * to interpolate linearly, from its quantiles at QUANTILE_POINTS and its atoms' shares. A quantile
 * on an atom says nothing of the rest; at an atom v the rest's CDF is F(v−) less the atoms below,
 * F(v−) taken mid-way in what the quantiles and the atom's share allow.
 */
export function continuousKnots(quantiles: readonly number[], atoms: readonly Atom[]): Array<[number, number]> {
  const total = atoms.reduce((s, a) => s + a.share, 0);
  const rest = 1 - total;
  if (!(rest > 0) || quantiles.length !== QUANTILE_POINTS.length) return [];
  const below = (x: number) => atoms.reduce((s, a) => s + (a.value < x ? a.share : 0), 0);
  const isAtom = (x: number) => atoms.some((a) => a.value === x);
  const knots: Array<[number, number]> = [];
  for (let i = 0; i < quantiles.length; i++) {
    const x = quantiles[i]!;
    // A run of equal quantiles: its last point (the CDF there is at least that probability).
    if (isAtom(x) || quantiles[i + 1] === x) continue;
    knots.push([x, (QUANTILE_POINTS[i]! - below(x)) / rest]);
  }
  for (const a of atoms) {
    // F(v−) ≥ the probability of the last quantile below v and ≥ that of the last at or below v less
    // the share; ≤ that of the first at or above v and ≤ that of the first above v less the share.
    let lo = 0;
    let hi = 1 - a.share;
    for (let i = 0; i < quantiles.length; i++) {
      const q = quantiles[i]!;
      const p = QUANTILE_POINTS[i]!;
      if (q < a.value) lo = Math.max(lo, p);
      if (q <= a.value) lo = Math.max(lo, p - a.share);
      if (q >= a.value) hi = Math.min(hi, p);
      if (q > a.value) hi = Math.min(hi, p - a.share);
    }
    knots.push([a.value, ((lo + hi) / 2 - below(a.value)) / rest]);
  }
  knots.sort((x, y) => x[0] - y[0]);
  let running = 0;
  return knots.map(([x, g]) => {
    running = Math.min(1, Math.max(running, g));
    return [x, running] as [number, number];
  });
}
