/**
 * value_range and, for quantities, distribution_drift: numbers that are amounts, not labels.
 *
 * - The mean and median are judged against bands (see anomaly.ts) whose half-width never falls
 *   below the metric's resolution: the grid the values sit on (the profile's `step`) for the
 *   median, and the smallest move the metric has ever made between scans.
 * - Extremes are judged as tails, never by one record: the fences are the baseline's 1st and 99th
 *   percentiles; the share of this scan's values beyond them (from its quantile profile) is tested
 *   against the shares the past scans had beyond the same fences (shareTest).
 * - Drift is a Kolmogorov–Smirnov-like distance between the quantile profiles (the largest gap
 *   between the two CDFs at the baseline's quantiles), alerting above both the two-sample KS
 *   critical distance for the row counts and the distances the past scans themselves had.
 * - A point mass the quantiles cannot see (rows set to one value: a default, a stuck sensor) is the
 *   most frequent value's share rising beyond its history, by the share test (modeShare).
 */
import type { AttributeProfile } from "../../scan/profile";
import { QUANTILE_POINTS } from "../../scan/profile";
import { baselinePoints, detect, median, spreadBound } from "../anomaly";
import { componentBaseline, quantileCdf } from "../divergence";
import { investigateShift } from "../investigate";
import { attrMetric, isNumeric, meanByMetric, nonNull, QUANTILE_STATS } from "../metrics";
import { ksCritical } from "../stats";
import type { Band, HistoryPoint, MetricHistory } from "../types";
import {
  anomalyFields,
  assetName,
  bandText,
  type Check,
  type CheckContext,
  type CheckResult,
  deviationFrom,
  type Finding,
  fmt,
  ignored,
  investigating,
  kindOf,
  pct,
  round,
  roundBand,
  SPREAD_Z,
  shareTest,
  trainingWindow,
  withInvestigation,
} from "./common";

/** Significance of the KS test: with ten thousand scans of hundreds of attributes, rare enough. */
const KS_ALPHA = 1e-6;

const isQuantity = (ctx: CheckContext, a: AttributeProfile) => isNumeric(a) && kindOf(ctx, a) === "quantity";

/** The smallest non-zero move of a metric between two of its past values (its observed grid). */
function resolution(points: readonly HistoryPoint[]): number {
  const values = [...new Set(points.map((p) => p.value))].sort((a, b) => a - b);
  let smallest = Number.POSITIVE_INFINITY;
  for (let i = 1; i < values.length; i++) smallest = Math.min(smallest, values[i]! - values[i - 1]!);
  return Number.isFinite(smallest) ? smallest : 0;
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The most frequent values whose common divisor is the grid (rarer ones may sit off it). */
const GRID_VALUES = 20;

/**
 * The grid a median moves on: the values' own step (every value a multiple of it), or, when a
 * few odd values make that step fine, the step of the most frequent values (speeds reported in
 * tens of knots with the odd 135: the median still moves by ten).
 */
function grid(a: AttributeProfile): number {
  const frequent = a.top_values
    .slice(0, GRID_VALUES)
    .map((t) => Number(t.value))
    .filter((v) => Number.isFinite(v) && v !== 0);
  let common = 0;
  if (frequent.length >= 3) {
    const scale = 10 ** Math.min(6, Math.max(0, ...frequent.map((v) => (String(v).split(".")[1] ?? "").length)));
    const ints = frequent.map((v) => Math.round(Math.abs(v) * scale));
    if (ints.every((v) => Number.isSafeInteger(v))) common = ints.reduce((g, v) => gcd(g, v), 0) / scale;
  }
  return Math.max(a.step ?? 0, common);
}

interface QuantileBaseline {
  /** Per quantile point, the median over the past scans, made non-decreasing. */
  quantiles: number[];
  /** Each past scan's own quantile profile, oldest first. */
  past: Array<{ job: string; time: string; quantiles: number[] }>;
  from?: string;
  to?: string;
}

function quantileBaseline(
  history: MetricHistory,
  a: AttributeProfile,
  jobId: string,
  window: number,
): QuantileBaseline {
  const metrics = QUANTILE_STATS.map((s) => attrMetric(a.name, s));
  const base = componentBaseline(history, { metrics }, jobId, window, undefined);
  const byJob = new Map(base.jobs.map((j) => [j.job, [] as number[]]));
  for (const m of metrics) {
    for (const h of baselinePoints(history[m], jobId)) byJob.get(h.job_id)?.push(h.value);
  }
  const past = base.jobs
    .map((j) => ({ ...j, quantiles: byJob.get(j.job) ?? [] }))
    .filter((j) => j.quantiles.length === metrics.length);
  let running = Number.NEGATIVE_INFINITY;
  const quantiles = metrics.map((m) => {
    running = Math.max(running, base.values.get(m) ?? Number.NaN);
    return running;
  });
  return { quantiles, past, from: base.from, to: base.to };
}

/** Largest gap between two CDFs known by their quantiles, at the baseline's quantiles. */
function ksDistance(baseline: readonly number[], current: readonly number[]): { d: number; at: number } {
  let d = 0;
  let at = baseline[0] ?? 0;
  for (let i = 1; i < baseline.length - 1; i++) {
    const t = baseline[i]!;
    const gap = Math.abs(quantileCdf(baseline, t) - quantileCdf(current, t));
    if (gap > d) {
      d = gap;
      at = t;
    }
  }
  return { d, at };
}

/** Shares of values below the low fence and above the high fence, from a quantile profile. */
function tailShares(quantiles: readonly number[], low: number, high: number): { below: number; above: number } {
  const below = low > quantiles[0]! ? quantileCdf(quantiles, low - Number.EPSILON * Math.abs(low)) : 0;
  return { below: Math.max(0, below), above: Math.max(0, 1 - quantileCdf(quantiles, high)) };
}

/**
 * The smallest rise of a tail share worth an alert: wider than the rate policies' margin, since a
 * tail share is read off 11 quantiles by interpolation, not counted.
 */
const TAIL_MARGIN = 0.005;

const P1 = QUANTILE_POINTS.indexOf(0.01);
const P99 = QUANTILE_POINTS.indexOf(0.99);

/**
 * A quantity's finding with the values whose mean moved it (the investigator); the per-value
 * means of the attribute stay out of their baselines as the attribute's own metrics do.
 */
export function withShift(ctx: CheckContext, finding: Finding, a: AttributeProfile): Finding {
  if (!investigating(ctx)) return finding;
  const entries = investigateShift(ctx.profile, ctx.history, ctx.input.job_id, a.name);
  const means = (ctx.profile.breakdown ?? []).flatMap((b) =>
    b.values.filter((v) => v.numeric?.[a.name]).map((v) => meanByMetric(a.name, b.attribute, v.value)),
  );
  return withInvestigation(finding, entries, `move of ${a.name}`, means, a.name);
}

/** The attribute's minimums in its last `window` scans (of the baseline). */
function pastMinimums(ctx: CheckContext, a: AttributeProfile, window: number): HistoryPoint[] {
  return baselinePoints(ctx.history[attrMetric(a.name, "min")], ctx.input.job_id).slice(-window);
}

/** Band stats of value_range: judged against their own history's band. */
const BAND_STATS = new Set(["mean", "p50"]);

export const valueRange: Check<"value_range"> = (ctx, p) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  for (const a of ctx.profile.attributes) {
    if (ignored(p, a) || !isQuantity(ctx, a)) continue;
    const out: Array<{ stat: string; metric: string; x: number; r: ReturnType<typeof detect>; expected: Band }> = [];
    // A quantity never below zero in its past scans has no mean or median below zero to expect.
    const minimums = pastMinimums(ctx, a, p.window);
    const nonNegative = minimums.length > 0 && minimums.every((h) => h.value >= 0);
    for (const stat of p.stats) {
      if (!BAND_STATS.has(stat)) continue;
      const metric = attrMetric(a.name, stat);
      const x = ctx.current.get(metric);
      if (x === undefined) continue;
      const past = baselinePoints(ctx.history[metric], ctx.input.job_id).slice(-p.window);
      const floor = Math.max(stat === "p50" ? grid(a) : 0, resolution(past));
      const r = detect(ctx.history[metric], x, ctx.input.job_id, ctx.input.scan_time, {
        ...p,
        min_abs_change: Math.max(p.min_abs_change, floor),
      });
      if (r.state === "training") {
        training.push({ metric, attribute: a.name, points: r.window_size, needed: r.needed });
        continue;
      }
      if (!r.expected) continue;
      const expected = nonNegative ? { low: Math.max(0, r.expected.low), high: r.expected.high } : r.expected;
      if (x < expected.low || x > expected.high) out.push({ stat, metric, x, r, expected });
    }
    if (out.length > 0) {
      out.sort((u, v) => v.r.score - u.r.score);
      const [first, ...rest] = out as [(typeof out)[number], ...typeof out];
      const { strategyText: how, ...fields } = anomalyFields(first.r, p);
      const also = rest.map((o) => `; also ${o.stat} ${fmt(o.x)} (expected ${bandText(o.expected)})`).join("");
      const band: Finding = {
        attribute: a.name,
        metric: first.metric,
        observed: round(first.x),
        metric_value: fmt(first.x),
        expected: roundBand(first.expected),
        description: `The ${first.stat} of attribute ${a.name} (quantity) in ${assetName(ctx)} is ${fmt(first.x)}, outside the expected ${bandText(first.expected)} (${how})${also}.`,
        ...fields,
        deviation: deviationFrom(first.x, first.r.expected!),
        adaptable: true,
        exclude: out.map((o) => o.metric),
      };
      findings.push(withShift(ctx, band, a));
      continue;
    }
    if (p.stats.includes("min") || p.stats.includes("max")) {
      const tail = tailFinding(ctx, p, a) ?? signFinding(ctx, p, a);
      if (tail) findings.push(withShift(ctx, tail, a));
    }
  }
  return { findings, training };
};

/**
 * A quantity never below zero in its history (a cost, a speed, a distance) with values below zero
 * now: Deequ's non-negative check, learnt instead of declared. The count of such values is not in
 * the profile, so it may be one record: a LOW observation.
 */
function signFinding(
  ctx: CheckContext,
  p: Parameters<Check<"value_range">>[1],
  a: AttributeProfile,
): Finding | undefined {
  if (!p.stats.includes("min") || typeof a.min !== "number" || !(a.min < 0)) return undefined;
  const metric = attrMetric(a.name, "min");
  const past = pastMinimums(ctx, a, p.window);
  if (past.length < p.min_history || past.some((h) => h.value < 0)) return undefined;
  const expected = { low: 0, high: round(Math.max(...past.map((h) => h.value))) };
  return {
    attribute: a.name,
    metric,
    observed: round(a.min),
    metric_value: fmt(a.min),
    expected,
    description: `Attribute ${a.name} (quantity) of ${assetName(ctx)} has values below zero (min ${fmt(a.min)}); it had none in its last ${past.length} scans (their minimums were 0 to ${fmt(expected.high)}). It may be one record: a LOW observation.`,
    strategy: "sign",
    training_size: past.length,
    ...trainingWindow(past[0]?.time, past[past.length - 1]?.time),
    deviation: deviationFrom(a.min, expected),
    max_priority: "LOW",
    adaptable: true,
    exclude: [metric],
  };
}

/** The tails of a quantity: more values beyond the baseline's 1st/99th percentiles than the past scans had. */
function tailFinding(
  ctx: CheckContext,
  p: Parameters<Check<"value_range">>[1],
  a: AttributeProfile,
): Finding | undefined {
  const cur = a.quantiles;
  if (cur?.length !== QUANTILE_POINTS.length) return undefined;
  const base = quantileBaseline(ctx.history, a, ctx.input.job_id, p.window);
  if (base.past.length < p.min_history) return undefined;
  const low = base.quantiles[P1]!;
  const high = base.quantiles[P99]!;
  const n = nonNull(a);
  const now = tailShares(cur, low, high);
  const sides = [
    {
      side: "below",
      fence: low,
      share: now.below,
      past: base.past.map((j) => tailShares(j.quantiles, low, high).below),
    },
    {
      side: "above",
      fence: high,
      share: now.above,
      past: base.past.map((j) => tailShares(j.quantiles, low, high).above),
    },
  ].filter((s) => (s.side === "below" ? p.stats.includes("min") : p.stats.includes("max")));
  for (const s of sides) {
    const history = base.past.map((j, i) => ({ job_id: j.job, time: j.time, value: s.past[i]!, excluded: false }));
    const v = shareTest(history, ctx.input.job_id, s.share * n, n, {
      window: p.window,
      min_history: p.min_history,
      z: SPREAD_Z,
      margin: TAIL_MARGIN,
    });
    if (!v.fires) continue;
    const stat = s.side === "below" ? "min" : "max";
    return {
      attribute: a.name,
      metric: attrMetric(a.name, `tail_${s.side}`),
      observed: round(s.share),
      metric_value: fmt(s.share),
      expected: { low: 0, high: round(v.limit) },
      description: `${pct(s.share)} of the values of attribute ${a.name} (quantity) in ${assetName(ctx)} are ${s.side} ${fmt(s.fence)} (the ${s.side === "below" ? "1st" : "99th"} percentile of its last ${base.past.length} scans), above the allowed ${pct(v.limit)} (${v.why}); ${stat} ${fmt(Number(s.side === "below" ? a.min : a.max))}.`,
      strategy: "tail_share",
      training_size: base.past.length,
      ...trainingWindow(base.from, base.to),
      deviation: v.deviation,
      adaptable: true,
      exclude: [
        attrMetric(a.name, "min"),
        attrMetric(a.name, "max"),
        attrMetric(a.name, "p1"),
        attrMetric(a.name, "p99"),
      ],
    };
  }
  return undefined;
}

/** distribution_drift of a quantity: the KS-like distance of its quantile profile from the baseline's. */
export function quantityDrift(
  ctx: CheckContext,
  p: { window: number; min_history: number; min_values: number },
  a: AttributeProfile,
): { finding?: Finding; training?: CheckResult["training"][number] } {
  const metric = attrMetric(a.name, "ks");
  const cur = a.quantiles;
  if (cur?.length !== QUANTILE_POINTS.length) return {};
  const base = quantileBaseline(ctx.history, a, ctx.input.job_id, p.window);
  if (base.past.length < p.min_history) {
    return { training: { metric, attribute: a.name, points: base.past.length, needed: p.min_history } };
  }
  const n = nonNull(a);
  if (n < p.min_values) return {};
  const { d, at } = ksDistance(base.quantiles, cur);
  const pastD = base.past.map((j) => ksDistance(base.quantiles, j.quantiles).d);
  const centre = median(pastD);
  const learned = centre + spreadBound(pastD, centre, SPREAD_Z);
  const critical = ksCritical(n, n * base.past.length, KS_ALPHA);
  const limit = Math.max(learned, critical);
  if (!(d > limit)) return {};
  const mid = QUANTILE_STATS.indexOf("p50");
  const q = base.quantiles;
  return {
    finding: {
      attribute: a.name,
      metric,
      observed: round(d),
      metric_value: fmt(d),
      expected: { low: 0, high: round(limit) },
      description: `The value distribution of attribute ${a.name} (quantity) in ${assetName(ctx)} drifted from its baseline of the last ${base.past.length} scans: the CDFs differ by ${pct(d)} at ${fmt(at)}, above the allowed ${pct(limit)} (the larger of the KS critical distance ${pct(critical)} for ${n} values and the past scans' own distances); median ${fmt(q[mid]!)} -> ${fmt(cur[mid]!)}, 1st to 99th percentile ${fmt(q[P1]!)}..${fmt(q[P99]!)} -> ${fmt(cur[P1]!)}..${fmt(cur[P99]!)}.`,
      strategy: "ks_quantiles",
      training_size: base.past.length,
      ...trainingWindow(base.from, base.to),
      deviation: limit > 0 ? d / limit : 1,
      adaptable: true,
      exclude: QUANTILE_STATS.map((s) => attrMetric(a.name, s)),
    },
  };
}

/** The mode-share test: 3.5 standard errors (Wilson lower bound), a rise of half a point at least. */
const MODE_SHARE = { z: 3.5, margin: 0.005 };

/**
 * The most frequent value of a quantity or a timestamp takes a larger share of the values than its history
 * allows (shareTest on the count of that value among the non-null values).
 */
export function modeShare(
  ctx: CheckContext,
  p: { window: number; min_history: number; min_values: number },
  a: AttributeProfile,
): Finding | undefined {
  const top = a.top_values[0];
  const n = nonNull(a);
  if (!top || n < p.min_values) return undefined;
  const metric = attrMetric(a.name, "top_value_share");
  const v = shareTest(ctx.history[metric], ctx.input.job_id, top.count, n, {
    window: p.window,
    min_history: p.min_history,
    ...MODE_SHARE,
  });
  if (!v.fires || v.usual === undefined) return undefined;
  const share = top.count / n;
  return {
    attribute: a.name,
    metric,
    observed: round(share),
    metric_value: fmt(share),
    expected: { low: 0, high: round(v.limit) },
    description: `The most frequent value of attribute ${a.name} (${kindOf(ctx, a)}) in ${assetName(ctx)}, ${top.value}, is ${pct(share)} of the values (${top.count} of ${n}), above the allowed ${pct(v.limit)} (${v.why}).`,
    strategy: "wilson_share",
    training_size: v.past.length,
    ...trainingWindow(v.past[0]?.time, v.past[v.past.length - 1]?.time),
    deviation: v.deviation,
    adaptable: true,
    exclude: [metric],
  };
}
