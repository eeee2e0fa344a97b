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
import type { HistoryPoint } from "../../contracts/asset-monitor";
import type { AttributeProfile } from "../../contracts/profile";
import { QUANTILE_POINTS } from "../../contracts/profile";
import { baselinePoints, DEFAULT_ANOMALY_PARAMS, median, type Season, seasonalBaseline, spreadBound } from "../anomaly";
import { type Atom, componentBaseline, continuousKnots, quantileCdf } from "../divergence";
import { investigateShift } from "../investigate";
import { atomStat, attrMetric, meanByMetric, nonNull, QUANTILE_STATS, unescapeName } from "../metrics";
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

/**
 * Each past scan's quantile profile as measured (flagged scans included, as seasonalBaseline reads
 * a history), oldest first: what a cycle of a quantity's shape is looked for in.
 */
export function measuredQuantiles(
  ctx: CheckContext,
  a: AttributeProfile,
): Array<{ job: string; time: string; quantiles: number[] }> {
  const metrics = QUANTILE_STATS.map((s) => attrMetric(a.name, s));
  const byJob = new Map<string, { time: string; quantiles: number[] }>();
  for (const m of metrics) {
    for (const h of baselinePoints(ctx.history[m], ctx.input.job_id, true)) {
      const scan = byJob.get(h.job_id) ?? { time: h.time, quantiles: [] };
      scan.quantiles.push(h.value);
      byJob.set(h.job_id, scan);
    }
  }
  return [...byJob.entries()]
    .filter(([, scan]) => scan.quantiles.length === metrics.length)
    .map(([job, scan]) => ({ job, ...scan }))
    .sort((x, y) => Date.parse(x.time) - Date.parse(y.time));
}

/**
 * How high a measure of a quantity's shape (a KS distance, a tail share) may be when its past
 * values follow a cycle: the top of seasonalBaseline's band for `x` over `series` (each past scan's
 * measure), with the cycle; undefined when they show none.
 */
export function seasonalLimit(
  ctx: CheckContext,
  series: ReadonlyArray<{ job: string; time: string; value: number }>,
  x: number,
): { limit: number; level: number; season: Season } | undefined {
  const points = series.map((s) => ({ job_id: s.job, time: s.time, value: s.value, excluded: false }));
  const r = seasonalBaseline(points, x, ctx.input.scan_time, { ...DEFAULT_ANOMALY_PARAMS, threshold: SPREAD_Z });
  return r?.season && r.expected
    ? { limit: r.expected.high, level: r.season.phase_level, season: r.season }
    : undefined;
}

/** What a text says of the cycle a limit followed: ", or … (Saturday: 8 scans)". */
export function cycleText(season: Season, of: string): string {
  const cycle = season.cycle === "scans" ? "cycle of 7 scans" : `${season.cycle} cycle`;
  return `, or of the past scans of its phase of a ${cycle} in the ${of} (${season.phase}: ${season.phase_points} scans)`;
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
  const atoms = atomsOf(ctx, a, base, n, p.min_history);
  if (atoms) return { finding: atomDrift(ctx, p, a, base, atoms, n) };
  const { d, at } = ksDistance(base.quantiles, cur);
  const pastD = base.past.map((j) => ksDistance(base.quantiles, j.quantiles).d);
  const centre = median(pastD);
  const learned = centre + spreadBound(pastD, centre, SPREAD_Z);
  const critical = ksCritical(n, n * base.past.length, KS_ALPHA);
  let limit = Math.max(learned, critical);
  if (!(d > limit)) return {};
  // A phase of a cycle whose distances are its own (only ever widens: the other phases keep theirs).
  const measured = measuredQuantiles(ctx, a).map((j) => ({ ...j, value: ksDistance(base.quantiles, j.quantiles).d }));
  const seasonal = seasonalLimit(ctx, measured, d);
  let cycle = "";
  if (seasonal && seasonal.limit > limit) {
    limit = seasonal.limit;
    if (!(d > limit)) return {};
    cycle = cycleText(seasonal.season, "distances");
  }
  const mid = QUANTILE_STATS.indexOf("p50");
  const q = base.quantiles;
  return {
    finding: {
      attribute: a.name,
      metric,
      observed: round(d),
      metric_value: fmt(d),
      expected: { low: 0, high: round(limit) },
      description: `The value distribution of attribute ${a.name} (quantity) in ${assetName(ctx)} drifted from its baseline of the last ${base.past.length} scans: the CDFs differ by ${pct(d)} at ${fmt(at)}, above the allowed ${pct(limit)} (the larger of the KS critical distance ${pct(critical)} for ${n} values and the past scans' own distances${cycle}); median ${fmt(q[mid]!)} -> ${fmt(cur[mid]!)}, 1st to 99th percentile ${fmt(q[P1]!)}..${fmt(q[P99]!)} -> ${fmt(cur[P1]!)}..${fmt(cur[P99]!)}.`,
      strategy: cycle ? "ks_quantiles_seasonal" : "ks_quantiles",
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

/** An exact value holding at least this share of a quantity's values is judged as a category (an atom). */
const ATOM_SHARE = 0.05;

/** The fewest quantiles inside a quantity's continuous part for KS to judge it. */
const MIN_KNOTS = 2;

/** An atom of a quantity: its share in this scan and in each past scan of the baseline. */
interface AtomSeries {
  value: string;
  metric: string;
  count: number;
  /** The baseline's scans' shares, oldest first (0 where it held less than ATOM_RECORD_SHARE). */
  past: HistoryPoint[];
}

/**
 * The atoms of a quantity (values holding ATOM_SHARE of this scan or of its baseline's median), with
 * their shares in the baseline's scans; undefined when it has none, or when its history does not
 * record atoms (a history from before they were recorded: the quantiles alone judge it).
 */
function atomsOf(
  ctx: CheckContext,
  a: AttributeProfile,
  base: QuantileBaseline,
  n: number,
  minHistory: number,
): AtomSeries[] | undefined {
  const prefix = attrMetric(a.name, atomStat(""));
  const jobs = new Set(base.past.map((j) => j.job));
  const byMetric = new Map<string, Map<string, number>>();
  for (const [m, points] of Object.entries(ctx.history)) {
    if (!m.startsWith(prefix)) continue;
    const byJob = new Map<string, number>();
    for (const h of points ?? []) if (jobs.has(h.job_id)) byJob.set(h.job_id, h.value);
    if (byJob.size > 0) byMetric.set(m, byJob);
  }
  const recorded = new Set([...byMetric.values()].flatMap((byJob) => [...byJob.keys()]));
  if (recorded.size < minHistory) return undefined;
  const values = new Set<string>();
  for (const t of a.top_values) if (t.count / n >= ATOM_SHARE && Number.isFinite(Number(t.value))) values.add(t.value);
  for (const [m, byJob] of byMetric) {
    if (median(base.past.map((j) => byJob.get(j.job) ?? 0)) >= ATOM_SHARE)
      values.add(unescapeName(m.slice(prefix.length)));
  }
  if (values.size === 0) return undefined;
  return [...values].map((value) => {
    const metric = attrMetric(a.name, atomStat(value));
    const byJob = byMetric.get(metric);
    return {
      value,
      metric,
      count: a.top_values.find((t) => t.value === value)?.count ?? 0,
      past: base.past.map((j) => ({ job_id: j.job, time: j.time, value: byJob?.get(j.job) ?? 0, excluded: false })),
    };
  });
}

/**
 * The smallest CDF gap between two continuous parts (knots) that their knots prove: at each knot
 * of one (not an atom, not an end), its CDF against the other's bounds there (a CDF is monotone:
 * between two knots it lies between their values), since a line between few knots is no CDF.
 */
function knotDistance(
  base: ReadonlyArray<readonly [number, number]>,
  current: ReadonlyArray<readonly [number, number]>,
  atoms: readonly Atom[],
): { d: number; at: number } {
  let d = 0;
  let at = base[0]?.[0] ?? 0;
  const sweep = (own: ReadonlyArray<readonly [number, number]>, other: ReadonlyArray<readonly [number, number]>) => {
    for (let i = 1; i < own.length - 1; i++) {
      const [t, g] = own[i]!;
      if (atoms.some((x) => x.value === t)) continue;
      const [lo, hi] = knotBounds(other, t);
      const gap = Math.max(0, lo - g, g - hi);
      if (gap > d) {
        d = gap;
        at = t;
      }
    }
  };
  sweep(base, current);
  sweep(current, base);
  return { d, at };
}

/** Where the CDF of knots (x, G(x)) sorted by x can be at `t`: between the knots around it. */
function knotBounds(knots: ReadonlyArray<readonly [number, number]>, t: number): [number, number] {
  let lo = 0;
  let hi = 1;
  for (const [x, g] of knots) {
    if (x <= t) lo = Math.max(lo, g);
    if (x >= t) hi = Math.min(hi, g);
  }
  return [lo, Math.max(lo, hi)];
}

/**
 * distribution_drift of a quantity with atoms: each atom's share as a category (the share test,
 * both ways, against its past scans), then the rest of the values by KS on their own CDF (the
 * quantiles less the atoms), so a share of zeros moving within its usual range is no drift.
 */
function atomDrift(
  ctx: CheckContext,
  p: { window: number; min_history: number; min_values: number },
  a: AttributeProfile,
  base: QuantileBaseline,
  atoms: AtomSeries[],
  n: number,
): Finding | undefined {
  const test = { window: p.window, min_history: p.min_history, ...MODE_SHARE };
  const trained = { ...trainingWindow(base.from, base.to), training_size: base.past.length, adaptable: true };
  for (const x of atoms) {
    const share = x.count / n;
    const up = shareTest(x.past, ctx.input.job_id, x.count, n, test);
    const flipped = x.past.map((h) => ({ ...h, value: 1 - h.value }));
    const down = shareTest(flipped, ctx.input.job_id, n - x.count, n, test);
    const v = up.fires ? up : down.fires ? down : undefined;
    if (!v || v.usual === undefined) continue;
    const low = up.fires ? 0 : 1 - v.limit;
    const high = up.fires ? v.limit : 1;
    const usual = up.fires ? v.usual : 1 - v.usual;
    return {
      attribute: a.name,
      metric: x.metric,
      observed: round(share),
      metric_value: fmt(share),
      expected: { low: round(low), high: round(high) },
      description: `The share of the value ${x.value} of attribute ${a.name} (quantity) in ${assetName(ctx)} is ${pct(share)} (${x.count} of ${n}), ${up.fires ? `above the allowed ${pct(high)}` : `below the allowed ${pct(low)}`} (its usual ${pct(usual)} over the last ${base.past.length} scans; a value holding ${pct(ATOM_SHARE)} of the values or more is judged as a category).`,
      strategy: "wilson_share",
      ...trained,
      deviation: v.deviation,
      exclude: [x.metric, ...QUANTILE_STATS.map((s) => attrMetric(a.name, s))],
    };
  }
  const at = (shares: (x: AtomSeries) => number): Atom[] =>
    atoms.map((x) => ({ value: Number(x.value), share: shares(x) }));
  const baseAtoms = at((x) => median(x.past.map((h) => h.value)));
  const baseKnots = continuousKnots(base.quantiles, baseAtoms);
  const curAtoms = at((x) => x.count / n);
  const rest = Math.round(n * (1 - curAtoms.reduce((s, x) => s + x.share, 0)));
  const cur = a.quantiles ?? [];
  // The rest known by fewer quantiles than MIN_KNOTS inside it is a line between its ends, not a CDF
  // to compare (its tails are value_range's).
  const inside = baseKnots.slice(1, -1).filter(([x]) => !baseAtoms.some((b) => b.value === x));
  if (rest < p.min_values || inside.length < MIN_KNOTS) return undefined;
  const { d, at: where } = knotDistance(baseKnots, continuousKnots(cur, curAtoms), baseAtoms);
  const pastD = base.past.map((j, i) => {
    const own = at((x) => x.past[i]!.value);
    return knotDistance(baseKnots, continuousKnots(j.quantiles, own), baseAtoms).d;
  });
  const centre = median(pastD);
  const learned = centre + spreadBound(pastD, centre, SPREAD_Z);
  const critical = ksCritical(rest, rest * base.past.length, KS_ALPHA);
  const limit = Math.max(learned, critical);
  if (!(d > limit)) return undefined;
  const names = atoms.map((x) => x.value).join(", ");
  return {
    attribute: a.name,
    metric: attrMetric(a.name, "ks"),
    observed: round(d),
    metric_value: fmt(d),
    expected: { low: 0, high: round(limit) },
    description: `The value distribution of attribute ${a.name} (quantity) in ${assetName(ctx)} other than ${atoms.length === 1 ? "the value" : "the values"} ${names} drifted from its baseline of the last ${base.past.length} scans: the CDFs of those ${rest} values differ by ${pct(d)} at ${fmt(where)}, above the allowed ${pct(limit)} (the larger of the KS critical distance ${pct(critical)} and the past scans' own distances); ${atoms.length === 1 ? `the share of ${names} stayed within its usual range` : `the shares of ${names} stayed within their usual ranges`}.`,
    strategy: "ks_quantiles",
    ...trained,
    deviation: limit > 0 ? d / limit : 1,
    exclude: QUANTILE_STATS.map((s) => attrMetric(a.name, s)),
  };
}
