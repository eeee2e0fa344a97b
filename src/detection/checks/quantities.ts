/**
 * Quantities, numbers that are amounts, not labels: what value_range and distribution_drift share
 * (the baseline of the quantile profile, the investigator's shift), and distribution_drift's rules.
 *
 * - Drift is a Kolmogorov–Smirnov-like distance between the quantile profiles (the largest gap
 *   between the two CDFs at the baseline's quantiles), alerting above both the two-sample KS
 *   critical distance for the row counts and the distances the past scans themselves had.
 * - A point mass the quantiles cannot see (rows set to one value: a default, a stuck sensor) is the
 *   most frequent value's share rising beyond its history, by the share test (modeShare).
 */
import type { AttributeProfile } from "../../contracts/profile";
import { QUANTILE_POINTS } from "../../contracts/profile";
import { baselinePoints, median, spreadBound } from "../anomaly";
import { componentBaseline, quantileCdf } from "../divergence";
import { investigateShift } from "../investigate";
import { attrMetric, meanByMetric, nonNull, QUANTILE_STATS } from "../metrics";
import { ksCritical } from "../stats";
import type { MetricHistory } from "../types";
import {
  assetName,
  type CheckContext,
  type CheckResult,
  type Finding,
  fmt,
  investigating,
  kindOf,
  pct,
  round,
  SPREAD_Z,
  shareTest,
  trainingWindow,
  withInvestigation,
} from "./common";

/** Significance of the KS test: with ten thousand scans of hundreds of attributes, rare enough. */
const KS_ALPHA = 1e-6;

export interface QuantileBaseline {
  /** Per quantile point, the median over the past scans, made non-decreasing. */
  quantiles: number[];
  /** Each past scan's own quantile profile, oldest first. */
  past: Array<{ job: string; time: string; quantiles: number[] }>;
  from?: string;
  to?: string;
}

export function quantileBaseline(
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

/** The 1st and 99th percentiles' places in a quantile profile. */
export const P1 = QUANTILE_POINTS.indexOf(0.01);
export const P99 = QUANTILE_POINTS.indexOf(0.99);

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
