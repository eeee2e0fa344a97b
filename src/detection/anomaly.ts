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
 * - robust_z finds a cycle in the history by itself (seasonalBaseline): a weekly or daily one that
 *   explains most of the history's spread is taken out, and the value is judged against its own
 *   phase's level (strategy "seasonal", with the cycle in `season`).
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

/** A cycle a metric's history shows (seasonalBaseline), and the new value's phase in it. */
export interface Season {
  /** weekly: by UTC weekday; daily: by UTC hour; scans: every 7th scan (a daily batch per scan). */
  cycle: "weekly" | "daily" | "scans";
  /** The new value's phase: "Saturday", "14:00 UTC", or "every 7th scan back". */
  phase: string;
  /** Past values of that phase in the baseline, and its level (their median). */
  phase_points: number;
  phase_level: number;
  /** The history's spread around its phases' levels ÷ its spread around its median (below SEASON_GAIN). */
  spread_ratio: number;
}

export interface AnomalyResult {
  state: "training" | "ok" | "anomalous";
  anomalous: boolean;
  /** The strategy that decided (a seasonal check that fell back reports robust_z; a cycle robust_z found, seasonal). */
  strategy: StrategyName | "seasonal";
  /** The cycle the band followed, when robust_z found one (strategy "seasonal"). */
  season?: Season;
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

function training(strategy: AnomalyResult["strategy"], available: number, p: AnomalyParams): AnomalyResult | undefined {
  if (available >= p.min_history) return undefined;
  return { state: "training", anomalous: false, strategy, window_size: available, needed: p.min_history, score: 0 };
}

function verdict(
  strategy: AnomalyResult["strategy"],
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
 * The points a baseline may use: not excluded (unless `withExcluded`: the history as measured), finite, not from the job being evaluated (applying
 * a job twice must not compare it with itself), oldest first.
 */
export function baselinePoints(
  history: readonly HistoryPoint[] | undefined,
  jobId: string,
  withExcluded = false,
): HistoryPoint[] {
  if (!history) return [];
  return history
    .filter((h) => (withExcluded || !h.excluded) && h.job_id !== jobId && Number.isFinite(h.value))
    .map((h, i) => ({ h, i, t: Date.parse(h.time) }))
    .sort((a, b) => (a.t === b.t || Number.isNaN(a.t) || Number.isNaN(b.t) ? a.i - b.i : a.t - b.t))
    .map(({ h }) => h);
}

/** The median of sorted values less the one at index r (k ≥ 2), without copying them. */
function medianWithout(sorted: readonly number[], r: number): number {
  const k = sorted.length - 1;
  const at = (j: number) => (j < r ? sorted[j]! : sorted[j + 1]!);
  return k % 2 === 1 ? at((k - 1) / 2) : (at(k / 2 - 1) + at(k / 2)) / 2;
}

/** Full cycles of a phase the history must hold before a cycle is looked for (a cycle seen thrice). */
const SEASON_CYCLES = 3;
/** Past values of a phase needed for its level. */
const SEASON_PHASE_POINTS = 3;
/**
 * A cycle is taken when the history's spread around its phases' levels (each value against the
 * median of the other values of its phase: a prediction, not a fit) is at most this share of its
 * spread around its median. Noise with no cycle gives about 1.1 to 1.25 (a phase's level is
 * estimated from a few values), so a cycle must explain most of the spread, not some.
 */
const SEASON_GAIN = 0.75;
/** The most past values a seasonal baseline reads (the history holds 120 per metric). */
const SEASON_POINTS = 120;
const DAY_MS = 24 * 3_600_000;
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

interface Cycle {
  cycle: Season["cycle"];
  /**
   * Where the past points the cycle reads start (the last `cycles` of it, at most SEASON_POINTS),
   * given their times (ms, oldest first), with each one's phase from there on and the new value's;
   * undefined when the cycle does not apply to this history.
   */
  phases: (
    times: readonly number[],
    now: number,
    cycles: number,
  ) => { start: number; past: number[]; now: number } | undefined;
  label: (phase: number) => string;
}

const HOUR_MS = 3_600_000;
/** UTC weekday (0 = Sunday) and hour of a time in ms: 1970-01-01 was a Thursday. */
const weekdayOf = (t: number) => (((Math.floor(t / DAY_MS) + 4) % 7) + 7) % 7;
const hourOf = (t: number) => ((Math.floor(t / HOUR_MS) % 24) + 24) % 24;

/** Phases by the scans' times: the past values read must span SEASON_CYCLES cycles of `length` ms. */
const byTime =
  (length: number, phaseOf: (t: number) => number) => (times: readonly number[], now: number, cycles: number) => {
    let start = Math.max(0, times.length - SEASON_POINTS);
    while (start < times.length && times[start]! < now - cycles * length) start++;
    if (start >= times.length || !(now - times[start]! >= SEASON_CYCLES * length)) return undefined;
    return { start, past: times.slice(start).map(phaseOf), now: phaseOf(now) };
  };

/** A cycle by the order of scans: one of every SCAN_PERIOD scans (a weekly cycle of daily batches). */
export const SCAN_PERIOD = 7;

const CYCLES: readonly Cycle[] = [
  { cycle: "weekly", phases: byTime(WEEK_MS, weekdayOf), label: (k) => WEEKDAYS[k]! },
  { cycle: "daily", phases: byTime(DAY_MS, hourOf), label: (k) => `${String(k).padStart(2, "0")}:00 UTC` },
  {
    // Scans whose times span less than a day (a backfill: many days' batches scanned in an hour) have
    // no clock of the data but their order.
    cycle: "scans",
    phases: (times, now, cycles) => {
      const start = Math.max(0, times.length - Math.min(SEASON_POINTS, cycles * SCAN_PERIOD));
      if (start >= times.length || !(now - times[start]! < DAY_MS)) return undefined;
      const n = times.length;
      return { start, past: times.slice(start).map((_, i) => (n - start - i) % SCAN_PERIOD), now: 0 };
    },
    label: () => `every ${SCAN_PERIOD}th scan back`,
  },
];

/**
 * robust_z with the history's cycle taken out, when it has one. A cycle reads the past values of its
 * last `seasonal_weeks` cycles (at most SEASON_POINTS); it applies by the scans' UTC weekday
 * (weekly) or hour (daily) once those values span three cycles, and by the order of scans (one of
 * every 7: daily batches) when they span less than a day. Each phase with SEASON_PHASE_POINTS past values gets
 * its level (their median); when the spread of the values around their phase's level (each judged
 * without itself) is at most SEASON_GAIN of their spread around the median, and the new value's
 * phase has a level, the band is that level ± the studentized threshold × that spread. The
 * tighter of the cycles that qualify decides; none, and it is undefined (plain robust_z).
 * `base` is the history as measured, excluded points included (see detect): a phase flagged every
 * time it came round is the cycle not yet known, and a one-off anomaly among a phase's values does
 * not move its median; a level that moved on every day is no cycle and stays robust_z's.
 */
export function seasonalBaseline(
  base: readonly HistoryPoint[],
  x: number,
  scanTime: string,
  p: AnomalyParams,
): AnomalyResult | undefined {
  if (base.length < 2 * SEASON_PHASE_POINTS) return undefined;
  const now = Date.parse(scanTime);
  const times = base.map((pt) => Date.parse(pt.time));
  if (Number.isNaN(now) || times.some(Number.isNaN)) return undefined;
  let best: { r: AnomalyResult; sigma: number } | undefined;
  for (const c of CYCLES) {
    const phases = c.phases(times, now, p.seasonal_weeks);
    if (!phases) continue;
    const points = base.slice(phases.start);
    const byPhase = new Map<number, number[]>();
    points.forEach((pt, i) => {
      const list = byPhase.get(phases.past[i]!) ?? [];
      list.push(pt.value);
      byPhase.set(phases.past[i]!, list);
    });
    const own = byPhase.get(phases.now);
    if (!own || own.length < SEASON_PHASE_POINTS) continue;
    const residuals: number[] = [];
    const values: number[] = [];
    for (const list of byPhase.values()) {
      if (list.length < SEASON_PHASE_POINTS) continue;
      const sorted = [...list].sort((u, v) => u - v);
      for (let r = 0; r < sorted.length; r++) {
        values.push(sorted[r]!);
        residuals.push(sorted[r]! - medianWithout(sorted, r));
      }
    }
    // The cycle must cover most of the history (and more than one phase of it).
    if (values.length < (2 * points.length) / 3 || values.length === own.length) continue;
    const plain = robustSigma(values, median(values));
    const sigma = robustSigma(residuals, 0);
    if (!(plain > 0) || sigma > SEASON_GAIN * plain || (best && sigma >= best.sigma)) continue;
    const level = median(own);
    const half = Math.max(studentized(p.threshold, residuals.length) * sigma, minChange(level, p));
    const season: Season = {
      cycle: c.cycle,
      phase: c.label(phases.now),
      phase_points: own.length,
      phase_level: level,
      spread_ratio: sigma / plain,
    };
    const r = verdict("seasonal", x, level, half, residuals.length, p);
    best = { r: { ...r, season, from: points[0]!.time, to: points[points.length - 1]!.time }, sigma };
  }
  return best?.r;
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
  if (result.state !== "training") {
    // The cycle is looked for in the history as measured: a phase the detector flagged each time
    // it came round (Saturdays, excluded as anomalies) is what a cycle looks like before it is known.
    const measured = history?.some((h) => h.excluded) ? baselinePoints(history, jobId, true) : base;
    const seasonal = seasonalBaseline(measured, x, scanTime, params);
    if (seasonal) return seasonal;
  }
  const used = base.slice(-Math.max(params.window, params.min_history));
  return result.state === "training" ? result : { ...result, from: used[0]?.time, to: used[used.length - 1]?.time };
}
