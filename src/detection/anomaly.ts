/**
 * Anomaly strategies: pure functions of a metric's baseline (its past non-excluded values) and
 * its new value. Each returns the band it expected, whether the value left it, and how far.
 *
 * - robust_z: median and MAD of the last `window` values; modified z = 0.6745·(x − median)/MAD,
 *   anomalous beyond `threshold` (Iglewicz & Hoaglin). The scale is the larger of MAD/0.6745 and
 *   1.2533·mean absolute deviation (their fallback for MAD = 0, and steadier on short windows);
 *   a constant history falls back to the minimum change. Since the scale is estimated from few
 *   values, the threshold is widened to the matching Student-t quantile (see `studentized`).
 * - rate_of_change: relative change against the previous value, anomalous beyond `max_change`.
 * - weekly_seasonal: robust_z over the past values of the same UTC weekday and hour within
 *   `seasonal_weeks`; with fewer than `seasonal_min_points` of them it falls back to robust_z.
 *
 * Every band is at least ± the minimum change around its centre, so a tiny table stays quiet,
 * and nothing is judged before `min_history` past values exist (state "training").
 */
import type { HistoryPoint } from "../contracts/asset-monitor";
import type { Band } from "./types";

export const STRATEGIES = ["robust_z", "rate_of_change", "weekly_seasonal"] as const;
export type StrategyName = (typeof STRATEGIES)[number];

export interface AnomalyParams {
  strategy: StrategyName;
  /** Past values considered (the most recent ones). */
  window: number;
  /** Modified z-score beyond which a value is anomalous (robust_z, weekly_seasonal). */
  threshold: number;
  /** Relative change beyond which a value is anomalous (rate_of_change): 0.5 = 50 %. */
  max_change: number;
  /** Fewer past values than this: training, no verdict. */
  min_history: number;
  /** Smallest change worth an alert: max(min_abs_change, min_rel_change × |centre|). */
  min_abs_change: number;
  min_rel_change: number;
  seasonal_weeks: number;
  seasonal_min_points: number;
}

export const DEFAULT_ANOMALY_PARAMS: AnomalyParams = {
  strategy: "robust_z",
  window: 30,
  threshold: 3.5,
  max_change: 0.5,
  min_history: 7,
  min_abs_change: 0,
  min_rel_change: 0,
  seasonal_weeks: 8,
  seasonal_min_points: 3,
};

export interface AnomalyResult {
  state: "training" | "ok" | "anomalous";
  anomalous: boolean;
  /** The strategy that decided (a seasonal check that fell back reports robust_z). */
  strategy: StrategyName;
  /** Past values the verdict used (or, while training, the ones available). */
  window_size: number;
  /** Past values needed before a verdict. */
  needed: number;
  expected?: Band;
  /** Centre of the band: the median, or the previous value for rate_of_change. */
  baseline?: number;
  /** |x − centre| / half-width of the band: above 1 is outside. */
  score: number;
  /** Times of the oldest and newest past value used, when the strategy saw times. */
  from?: string;
  to?: string;
}

const MAD_TO_SIGMA = 0.6745;
const MEAN_AD_TO_SIGMA = 1.2533;

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function minChange(centre: number, p: AnomalyParams): number {
  // The floor keeps the band from collapsing to a point on a constant series of zeros.
  return Math.max(p.min_abs_change, p.min_rel_change * Math.abs(centre), 1e-9 * Math.max(1, Math.abs(centre)));
}

function training(strategy: StrategyName, available: number, p: AnomalyParams): AnomalyResult | undefined {
  if (available >= p.min_history) return undefined;
  return { state: "training", anomalous: false, strategy, window_size: available, needed: p.min_history, score: 0 };
}

function verdict(
  strategy: StrategyName,
  x: number,
  centre: number,
  half: number,
  used: number,
  p: AnomalyParams,
): AnomalyResult {
  const expected = { low: centre - half, high: centre + half };
  const anomalous = x < expected.low || x > expected.high;
  return {
    state: anomalous ? "anomalous" : "ok",
    anomalous,
    strategy,
    window_size: used,
    needed: p.min_history,
    expected,
    baseline: centre,
    score: Math.abs(x - centre) / half,
  };
}

/** Robust z-score on median/MAD over the last `window` values. */
export function robustZ(values: readonly number[], x: number, params: Partial<AnomalyParams> = {}): AnomalyResult {
  const p = { ...DEFAULT_ANOMALY_PARAMS, ...params };
  const w = values.slice(-Math.max(p.window, p.min_history));
  const wait = training("robust_z", w.length, p);
  if (wait) return wait;
  return zBand("robust_z", w, x, p);
}

/**
 * The spread of values around their centre as a standard deviation: the larger of MAD/0.6745 and
 * 1.2533 × the mean absolute deviation. MAD alone is erratic on short windows (with 7 points it
 * is often a third of the true spread) and 0 when most values are equal; the mean absolute
 * deviation is steadier there, and the estimate stays robust since anomalies are kept out of it.
 */
export function robustSigma(values: readonly number[], centre: number): number {
  if (values.length === 0) return 0;
  const deviations = values.map((v) => Math.abs(v - centre));
  const meanAd = deviations.reduce((s, d) => s + d, 0) / deviations.length;
  return Math.max(median(deviations) / MAD_TO_SIGMA, meanAd * MEAN_AD_TO_SIGMA);
}

/** How far from its centre a new value may be, given a few past ones: the studentized z × robustSigma. */
export function spreadBound(values: readonly number[], centre: number, z: number): number {
  return studentized(z, values.length) * robustSigma(values, centre);
}

/**
 * How far a share measured on `n` values may move from its centre beyond sampling: the part of the
 * history's spread that binomial sampling of about `n` values does not explain (the scans' own
 * drift), as a studentized prediction bound. A history that varies only as samples do gives 0, so
 * the caller's test on the row count alone decides; a history that wanders keeps its own band.
 */
export function excessSpread(values: readonly number[], centre: number, n: number, z: number): number {
  return excessOf(robustSigma(values, centre), values.length, centre, n, z);
}

function excessOf(sigma: number, points: number, centre: number, n: number, z: number): number {
  const sampling = n > 0 ? (centre * (1 - centre)) / n : 0;
  return studentized(z, points) * Math.sqrt(Math.max(0, sigma * sigma - sampling));
}

/** Past values from which a share's history counts as wandering rather than scattered. */
const MIN_LEVEL_POINTS = 5;

/**
 * Where a share's history stands and how far it may move beyond sampling (see excessSpread).
 * A history that scatters around one level is judged against its median and spread. A history
 * that wanders (a trend: a field filled less every year) has a spread around its median far
 * wider than its steps from scan to scan; judged against the median, its band would swallow any
 * change. Such a history (steps' spread, robust and about its own drift, under a third of the spread
 * around the median) is judged from where it is now: the median of its last three values plus
 * its usual step, with the spread of its steps.
 */
export function shareBaseline(
  values: readonly number[],
  n: number,
  z: number,
): { centre: number; allowed: number; wandering: boolean } {
  const centre = median(values);
  const sigma = robustSigma(values, centre);
  if (values.length >= MIN_LEVEL_POINTS) {
    const steps = values.slice(1).map((v, i) => v - values[i]!);
    const drift = median(steps);
    const stepSigma = robustSigma(steps, drift) / Math.SQRT2;
    if (stepSigma < sigma / 3) {
      const level = Math.min(1, Math.max(0, median(values.slice(-3)) + drift));
      return { centre: level, allowed: excessOf(stepSigma, steps.length, level, n, z), wandering: true };
    }
  }
  return { centre, allowed: excessOf(sigma, values.length, centre, n, z), wandering: false };
}

function zBand(strategy: StrategyName, w: readonly number[], x: number, p: AnomalyParams): AnomalyResult {
  const centre = median(w);
  const half = Math.max(spreadBound(w, centre, p.threshold), minChange(centre, p));
  return verdict(strategy, x, centre, half, w.length, p);
}

/**
 * The threshold as a prediction bound: the scale is estimated from only n past values, so the
 * normal quantile `z` becomes the Student-t quantile of the same tail with n − 1 degrees of
 * freedom (Cornish-Fisher expansion). 3.5 stays 3.5 on long windows, is ~3.9 with 30 values and
 * ~6.4 with 7, which keeps a short, luckily calm history from flagging ordinary noise.
 */
export function studentized(z: number, n: number): number {
  const v = Math.max(1, n - 1);
  return z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v * v);
}

/** Relative change against the previous value. */
export function rateOfChange(values: readonly number[], x: number, params: Partial<AnomalyParams> = {}): AnomalyResult {
  const p = { ...DEFAULT_ANOMALY_PARAMS, ...params };
  const wait = training("rate_of_change", Math.min(values.length, Math.max(p.window, p.min_history)), p);
  if (wait) return wait;
  const prev = values[values.length - 1]!;
  const half = Math.max(p.max_change * Math.abs(prev), minChange(prev, p));
  return verdict("rate_of_change", x, prev, half, 1, p);
}

const WEEK_MS = 7 * 24 * 3_600_000;

/**
 * Weekly-seasonal baseline: the past values of the same UTC weekday and hour as `scanTime`, within
 * the last `seasonal_weeks` weeks; too few of them and it is robust_z over the whole window.
 */
export function weeklySeasonal(
  points: readonly Pick<HistoryPoint, "time" | "value">[],
  x: number,
  scanTime: string,
  params: Partial<AnomalyParams> = {},
): AnomalyResult {
  const p = { ...DEFAULT_ANOMALY_PARAMS, ...params };
  const all = points.slice(-Math.max(p.window, p.min_history));
  const wait = training("weekly_seasonal", all.length, p);
  if (wait) return wait;
  const now = new Date(scanTime);
  const since = now.getTime() - p.seasonal_weeks * WEEK_MS;
  const same = points.filter((pt) => {
    const t = new Date(pt.time);
    return (
      t.getTime() >= since &&
      t.getTime() < now.getTime() &&
      t.getUTCDay() === now.getUTCDay() &&
      t.getUTCHours() === now.getUTCHours()
    );
  });
  const used = same.length >= p.seasonal_min_points ? same : all;
  const strategy = used === same ? "weekly_seasonal" : "robust_z";
  return {
    ...zBand(
      strategy,
      used.map((pt) => pt.value),
      x,
      p,
    ),
    from: used[0]?.time,
    to: used[used.length - 1]?.time,
  };
}

/**
 * The points a baseline may use: not excluded, finite, not from the job being evaluated (applying
 * a job twice must not compare it with itself), oldest first.
 */
export function baselinePoints(history: readonly HistoryPoint[] | undefined, jobId: string): HistoryPoint[] {
  if (!history) return [];
  return history
    .filter((h) => !h.excluded && h.job_id !== jobId && Number.isFinite(h.value))
    .map((h, i) => ({ h, i, t: Date.parse(h.time) }))
    .sort((a, b) => (a.t === b.t || Number.isNaN(a.t) || Number.isNaN(b.t) ? a.i - b.i : a.t - b.t))
    .map(({ h }) => h);
}

/** Runs the configured strategy on a metric's history. */
export function detect(
  history: readonly HistoryPoint[] | undefined,
  x: number,
  jobId: string,
  scanTime: string,
  params: AnomalyParams,
): AnomalyResult {
  const base = baselinePoints(history, jobId);
  if (params.strategy === "weekly_seasonal") return weeklySeasonal(base, x, scanTime, params);
  const values = base.map((h) => h.value);
  if (params.strategy === "rate_of_change") {
    const result = rateOfChange(values, x, params);
    const last = base[base.length - 1]?.time;
    return result.state === "training" ? result : { ...result, from: last, to: last };
  }
  const result = robustZ(values, x, params);
  const used = base.slice(-Math.max(params.window, params.min_history));
  return result.state === "training" ? result : { ...result, from: used[0]?.time, to: used[used.length - 1]?.time };
}
