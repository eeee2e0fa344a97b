/**
 * The named time series a scan adds to an asset's history, extracted from its profile.
 *
 * Names: `row_count`, `duplicate_count`, `freshness_age_hours`, and per attribute
 * `attr:<name>:<stat>` with stat one of null_rate, empty_rate, missing_rate, non_null, distinct,
 * unique_ratio, type_mismatch_rate, top_pattern_share, and for numeric attributes mean, stddev,
 * min, max, p0 … p100 (at QUANTILE_POINTS); plus the shares of the distributions the drift
 * policies compare: `attr:<name>:pattern:<pattern>` and, for categorical attributes,
 * `attr:<name>:value:<value>`; and, from the investigator's breakdown, the mean of a quantity per
 * value of a low-cardinality attribute, `attr:<name>:mean_by:<attribute>:<value>`. Attribute names,
 * patterns and values are escaped (`%` and `:`)
 * so a name can never read as another metric's prefix.
 */

import { type AssetProfile, type AttributeProfile, QUANTILE_POINTS } from "../contracts/profile";
import type { AttributeKind } from "../db/schema";
import type { AssetRef, MetricPoint } from "./types";

/** How a metric varies, which sets the smallest change worth an alert. */
export type MetricKind = "count" | "distinct" | "rate" | "value";

/**
 * The smallest change an anomaly may have, per kind: max(absolute, relative × |baseline|). Keeps
 * small tables quiet (10 rows more or less is never news) and very stable series from alerting
 * on a change of a hair.
 */
export const MIN_CHANGE_BY_KIND: Record<MetricKind, { absolute: number; relative: number }> = {
  // Batches of a steady size: ±10 rows is no band for 10,000 rows, half a percent is.
  count: { absolute: 10, relative: 0.005 },
  distinct: { absolute: 5, relative: 0 },
  rate: { absolute: 0.02, relative: 0 },
  value: { absolute: 0, relative: 0.02 },
};

/** Attributes with at most this many distinct values, all of them in top_values, are categorical. */
export const MAX_CATEGORIES = 20;

export const QUANTILE_STATS = QUANTILE_POINTS.map((p) => `p${Math.round(p * 100)}`);

/** Escapes what would make a name ambiguous inside a metric name. */
export function escapeName(name: string): string {
  // Most names have neither character: no new string (a scan's checks escape each name many times).
  if (!name.includes("%") && !name.includes(":")) return name;
  return name.replaceAll("%", "%25").replaceAll(":", "%3A");
}

/** A quantity's value holding at least this share of its values is recorded as an atom (atomStat). */
export const ATOM_RECORD_SHARE = 0.01;

/** The stat of an atom's share: `atom:<value>`. */
export function atomStat(value: string): string {
  return `atom:${escapeName(value)}`;
}

export function unescapeName(name: string): string {
  return name.replaceAll("%3A", ":").replaceAll("%25", "%");
}

/** `attr:<name>:<stat>`. */
export function attrMetric(attribute: string, stat: string): string {
  return `attr:${escapeName(attribute)}:${stat}`;
}

/**
 * `attr:<target>:mean_by:<attribute>:<value>`: the mean of a quantity within the rows holding one
 * value of a breakdown attribute (the investigator compares it with its own history).
 */
export function meanByMetric(target: string, attribute: string, value: string): string {
  return attrMetric(target, `mean_by:${escapeName(attribute)}:${escapeName(value)}`);
}

/** Per-value means a scan keeps at most (breakdown attributes × values × quantities). */
export const MAX_MEAN_BY_METRICS = 200;

/** Prefix of the pattern-share metrics of an attribute. */
export function patternPrefix(attribute: string): string {
  return attrMetric(attribute, "pattern:");
}

/** Prefix of the category-share metrics of an attribute. */
export function valuePrefix(attribute: string): string {
  return attrMetric(attribute, "value:");
}

export function isNumeric(a: AttributeProfile): boolean {
  return (a.inferred_type === "integer" || a.inferred_type === "number") && typeof a.mean === "number";
}

/** Non-null values of an attribute. */
export function nonNull(a: AttributeProfile): number {
  return Math.max(0, a.count - a.nulls);
}

/** Whether the attribute had a value to type: one neither null nor empty. */
export function hasValues(a: AttributeProfile): boolean {
  return a.count - a.nulls - a.empties > 0;
}

/**
 * Categorical: few distinct values, exactly counted, every one of them in top_values, so their
 * shares are the whole distribution (and a quantile profile of tied values would be jumpy).
 */
export function isCategorical(a: AttributeProfile): boolean {
  return a.distinct <= MAX_CATEGORIES && listsEveryValue(a);
}

/** Whether top_values holds every value of the attribute with its exact count, however many. */
export function listsEveryValue(a: AttributeProfile): boolean {
  const listed = a.top_values.reduce((s, t) => s + t.count, 0);
  return a.distinct_exact && a.distinct > 0 && a.top_values.length === a.distinct && listed === nonNull(a);
}

/** Shares of the categories of a categorical attribute, by value. */
export function categoryShares(a: AttributeProfile): Map<string, number> {
  const total = nonNull(a);
  return new Map(a.top_values.map((t) => [t.value, total > 0 ? t.count / total : 0]));
}

const HOUR_MS = 3_600_000;

/** Every metric point of a scan. `scanTime` is the scan's ISO time (freshness is relative to it). */
export function extractMetrics(
  profile: AssetProfile,
  asset: AssetRef,
  scanTime: string,
  kinds: Readonly<Record<string, AttributeKind>> = {},
): MetricPoint[] {
  const points: MetricPoint[] = [{ metric: "row_count", value: profile.row_count }];
  if (profile.duplicate_count !== undefined && (asset.id_attributes?.length ?? 0) > 0) {
    points.push({ metric: "duplicate_count", value: profile.duplicate_count });
  }
  if (profile.duplicate_rows !== undefined && profile.row_count > 0) {
    points.push({ metric: "duplicate_row_rate", value: profile.duplicate_rows / profile.row_count });
  }
  if (asset.timestamp_attribute && profile.freshness) {
    const age = (Date.parse(scanTime) - Date.parse(profile.freshness)) / HOUR_MS;
    if (Number.isFinite(age)) points.push({ metric: "freshness_age_hours", value: age });
  }
  for (const a of profile.attributes) points.push(...attributeMetrics(a, kinds[a.name]));
  points.push(...meanByMetrics(profile, kinds));
  return points.filter((p) => Number.isFinite(p.value));
}

/** The per-value means of quantities in the investigator's breakdown, at most MAX_MEAN_BY_METRICS. */
function meanByMetrics(profile: AssetProfile, kinds: Readonly<Record<string, AttributeKind>>): MetricPoint[] {
  const out: MetricPoint[] = [];
  for (const b of profile.breakdown ?? []) {
    for (const v of b.values) {
      for (const [target, summary] of Object.entries(v.numeric ?? {})) {
        if ((kinds[target] ?? "quantity") !== "quantity") continue;
        if (out.length >= MAX_MEAN_BY_METRICS) return out;
        out.push({ metric: meanByMetric(target, b.attribute, v.value), value: summary.mean, attribute: target });
      }
    }
  }
  return out;
}

function attributeMetrics(a: AttributeProfile, kind: AttributeKind | undefined): MetricPoint[] {
  const out: MetricPoint[] = [];
  const add = (stat: string, value: number) => {
    out.push({ metric: attrMetric(a.name, stat), value, attribute: a.name });
  };
  const present = nonNull(a);
  if (a.count > 0) {
    add("null_rate", a.nulls / a.count);
    add("empty_rate", a.empties / a.count);
    add("missing_rate", (a.nulls + a.empties) / a.count);
  }
  add("non_null", present);
  add("distinct", a.distinct);
  if (present > 0) {
    add("unique_ratio", Math.min(1, a.distinct / present));
    add("type_mismatch_rate", a.type_mismatches / present);
  }
  if (isNumeric(a)) {
    if (typeof a.mean === "number") add("mean", a.mean);
    if (typeof a.stddev === "number") add("stddev", a.stddev);
    if (typeof a.min === "number") add("min", a.min);
    if (typeof a.max === "number") add("max", a.max);
    if (a.quantiles?.length === QUANTILE_POINTS.length) {
      for (const [i, q] of a.quantiles.entries()) add(QUANTILE_STATS[i]!, q);
    }
  }
  // The most frequent value's share: many rows set to one value (a default, a stuck sensor) raise it.
  if (present > 0 && a.top_values.length > 0) add("top_value_share", a.top_values[0]!.count / present);
  // A quantity's atoms (exact values holding a share, a toll of 0): distribution_drift judges their
  // shares as categories and the rest of the values by KS.
  if (isNumeric(a) && kind !== "code" && present > 0) {
    for (const t of a.top_values) {
      const share = t.count / present;
      if (share >= ATOM_RECORD_SHARE && Number.isFinite(Number(t.value))) add(atomStat(t.value), share);
    }
  }
  if (a.patterns.length > 0) {
    add("top_pattern_share", Math.max(...a.patterns.map((p) => p.share)));
    for (const p of a.patterns) add(`pattern:${escapeName(p.pattern)}`, p.share);
  }
  // Category shares of codes: every value when all are listed, else the most frequent ones.
  if (kind === "code" || (kind === undefined && isCategorical(a))) {
    for (const [value, share] of categoryShares(a)) add(`value:${escapeName(value)}`, share);
  }
  return out;
}
