/**
 * What each prebuilt policy checks. A check reads the scan (profile and its metric points), the
 * history and its parameters, and returns findings (at most one per attribute) with the metric
 * points they exclude from future baselines, and the metrics still in training.
 */
import type { AssetProfile, AttributeProfile } from "../../scan/profile";
import { type AnomalyParams, type AnomalyResult, baselinePoints, detect, median } from "./anomaly";
import { alignShares, componentBaseline, jensenShannon, OTHER, psi, quantilePsi } from "./divergence";
import type { EvaluationInput } from "./input";
import {
  attrMetric,
  categoryShares,
  escapeName,
  isCategorical,
  isNumeric,
  nonNull,
  patternPrefix,
  QUANTILE_STATS,
  unescapeName,
  valuePrefix,
} from "./metrics";
import type { PolicyParams } from "./policies";
import type { Band, MetricHistory, PolicyAlert, PolicyId, TrainingState } from "./types";

export interface CheckContext {
  input: EvaluationInput;
  profile: AssetProfile;
  history: MetricHistory;
  /** This scan's metric values by name. */
  current: Map<string, number>;
  idAttributes: Set<string>;
}

export interface Finding {
  attribute?: string;
  metric: string;
  observed: number | string;
  metric_value?: string;
  expected?: Band | string;
  description: string;
  strategy?: string;
  training_window?: { from: string; to: string };
  training_size?: number;
  /** Metric points of this scan to keep out of future baselines. */
  exclude: string[];
}

export interface CheckResult {
  findings: Finding[];
  training: Omit<TrainingState, "policy">[];
}

export type Check<P extends PolicyId> = (
  ctx: CheckContext,
  params: PolicyParams<P>,
  earlier: readonly PolicyAlert[],
) => CheckResult;

/** A number as a reader wants it: integers whole, others to 4 significant digits. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(4)));
}

export function pct(rate: number): string {
  return `${(rate * 100).toFixed(1)}%`;
}

const round = (n: number) => Number(n.toPrecision(6));
const roundBand = (b: Band): Band => ({ low: round(b.low), high: round(b.high) });

function bandText(b: Band): string {
  return `${fmt(b.low)} to ${fmt(b.high)}`;
}

function strategyText(r: AnomalyResult, p: AnomalyParams): string {
  switch (r.strategy) {
    case "rate_of_change":
      return `rate of change against the previous scan, at most ${pct(p.max_change)}`;
    case "weekly_seasonal":
      return `weekly-seasonal baseline: robust z-score over ${r.window_size} past scans on the same weekday and hour, threshold ${p.threshold}`;
    default:
      return `robust z-score on median/MAD of the last ${r.window_size} scans, threshold ${p.threshold}`;
  }
}

function trainingWindow(from?: string, to?: string) {
  return from && to ? { training_window: { from, to } } : {};
}

function anomalyFields(r: AnomalyResult, p: AnomalyParams) {
  return {
    strategy: r.strategy,
    training_size: r.window_size,
    ...trainingWindow(r.from, r.to),
    strategyText: strategyText(r, p),
  };
}

function ignored(params: { ignore_attributes?: string[] }, a: AttributeProfile): boolean {
  return params.ignore_attributes?.includes(a.name) ?? false;
}

const assetName = (ctx: CheckContext) => ctx.input.asset.name;

export const rowCountAnomaly: Check<"row_count_anomaly"> = (ctx, p) => {
  const x = ctx.profile.row_count;
  const r = detect(ctx.history.row_count, x, ctx.input.job_id, ctx.input.scan_time, p);
  if (r.state === "training") {
    return { findings: [], training: [{ metric: "row_count", points: r.window_size, needed: r.needed }] };
  }
  if (!r.anomalous || !r.expected) return { findings: [], training: [] };
  const { strategyText: how, ...fields } = anomalyFields(r, p);
  return {
    findings: [
      {
        metric: "row_count",
        observed: x,
        expected: roundBand(r.expected),
        description: `Row count of ${assetName(ctx)} is ${x}, outside the expected ${bandText(r.expected)} (${how}).`,
        ...fields,
        exclude: ["row_count"],
      },
    ],
    training: [],
  };
};

export const completeness: Check<"completeness"> = (ctx, p) => {
  const findings: Finding[] = [];
  for (const a of ctx.profile.attributes) {
    if (ignored(p, a) || a.count <= 0) continue;
    const metric = attrMetric(a.name, "missing_rate");
    const rate = (a.nulls + a.empties) / a.count;
    const past = baselinePoints(ctx.history[metric], ctx.input.job_id).slice(-p.window);
    const usual = past.length > 0 ? median(past.map((h) => h.value)) : undefined;
    // A column that is usually 30 % empty is not news at 31 %; one that is usually full is at 6 %.
    const limit = usual === undefined ? p.max_rate : Math.max(p.max_rate, usual + p.margin);
    if (!(rate > limit)) continue;
    const why =
      usual === undefined
        ? "no history yet"
        : `the larger of ${pct(p.max_rate)} and its usual ${pct(usual)} plus ${pct(p.margin)}`;
    findings.push({
      attribute: a.name,
      metric,
      observed: round(rate),
      metric_value: fmt(rate),
      expected: { low: 0, high: round(limit) },
      description: `${pct(rate)} of the values of attribute ${a.name} in ${assetName(ctx)} are null or empty (${a.nulls} null, ${a.empties} empty of ${a.count}), above the allowed ${pct(limit)} (${why}).`,
      strategy: "threshold",
      training_size: past.length,
      ...trainingWindow(past[0]?.time, past[past.length - 1]?.time),
      exclude: [metric, attrMetric(a.name, "null_rate"), attrMetric(a.name, "empty_rate")],
    });
  }
  return { findings, training: [] };
};

export const typeMismatch: Check<"type_mismatch"> = (ctx, p) => {
  const findings: Finding[] = [];
  for (const a of ctx.profile.attributes) {
    const present = nonNull(a);
    if (ignored(p, a) || present <= 0) continue;
    const rate = a.type_mismatches / present;
    if (!(rate > p.max_rate)) continue;
    const metric = attrMetric(a.name, "type_mismatch_rate");
    findings.push({
      attribute: a.name,
      metric,
      observed: round(rate),
      metric_value: fmt(rate),
      expected: { low: 0, high: p.max_rate },
      description: `${pct(rate)} of the non-null values of attribute ${a.name} in ${assetName(ctx)} are not of type ${a.declared_type ?? a.inferred_type} (${a.type_mismatches} of ${present}), above the allowed ${pct(p.max_rate)}.`,
      strategy: "threshold",
      exclude: [metric],
    });
  }
  return { findings, training: [] };
};

/** Inferred types an attribute can be a key of. */
const KEY_TYPES = new Set(["integer", "string"]);

export const uniqueness: Check<"uniqueness"> = (ctx, p) => {
  const findings: Finding[] = [];
  const ids = [...ctx.idAttributes];
  const dup = ctx.profile.duplicate_count;
  const dupFired = ids.length > 0 && dup !== undefined && dup > p.max_duplicates;
  if (dupFired) {
    findings.push({
      attribute: ids.join(","),
      metric: "duplicate_count",
      observed: dup,
      expected: { low: 0, high: p.max_duplicates },
      description: `${dup} rows of ${assetName(ctx)} repeat the id (${ids.join(", ")}) of an earlier row; expected ${p.max_duplicates === 0 ? "none" : `at most ${p.max_duplicates}`}.`,
      strategy: "threshold",
      exclude: ["duplicate_count"],
    });
  }
  if (!p.watch_unique_attributes) return { findings, training: [] };
  for (const a of ctx.profile.attributes) {
    const present = nonNull(a);
    // A lost key is already reported by the duplicate count.
    if (ignored(p, a) || present < 2 || (dupFired && ctx.idAttributes.has(a.name))) continue;
    // Only integers and strings are keys; measures and timestamps are unique by chance and
    // lose it by chance (two events in the same millisecond are not a data problem).
    if (!KEY_TYPES.has(a.inferred_type) || a.name === ctx.input.asset.timestamp_attribute) continue;
    // An estimated distinct count is within ~2 %: do not read estimation noise as lost uniqueness.
    const tolerance = a.distinct_exact ? 0 : 0.03;
    const metric = attrMetric(a.name, "unique_ratio");
    const ratio = Math.min(1, a.distinct / present);
    const past = baselinePoints(ctx.history[metric], ctx.input.job_id).slice(-p.window);
    const wasUnique = past.length >= p.min_unique_scans && past.every((h) => h.value >= 1 - tolerance);
    if (!wasUnique || ratio >= 1 - tolerance) continue;
    findings.push({
      attribute: a.name,
      metric,
      observed: round(ratio),
      metric_value: fmt(ratio),
      expected: { low: 1 - tolerance, high: 1 },
      description: `Attribute ${a.name} of ${assetName(ctx)} was unique in the last ${past.length} scans and now has ${a.distinct} distinct values among ${present} (${pct(ratio)} unique).`,
      strategy: "threshold",
      training_size: past.length,
      ...trainingWindow(past[0]?.time, past[past.length - 1]?.time),
      exclude: [metric],
    });
  }
  return { findings, training: [] };
};

export const schemaChange: Check<"schema_change"> = (ctx, p) => {
  const before = ctx.input.previous_schema;
  if (!before) return { findings: [], training: [] };
  const now = new Map(ctx.profile.schema.map((f) => [f.name, f]));
  const was = new Map(before.map((f) => [f.name, f]));
  const findings: Finding[] = [];
  const asset = assetName(ctx);
  for (const f of before) {
    const g = now.get(f.name);
    if (!g && p.removed) {
      findings.push({
        attribute: f.name,
        metric: "schema",
        observed: "removed",
        metric_value: "removed",
        expected: `present (${f.type})`,
        description: `Attribute ${f.name} (${f.type}) was removed from ${asset} since the previous scan.`,
        exclude: [],
      });
    } else if (g && g.type !== f.type && p.type_changed) {
      findings.push({
        attribute: f.name,
        metric: "schema",
        observed: g.type,
        metric_value: `type ${f.type} -> ${g.type}`,
        expected: f.type,
        description: `Attribute ${f.name} of ${asset} changed type from ${f.type} to ${g.type} since the previous scan.`,
        exclude: [],
      });
    }
  }
  for (const g of ctx.profile.schema) {
    if (was.has(g.name) || !p.added) continue;
    findings.push({
      attribute: g.name,
      metric: "schema",
      observed: `added (${g.type})`,
      metric_value: "added",
      expected: "absent",
      description: `Attribute ${g.name} (${g.type}) was added to ${asset} since the previous scan.`,
      exclude: [],
    });
  }
  return { findings, training: [] };
};

export const freshness: Check<"freshness"> = (ctx, p) => {
  const ts = ctx.input.asset.timestamp_attribute;
  if (!ts) return { findings: [], training: [] };
  const newest = ctx.profile.freshness;
  if (!newest) {
    if (ctx.profile.row_count <= 0) return { findings: [], training: [] };
    return {
      findings: [
        {
          attribute: ts,
          metric: "freshness_age_hours",
          observed: "unknown",
          metric_value: "unknown",
          expected: { low: 0, high: p.max_age_hours },
          description: `Timestamp attribute ${ts} of ${assetName(ctx)} has no values, so the data's age is unknown; expected at most ${fmt(p.max_age_hours)} h.`,
          strategy: "threshold",
          exclude: [],
        },
      ],
      training: [],
    };
  }
  const age = ctx.current.get("freshness_age_hours");
  if (age === undefined || !(age > p.max_age_hours)) return { findings: [], training: [] };
  return {
    findings: [
      {
        attribute: ts,
        metric: "freshness_age_hours",
        observed: round(age),
        metric_value: fmt(age),
        expected: { low: 0, high: p.max_age_hours },
        description: `The newest ${ts} in ${assetName(ctx)} is ${newest}, ${fmt(age)} h before the scan at ${ctx.input.scan_time}; expected at most ${fmt(p.max_age_hours)} h.`,
        strategy: "threshold",
        exclude: ["freshness_age_hours"],
      },
    ],
    training: [],
  };
};

export const valueRange: Check<"value_range"> = (ctx, p) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  for (const a of ctx.profile.attributes) {
    // Ids are labels, not quantities: their range moves with the row count.
    if (ignored(p, a) || !isNumeric(a) || ctx.idAttributes.has(a.name)) continue;
    const out: Array<{ stat: string; metric: string; x: number; r: AnomalyResult }> = [];
    for (const stat of p.stats) {
      const metric = attrMetric(a.name, stat);
      const x = ctx.current.get(metric);
      if (x === undefined) continue;
      const r = detect(ctx.history[metric], x, ctx.input.job_id, ctx.input.scan_time, p);
      if (r.state === "training") training.push({ metric, attribute: a.name, points: r.window_size, needed: r.needed });
      else if (r.anomalous) out.push({ stat, metric, x, r });
    }
    if (out.length === 0) continue;
    out.sort((u, v) => v.r.score - u.r.score);
    const [first, ...rest] = out as [(typeof out)[number], ...typeof out];
    const { strategyText: how, ...fields } = anomalyFields(first.r, p);
    const also = rest.map((o) => `; also ${o.stat} ${fmt(o.x)} (expected ${bandText(o.r.expected!)})`).join("");
    findings.push({
      attribute: a.name,
      metric: first.metric,
      observed: round(first.x),
      metric_value: fmt(first.x),
      expected: roundBand(first.r.expected!),
      description: `The ${first.stat} of attribute ${a.name} in ${assetName(ctx)} is ${fmt(first.x)}, outside the expected ${bandText(first.r.expected!)} (${how})${also}.`,
      ...fields,
      exclude: out.map((o) => o.metric),
    });
  }
  return { findings, training };
};

export const distributionDrift: Check<"distribution_drift"> = (ctx, p) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  for (const a of ctx.profile.attributes) {
    if (ignored(p, a) || ctx.idAttributes.has(a.name)) continue;
    const categorical = isCategorical(a);
    if (!categorical && !(isNumeric(a) && a.quantiles?.length === QUANTILE_STATS.length)) continue;
    const metric = attrMetric(a.name, categorical ? "category_psi" : "quantile_psi");
    const quantileMetrics = QUANTILE_STATS.map((s) => attrMetric(a.name, s));
    const base = categorical
      ? componentBaseline(ctx.history, { prefix: valuePrefix(a.name) }, ctx.input.job_id, p.window, 0)
      : componentBaseline(ctx.history, { metrics: quantileMetrics }, ctx.input.job_id, p.window, undefined);
    if (base.scans < p.min_history) {
      training.push({ metric, attribute: a.name, points: base.scans, needed: p.min_history });
      continue;
    }
    // Too few values make any distribution look different.
    if (nonNull(a) < p.min_values) continue;
    let score: number;
    let detail: string;
    let exclude: string[];
    if (categorical) {
      const now = new Map([...categoryShares(a)].map(([v, s]) => [escapeName(v), s]));
      const aligned = alignShares(base.values, now);
      score = psi(aligned.expected, aligned.actual);
      let top = 0;
      for (let i = 1; i < aligned.names.length; i++) {
        const d = (j: number) => Math.abs(aligned.actual[j]! - aligned.expected[j]!);
        if (d(i) > d(top)) top = i;
      }
      const name = aligned.names[top]!;
      detail = `over ${aligned.names.length} categories; largest change: ${name === OTHER ? "other values" : `"${unescapeName(name)}"`} ${pct(aligned.expected[top]!)} -> ${pct(aligned.actual[top]!)}`;
      exclude = [...now.keys()].map((v) => `${valuePrefix(a.name)}${v}`);
    } else {
      const baseline = quantileMetrics.map((m) => base.values.get(m));
      if (baseline.some((v) => v === undefined)) continue;
      // Medians taken per quantile need not be ordered; a quantile function must be.
      let running = Number.NEGATIVE_INFINITY;
      const q = baseline.map((v) => {
        running = Math.max(running, v!);
        return running;
      });
      const cur = a.quantiles!;
      const result = quantilePsi(q, cur);
      score = result.psi;
      const mid = QUANTILE_STATS.indexOf("p50");
      detail = `over ${result.bins} quantile bins; median ${fmt(q[mid]!)} -> ${fmt(cur[mid]!)}, 1st to 99th percentile ${fmt(q[1]!)}..${fmt(q[q.length - 2]!)} -> ${fmt(cur[1]!)}..${fmt(cur[cur.length - 2]!)}`;
      exclude = quantileMetrics;
    }
    if (!(score > p.threshold)) continue;
    findings.push({
      attribute: a.name,
      metric,
      observed: round(score),
      metric_value: fmt(score),
      expected: { low: 0, high: p.threshold },
      description: `The value distribution of attribute ${a.name} in ${assetName(ctx)} drifted from its baseline of the last ${base.scans} scans: PSI ${fmt(score)} above ${fmt(p.threshold)} ${detail}.`,
      strategy: categorical ? "psi_categories" : "psi_quantiles",
      training_size: base.scans,
      ...trainingWindow(base.from, base.to),
      exclude,
    });
  }
  return { findings, training };
};

export const patternDrift: Check<"pattern_drift"> = (ctx, p) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  for (const a of ctx.profile.attributes) {
    // Numeric shapes follow the values, which value_range and distribution_drift watch.
    if (ignored(p, a) || isNumeric(a) || a.patterns.length === 0) continue;
    const metric = attrMetric(a.name, "pattern_js");
    const prefix = patternPrefix(a.name);
    const base = componentBaseline(ctx.history, { prefix }, ctx.input.job_id, p.window, 0);
    if (base.scans < p.min_history) {
      training.push({ metric, attribute: a.name, points: base.scans, needed: p.min_history });
      continue;
    }
    if (nonNull(a) < p.min_values) continue;
    const now = new Map(a.patterns.map((pt) => [escapeName(pt.pattern), pt.share]));
    const aligned = alignShares(base.values, now);
    const js = jensenShannon(aligned.expected, aligned.actual);
    if (!(js > p.threshold)) continue;
    const dominant = (m: ReadonlyMap<string, number>) =>
      [...m.entries()].sort((u, v) => v[1] - u[1] || (u[0] < v[0] ? -1 : 1))[0];
    const usual = dominant(base.values);
    const current = dominant(now);
    const usualText = usual
      ? `; the usual dominant pattern "${unescapeName(usual[0])}" covers ${pct(now.get(usual[0]) ?? 0)} of the values (usually ${pct(usual[1])})`
      : "";
    const nowText = current ? `, the most frequent now is "${unescapeName(current[0])}" (${pct(current[1])})` : "";
    findings.push({
      attribute: a.name,
      metric,
      observed: round(js),
      metric_value: fmt(js),
      expected: { low: 0, high: p.threshold },
      description: `The value patterns of attribute ${a.name} in ${assetName(ctx)} changed from its baseline of the last ${base.scans} scans: Jensen-Shannon divergence ${fmt(js)} above ${fmt(p.threshold)}${usualText}${nowText}.`,
      strategy: "jensen_shannon_patterns",
      training_size: base.scans,
      ...trainingWindow(base.from, base.to),
      exclude: [...[...now.keys()].map((k) => `${prefix}${k}`), attrMetric(a.name, "top_pattern_share")],
    });
  }
  return { findings, training };
};

export const cardinalityDrift: Check<"cardinality_drift"> = (ctx, p, earlier) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  // A lost key explains its distinct drop; uniqueness has already said so.
  const flagged = new Set(earlier.filter((al) => al.policy === "uniqueness").map((al) => al.attribute));
  for (const a of ctx.profile.attributes) {
    if (ignored(p, a) || ctx.idAttributes.has(a.name) || flagged.has(a.name)) continue;
    const metric = attrMetric(a.name, "distinct");
    const r = detect(ctx.history[metric], a.distinct, ctx.input.job_id, ctx.input.scan_time, p);
    if (r.state === "training") {
      training.push({ metric, attribute: a.name, points: r.window_size, needed: r.needed });
      continue;
    }
    if (!r.anomalous || !r.expected || r.baseline === undefined) continue;
    // Fewer (more) values can only show fewer (more) distinct ones, and at most in proportion:
    // scale the band by the change in non-null values so a row drop is row_count's alert alone.
    const pastValues = baselinePoints(ctx.history[attrMetric(a.name, "non_null")], ctx.input.job_id)
      .slice(-Math.max(p.window, p.min_history))
      .map((h) => h.value);
    const usualValues = pastValues.length > 0 ? median(pastValues) : nonNull(a);
    const f = usualValues > 0 ? nonNull(a) / usualValues : 1;
    const half = (r.expected.high - r.expected.low) / 2;
    const band = { low: Math.min(1, f) * r.baseline - half, high: Math.max(1, f) * r.baseline + half };
    if (a.distinct >= band.low && a.distinct <= band.high) continue;
    const { strategyText: how, ...fields } = anomalyFields(r, p);
    const scaled = f === 1 ? "" : `, scaled to ${nonNull(a)} non-null values against the usual ${fmt(usualValues)}`;
    findings.push({
      attribute: a.name,
      metric,
      observed: a.distinct,
      expected: roundBand(band),
      description: `Attribute ${a.name} of ${assetName(ctx)} has ${a.distinct} distinct values, outside the expected ${bandText(band)} (${how}${scaled}).`,
      ...fields,
      exclude: [metric],
    });
  }
  return { findings, training };
};
