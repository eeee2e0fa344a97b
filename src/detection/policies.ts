/**
 * The ten prebuilt policies: what each watches, its dimension (the incident tag), default
 * priority and parameters, and the schema of per-asset overrides.
 */
import { z } from "zod";
import { DEFAULT_ANOMALY_PARAMS, STRATEGIES } from "./anomaly";
import type { DqDimension } from "./dimensions";
import { MIN_CHANGE_BY_KIND } from "./metrics";
import { POLICY_IDS, type PolicyId, PRIORITIES, type Priority } from "./types";

const window = z.number().int().min(3).max(1000);
const minHistory = z.number().int().min(2).max(1000);
const ignoreAttributes = z.array(z.string().min(1)).max(2000);

const anomalyShape = {
  strategy: z.enum(STRATEGIES),
  window,
  threshold: z.number().positive().max(100),
  max_change: z.number().positive().max(100),
  min_history: minHistory,
  min_abs_change: z.number().min(0),
  min_rel_change: z.number().min(0).max(10),
  seasonal_weeks: z.number().int().min(1).max(52),
  seasonal_min_points: z.number().int().min(2).max(52),
};

const driftShape = {
  window,
  min_history: minHistory,
  /** Fewer non-null values than this and the distribution is too noisy to judge. */
  min_values: z.number().int().min(1),
  /** Significance of the G-test a share shift must pass (and of the KS test of quantities). */
  alpha: z.number().positive().max(0.5),
  /**
   * Smallest move of a value's share worth an alert (0.05 = 5 points); a smaller category's share
   * need only move by min_rel_shift of itself (0.2: 4 % → 3.2 %), and at least min_share.
   */
  min_shift: z.number().min(0).max(1),
  min_rel_shift: z.number().min(0).max(10),
  /** A never-seen value needs this share and this many rows to be a new category. */
  min_share: z.number().min(0).max(1),
  min_count: z.number().int().min(1),
  /** A value with at least this share in the baseline that is gone now has vanished. */
  vanish_share: z.number().min(0).max(1),
  ignore_attributes: ignoreAttributes,
};

/** Share tests (completeness, type_mismatch, duplicate rows): see checks/common.ts shareTest. */
const shareShape = {
  window,
  min_history: z.number().int().min(1).max(1000),
  z: z.number().positive().max(10),
  margin: z.number().min(0).max(1),
};

export const VALUE_RANGE_STATS = ["min", "max", "mean", "p50"] as const;

/** Full parameter schemas; an override may set any subset. */
export const POLICY_PARAM_SCHEMAS = {
  row_count_anomaly: z.strictObject(anomalyShape),
  completeness: z.strictObject({
    ...shareShape,
    max_rate: z.number().min(0).max(1),
    ignore_attributes: ignoreAttributes,
  }),
  uniqueness: z.strictObject({
    ...shareShape,
    max_duplicates: z.number().int().min(0),
    duplicate_rows: z.boolean(),
    watch_unique_attributes: z.boolean(),
    min_unique_scans: z.number().int().min(1).max(1000),
    ignore_attributes: ignoreAttributes,
  }),
  schema_change: z.strictObject({ added: z.boolean(), removed: z.boolean(), type_changed: z.boolean() }),
  freshness: z.strictObject({ max_age_hours: z.number().positive().max(100_000) }),
  value_range: z.strictObject({
    ...anomalyShape,
    stats: z.array(z.enum(VALUE_RANGE_STATS)).min(1).max(VALUE_RANGE_STATS.length),
    ignore_attributes: ignoreAttributes,
  }),
  distribution_drift: z.strictObject(driftShape),
  pattern_drift: z.strictObject(driftShape),
  cardinality_drift: z.strictObject({ ...anomalyShape, ignore_attributes: ignoreAttributes }),
  type_mismatch: z.strictObject({
    ...shareShape,
    max_rate: z.number().min(0).max(1),
    ignore_attributes: ignoreAttributes,
  }),
} satisfies Record<PolicyId, z.ZodType>;

export type PolicyParams<P extends PolicyId> = z.infer<(typeof POLICY_PARAM_SCHEMAS)[P]>;

export interface PolicyDefinition<P extends PolicyId = PolicyId> {
  id: P;
  name: string;
  description: string;
  dimension: DqDimension;
  priority: Priority;
  /** rule: fires from the first scan; anomaly: compares with the metric's own history. */
  kind: "rule" | "anomaly";
  params: PolicyParams<P>;
}

const anomalyDefaults = (kind: keyof typeof MIN_CHANGE_BY_KIND) => ({
  ...DEFAULT_ANOMALY_PARAMS,
  min_abs_change: MIN_CHANGE_BY_KIND[kind].absolute,
  min_rel_change: MIN_CHANGE_BY_KIND[kind].relative,
});

const driftDefaults = {
  window: 30,
  min_history: 7,
  min_values: 50,
  alpha: 1e-6,
  min_shift: 0.05,
  min_rel_shift: 0.2,
  min_share: 0.005,
  min_count: 5,
  vanish_share: 0.01,
  ignore_attributes: [] as string[],
};

/**
 * Share tests: 3 past scans, 3.5 standard errors, a fifth of a percentage point at least: 1 % new
 * nulls fire in 1,000 rows of a never-null column, 1 of 50 rows does not.
 */
const shareDefaults = { window: 30, min_history: 3, z: 3.5, margin: 0.002 };

export const POLICY_DEFAULTS: { [P in PolicyId]: PolicyDefinition<P> } = {
  row_count_anomaly: {
    id: "row_count_anomaly",
    name: "Row count anomaly",
    description: "The asset's row count leaves the band its own history predicts.",
    dimension: "completeness",
    priority: "HIGH",
    kind: "anomaly",
    params: anomalyDefaults("count"),
  },
  completeness: {
    id: "completeness",
    name: "Completeness",
    description:
      "The share of null or empty values of an attribute rises above its usual share (median of the past scans) plus the larger of margin and the history's spread, judged on the Wilson lower bound at z for the row count; before min_history scans, above max_rate.",
    dimension: "completeness",
    priority: "MEDIUM",
    kind: "rule",
    params: { ...shareDefaults, max_rate: 0.05, ignore_attributes: [] },
  },
  uniqueness: {
    id: "uniqueness",
    name: "Uniqueness",
    description:
      "Rows repeat the id attributes of earlier rows (more than max_duplicates); the share of rows that repeat an earlier row exactly rises (a share test, like completeness); or an identifier attribute that was unique in every recent scan is no longer.",
    dimension: "consistency",
    priority: "HIGH",
    kind: "rule",
    params: {
      ...shareDefaults,
      max_duplicates: 0,
      duplicate_rows: true,
      watch_unique_attributes: true,
      min_unique_scans: 7,
      ignore_attributes: [],
    },
  },
  schema_change: {
    id: "schema_change",
    name: "Schema change",
    description: "An attribute was added, removed or changed type since the previous scan.",
    dimension: "consistency",
    priority: "HIGH",
    kind: "rule",
    params: { added: true, removed: true, type_changed: true },
  },
  freshness: {
    id: "freshness",
    name: "Freshness",
    description: "The newest value of the timestamp attribute is older than max_age_hours at scan time.",
    dimension: "timeliness",
    priority: "HIGH",
    kind: "rule",
    params: { max_age_hours: 24 },
  },
  value_range: {
    id: "value_range",
    name: "Value range",
    description:
      "The mean or median of a quantity leaves the band its history predicts (never narrower than the values' grid); min and max: more values beyond the baseline's 1st or 99th percentile than the past scans had (a share test), never one record.",
    dimension: "accuracy",
    priority: "MEDIUM",
    kind: "anomaly",
    params: { ...anomalyDefaults("value"), stats: [...VALUE_RANGE_STATS], ignore_attributes: [] },
  },
  distribution_drift: {
    id: "distribution_drift",
    name: "Distribution drift",
    description:
      "Quantities: the quantile profile's largest CDF gap from the baseline (a KS distance) exceeds both the KS critical distance at alpha for the row count and the past scans' own distances. Codes: a new category (min_share and min_count), a vanished one (had vanish_share), or shares moved beyond their history's spread and sampling, by at least min_shift (or min_rel_shift of a smaller category's share), with a G-test below alpha.",
    dimension: "accuracy",
    priority: "LOW",
    kind: "anomaly",
    params: { ...driftDefaults },
  },
  pattern_drift: {
    id: "pattern_drift",
    name: "Pattern drift",
    description:
      "The value shapes of a text attribute change from its baseline, by the rules of categories: a new shape (not for free text), a vanished one, or shares that moved.",
    dimension: "consistency",
    priority: "MEDIUM",
    kind: "anomaly",
    params: { ...driftDefaults },
  },
  cardinality_drift: {
    id: "cardinality_drift",
    name: "Cardinality drift",
    description:
      "The distinct count of an attribute leaves the band its history predicts, beyond what the change in non-null values explains.",
    dimension: "consistency",
    priority: "LOW",
    kind: "anomaly",
    params: { ...anomalyDefaults("distinct"), ignore_attributes: [] },
  },
  type_mismatch: {
    id: "type_mismatch",
    name: "Type mismatch",
    description:
      "The share of non-null values not of the attribute's type rises above its usual share, by the share test of completeness; before min_history scans, above max_rate.",
    dimension: "accuracy",
    priority: "MEDIUM",
    kind: "rule",
    params: { ...shareDefaults, max_rate: 0.01, ignore_attributes: [] },
  },
};

/** An explicit `undefined` in an override means "not set", not "unset the default". */
function definedOnly(params: object | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params ?? {}).filter(([, v]) => v !== undefined));
}

function overrideSchema<P extends PolicyId>(id: P) {
  return z.strictObject({
    enabled: z.boolean().optional(),
    priority: z.enum(PRIORITIES).optional(),
    /** false mutes this policy's notifications on the asset (its alerts say is_notification_enabled: false). */
    notify: z.boolean().optional(),
    params: POLICY_PARAM_SCHEMAS[id].partial().optional(),
  });
}

/** Per-asset overrides: per policy id, any of enabled, priority and a subset of its params. */
export const PolicyOverridesSchema = z
  .strictObject({
    row_count_anomaly: overrideSchema("row_count_anomaly").optional(),
    completeness: overrideSchema("completeness").optional(),
    uniqueness: overrideSchema("uniqueness").optional(),
    schema_change: overrideSchema("schema_change").optional(),
    freshness: overrideSchema("freshness").optional(),
    value_range: overrideSchema("value_range").optional(),
    distribution_drift: overrideSchema("distribution_drift").optional(),
    pattern_drift: overrideSchema("pattern_drift").optional(),
    cardinality_drift: overrideSchema("cardinality_drift").optional(),
    type_mismatch: overrideSchema("type_mismatch").optional(),
  })
  .superRefine((o, ctx) => {
    // A baseline window shorter than the history it waits for could never leave training.
    for (const id of POLICY_IDS) {
      const merged = { ...POLICY_DEFAULTS[id].params, ...definedOnly(o[id]?.params) } as Record<string, unknown>;
      if (typeof merged.window === "number" && typeof merged.min_history === "number") {
        if (merged.min_history > merged.window) {
          ctx.addIssue({
            code: "custom",
            path: [id, "params", "min_history"],
            message: `min_history (${merged.min_history}) must not exceed window (${merged.window})`,
          });
        }
      }
    }
  });

export type PolicyOverrides = z.infer<typeof PolicyOverridesSchema>;

export interface ResolvedPolicy<P extends PolicyId = PolicyId> extends PolicyDefinition<P> {
  enabled: boolean;
  /** Its alerts are notified (channels get its incident events). */
  notify: boolean;
}

/**
 * Whether a policy's alerts are notified on an asset: not when the asset mutes notifications
 * (`notify: false`), nor when the policy's override does.
 */
export function notifies(overrides: PolicyOverrides, assetNotify: boolean | null | undefined, policy: string): boolean {
  if (assetNotify === false) return false;
  return (overrides as Record<string, { notify?: boolean } | undefined>)[policy]?.notify !== false;
}

/** The effective settings of every policy: defaults, then the asset's overrides. */
export function resolvePolicies(
  overrides: PolicyOverrides = {},
  assetNotify?: boolean | null,
): { [P in PolicyId]: ResolvedPolicy<P> } {
  const out = {} as Record<PolicyId, ResolvedPolicy>;
  for (const id of POLICY_IDS) {
    const def = POLICY_DEFAULTS[id];
    const o = overrides[id];
    out[id] = {
      ...def,
      enabled: o?.enabled ?? true,
      notify: notifies(overrides, assetNotify, id),
      priority: o?.priority ?? def.priority,
      params: { ...def.params, ...definedOnly(o?.params) } as PolicyParams<typeof id>,
    };
  }
  return out as { [P in PolicyId]: ResolvedPolicy<P> };
}
