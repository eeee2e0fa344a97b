/**
 * Parameter shapes and defaults that several policies share: the anomaly detector's, the drift
 * rules' (categories and patterns) and the share test's. Each policy's file builds its own schema
 * from these; an override may set any subset of it.
 */
import { z } from "zod";
import { DEFAULT_ANOMALY_PARAMS, STRATEGIES } from "./anomaly";
import { MIN_CHANGE_BY_KIND } from "./metrics";

export const window = z.number().int().min(3).max(1000);
export const minHistory = z.number().int().min(2).max(1000);
export const ignoreAttributes = z.array(z.string().min(1)).max(2000);

export const anomalyShape = {
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

/** The anomaly detector's parameters within a policy's (which may have more): see metric-history.ts. */
export const AnomalyParamsSchema = z.object(anomalyShape);

/** The anomaly detector's defaults, with the smallest change of a kind of metric. */
export const anomalyDefaults = (kind: keyof typeof MIN_CHANGE_BY_KIND) => ({
  ...DEFAULT_ANOMALY_PARAMS,
  min_abs_change: MIN_CHANGE_BY_KIND[kind].absolute,
  min_rel_change: MIN_CHANGE_BY_KIND[kind].relative,
});

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

/** The drift rules' parameters (distribution_drift, pattern_drift: see checks/categories.ts). */
export const driftParams = () => z.strictObject(driftShape);
export type DriftParams = z.output<ReturnType<typeof driftParams>>;

export const driftDefaults: DriftParams = {
  window: 30,
  min_history: 7,
  min_values: 50,
  alpha: 1e-6,
  min_shift: 0.05,
  min_rel_shift: 0.2,
  min_share: 0.005,
  min_count: 5,
  vanish_share: 0.01,
  ignore_attributes: [],
};

/** Share tests (completeness, type_mismatch, duplicate rows): see checks/common.ts shareTest. */
export const shareShape = {
  window,
  min_history: z.number().int().min(1).max(1000),
  z: z.number().positive().max(10),
  margin: z.number().min(0).max(1),
};

/** The rate policies' parameters (completeness, type_mismatch): a share test, and a limit before there is history. */
export const rateParams = () =>
  z.strictObject({ ...shareShape, max_rate: z.number().min(0).max(1), ignore_attributes: ignoreAttributes });

/**
 * Share tests: 3 past scans, 3.5 standard errors, a fifth of a percentage point at least: 1 % new
 * nulls fire in 1,000 rows of a never-null column, 1 of 50 rows does not.
 */
export const shareDefaults = { window: 30, min_history: 3, z: 3.5, margin: 0.002 };
