/**
 * value_range: the level and the extremes of a quantity.
 *
 * - The mean and median are judged against bands (see anomaly.ts) whose half-width never falls
 *   below the metric's resolution: the grid the values sit on (the profile's `step`) for the
 *   median, and the smallest move the metric has ever made between scans.
 * - Extremes are judged as tails, never by one record: the fences are the baseline's 1st and 99th
 *   percentiles; the share of this scan's values strictly beyond them (from its quantile profile,
 *   a point mass on a fence left out: tailShares) is tested against the shares the past scans had
 *   beyond the same fences, each measured by the same rule (shareTest). The text states the share
 *   with the range its quantiles prove, their rank error included.
 */

import { z } from "zod";
import type { HistoryPoint } from "../../contracts/asset-monitor";
import type { AttributeProfile } from "../../contracts/profile";
import { QUANTILE_POINTS } from "../../contracts/profile";
import { baselinePoints, detect } from "../anomaly";
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
  pct,
  round,
  roundBand,
  SPREAD_Z,
  shareTest,
  trainingWindow,
} from "../checks/common";
import {
  cycleText,
  measuredQuantiles,
  P1,
  P99,
  quantileBaseline,
  seasonalLimit,
  withShift,
} from "../checks/quantities";
import { quantileCdf } from "../divergence";
import { ATOM_RECORD_SHARE, atomStat, attrMetric, isNumeric, nonNull } from "../metrics";
import { anomalyDefaults, anomalyShape, ignoreAttributes } from "../params";
import { definePolicy } from "../policy";
import type { Band } from "../types";

export const VALUE_RANGE_STATS = ["min", "max", "mean", "p50"] as const;

const params = z.strictObject({
  ...anomalyShape,
  stats: z.array(z.enum(VALUE_RANGE_STATS)).min(1).max(VALUE_RANGE_STATS.length),
  ignore_attributes: ignoreAttributes,
});
type Params = z.output<typeof params>;

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

/**
 * What a scan's profile says of the share one exact value holds: `known`, its recorded share (a
 * value holding at least ATOM_RECORD_SHARE: an atom), else 0; `bound`, the most it can hold (that
 * share, else the most frequent value's share, else 1).
 */
export interface ValueMass {
  known: (value: number) => number;
  bound: (value: number) => number;
}

/** A share of values beyond a fence: the estimate and the range the quantiles prove around it. */
export interface TailShare {
  share: number;
  low: number;
  high: number;
}

const NO_MASS: ValueMass = { known: () => 0, bound: () => 1 };

/**
 * The share of values strictly below `fence`, from a quantile profile (the 0 of a fence at or below
 * the minimum). A fence's own value is never a tail. The quantiles prove a range: at least the
 * points of the quantiles below the fence (and, when quantiles sit on the fence, those at or below
 * it less the most its value can hold), at most the point of the first quantile at or above it.
 * The estimate is one rule for every scan, whether or not a quantile lands on the fence (a sketch's
 * quantile lands on a value holding a few tenths of a percent on some days and beside it on
 * others): the CDF interpolated between the quantiles around the fence; on a fence, the point of its
 * first quantile there, the limit that interpolation tends to as a quantile nears the fence. Where
 * the fence's value is a recorded atom (a point mass: tolls of 0), its share is taken out of the
 * values at or below it instead, which the quantiles place between the points of the last quantile
 * on the fence and the next (the middle of that, kept within the proven range).
 */
function shareBelow(q: readonly number[], fence: number, mass: ValueMass): TailShare {
  const n = q.length;
  if (!(fence > q[0]!)) return { share: 0, low: 0, high: 0 };
  let i = 0;
  while (i + 1 < n && q[i + 1]! < fence) i++;
  let k = i;
  while (k + 1 < n && q[k + 1]! <= fence) k++;
  const P = QUANTILE_POINTS;
  const high = i + 1 < n ? P[i + 1]! : 1;
  if (k === i) {
    const share = quantileCdf(q, fence);
    return { share: Math.min(high, Math.max(P[i]!, share)), low: P[i]!, high };
  }
  const low = Math.max(P[i]!, P[k]! - mass.bound(fence));
  const known = mass.known(fence);
  const upper = Math.min(high, (k + 1 < n ? P[k + 1]! : 1) - known);
  const share = known > 0 ? Math.max(low, (Math.max(low, P[k]! - known) + upper) / 2) : high;
  return { share, low, high };
}

/**
 * The shares of values strictly below the low fence and strictly above the high fence, from a
 * quantile profile, by shareBelow (the high side as the low side of the negated values: the
 * quantile points are symmetric).
 */
export function tailShares(
  quantiles: readonly number[],
  low: number,
  high: number,
  mass: ValueMass = NO_MASS,
): { below: TailShare; above: TailShare } {
  const mirrored = quantiles.map((v) => -v).reverse();
  const negated: ValueMass = { known: (v) => mass.known(-v), bound: (v) => mass.bound(-v) };
  return { below: shareBelow(quantiles, low, mass), above: shareBelow(mirrored, -high, negated) };
}

/** ValueMass of a past scan, from its recorded metrics. */
function recordedMass(ctx: CheckContext, a: AttributeProfile, job: string): ValueMass {
  const point = (stat: string) => ctx.history[attrMetric(a.name, stat)]?.find((h) => h.job_id === job)?.value;
  const top = point("top_value_share") ?? 1;
  return {
    known: (value) => point(atomStat(String(value))) ?? 0,
    bound: (value) => Math.min(top, point(atomStat(String(value))) ?? top),
  };
}

/** ValueMass of this scan, from its own profile (the same shares its metrics record). */
function currentMass(a: AttributeProfile): ValueMass {
  const n = nonNull(a);
  if (n === 0 || a.top_values.length === 0) return NO_MASS;
  const top = a.top_values[0]!.count / n;
  const atom = (value: number) => {
    const listed = a.top_values.find((t) => Number(t.value) === value);
    const share = listed ? listed.count / n : 0;
    return share >= ATOM_RECORD_SHARE ? share : undefined;
  };
  return { known: (value) => atom(value) ?? 0, bound: (value) => atom(value) ?? top };
}

/**
 * The smallest rise of a tail share worth an alert: wider than the rate policies' margin, since a
 * tail share is read off 11 quantiles by interpolation, not counted.
 */
const TAIL_MARGIN = 0.005;

/**
 * The rank error of the profile's quantiles: the KLL sketch the profiler reads them off (k = 512)
 * places each within about half a percent of its rank (99 % confidence), so a range they prove is
 * stated that much wider.
 */
const SKETCH_RANK_ERROR = 0.005;

/**
 * A tail share as a text may state it: the quantiles prove a range, not a count, so the estimate
 * comes with that range, widened by their rank error ("about 1.2% (its quantiles put it at 0.50%
 * to 5.5%, their rank error included)"); a share of 0 beyond an extreme is exact.
 */
function shareText(t: TailShare): string {
  if (t.low === t.high) return pct(t.share);
  const low = Math.max(0, t.low - SKETCH_RANK_ERROR);
  const high = Math.min(1, t.high + SKETCH_RANK_ERROR);
  return `About ${pct(t.share)} (its quantiles put it at ${pct(low)} to ${pct(high)}, their rank error included)`;
}

/** The attribute's minimums in its last `window` scans (of the baseline). */
function pastMinimums(ctx: CheckContext, a: AttributeProfile, window: number): HistoryPoint[] {
  return baselinePoints(ctx.history[attrMetric(a.name, "min")], ctx.input.job_id).slice(-window);
}

/** Band stats of value_range: judged against their own history's band. */
const BAND_STATS = new Set(["mean", "p50"]);

const valueRange: Check<Params> = (ctx, p) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  // Quantities only (fits).
  for (const a of ctx.attributes) {
    if (ignored(p, a) || !isNumeric(a)) continue;
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
function signFinding(ctx: CheckContext, p: Params, a: AttributeProfile): Finding | undefined {
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
function tailFinding(ctx: CheckContext, p: Params, a: AttributeProfile): Finding | undefined {
  const cur = a.quantiles;
  if (cur?.length !== QUANTILE_POINTS.length) return undefined;
  const base = quantileBaseline(ctx.history, a, ctx.input.job_id, p.window);
  if (base.past.length < p.min_history) return undefined;
  const low = base.quantiles[P1]!;
  const high = base.quantiles[P99]!;
  const n = nonNull(a);
  const now = tailShares(cur, low, high, currentMass(a));
  // Every past scan measured by the same rule as this one (tailShares), so a fence a sketch's
  // quantile lands on in some scans and not in others reads the same share in all of them.
  const pastShares = base.past.map((j) => tailShares(j.quantiles, low, high, recordedMass(ctx, a, j.job)));
  const sides = (["below", "above"] as const)
    .map((side) => ({
      side,
      fence: side === "below" ? low : high,
      now: now[side],
      past: pastShares.map((t) => t[side].share),
    }))
    .filter((s) => (s.side === "below" ? p.stats.includes("min") : p.stats.includes("max")));
  for (const s of sides) {
    const history = base.past.map((j, i) => ({ job_id: j.job, time: j.time, value: s.past[i]!, excluded: false }));
    const share = s.now.share;
    const v = shareTest(history, ctx.input.job_id, share * n, n, {
      window: p.window,
      min_history: p.min_history,
      z: SPREAD_Z,
      margin: TAIL_MARGIN,
    });
    if (!v.fires) continue;
    // A phase of a cycle whose tails are its own (longer trips on Saturdays): only ever widens.
    const measured = measuredQuantiles(ctx, a).map((j) => ({
      ...j,
      value: tailShares(j.quantiles, low, high, recordedMass(ctx, a, j.job))[s.side].share,
    }));
    const seasonal = seasonalLimit(ctx, measured, share);
    let limit = v.limit;
    let deviation = v.deviation;
    let why = v.why;
    if (seasonal && seasonal.limit > limit) {
      if (!(share > seasonal.limit)) continue;
      limit = seasonal.limit;
      deviation = (share - seasonal.level) / Math.max(1e-12, limit - seasonal.level);
      why = `${why}${cycleText(seasonal.season, "tail shares")}`;
    }
    const stat = s.side === "below" ? "min" : "max";
    return {
      attribute: a.name,
      metric: attrMetric(a.name, `tail_${s.side}`),
      observed: round(share),
      metric_value: fmt(share),
      expected: { low: 0, high: round(limit) },
      description: `${shareText(s.now)} of the values of attribute ${a.name} (quantity) in ${assetName(ctx)} are ${s.side} ${fmt(s.fence)} (the ${s.side === "below" ? "1st" : "99th"} percentile of its last ${base.past.length} scans), above the allowed ${pct(limit)} (${why}); ${stat} ${fmt(Number(s.side === "below" ? a.min : a.max))}.`,
      strategy: limit > v.limit ? "tail_share_seasonal" : "tail_share",
      training_size: base.past.length,
      ...trainingWindow(base.from, base.to),
      deviation,
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

export const valueRangePolicy = definePolicy({
  id: "value_range",
  name: "Value range",
  description:
    "The mean or median of a quantity leaves the band its history predicts (never narrower than the values' grid); min and max: more values beyond the baseline's 1st or 99th percentile than the past scans had (a share test), never one record.",
  dimension: "accuracy",
  priority: "MEDIUM",
  kind: "anomaly",
  // No mean of a payment code, no median of a location id.
  fits: ["quantity"],
  scope: ["attribute", "segment"],
  after: [],
  params,
  defaults: { ...anomalyDefaults("value"), stats: [...VALUE_RANGE_STATS], ignore_attributes: [] },
  score: "penalty",
  bands: (metric) => metric.startsWith("attr:") && VALUE_RANGE_STATS.some((s) => metric.endsWith(`:${s}`)),
  details:
    "mean and p50 out of their band (≥ 2 % of the centre, ≥ the values' grid for p50; a weekly or daily cycle their history shows is taken out: judged against the same phase, strategy `seasonal`); min/max as tails: more values strictly beyond the baseline's p1/p99 than the past scans had (share test; where the past scans' tail shares follow a weekly or daily cycle, at least those of the same phase, strategy `tail_share_seasonal`; each scan's share, past or present, by one rule whether or not a quantile lands on the fence: the CDF interpolated between its quantiles, on a fence the point of its first quantile there, or, where the fence's value is a recorded atom, the values at or below it less that atom's share (a fence's own value, a point mass on it, is never a tail), within the range the quantiles prove, which the text states with their sketch's rank error); values below zero in a quantity whose minimum was never below zero (strategy `sign`, at most LOW: it may be one record)",
  check: valueRange,
});
