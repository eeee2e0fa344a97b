/**
 * What the Spark driver posts to its callback: the profile inline, a note that it was written to
 * the tenant's storage (too large for the request), or the failure
 * (docs/resources/light-and-full-scans.md, "The callback").
 * Checked here so a malformed profile is a 400 at the edge, never a failure inside the monitor.
 */

import { z } from "zod";
import { VALUE_TYPES } from "../../contracts/profile";

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const scalar = z.union([z.number(), z.string().max(4096)]);

const AttributeProfileSchema = z.object({
  name: z.string().min(1).max(1024),
  inferred_type: z.enum(VALUE_TYPES),
  declared_type: z.string().max(256).optional(),
  count,
  nulls: count,
  empties: count,
  distinct: count,
  distinct_exact: z.boolean(),
  min: scalar.optional(),
  max: scalar.optional(),
  mean: z.number().optional(),
  stddev: z.number().optional(),
  quantiles: z.array(z.number()).max(64).optional(),
  step: z.number().positive().optional(),
  top_values: z.array(z.object({ value: z.string().max(4096), count })).max(100),
  type_counts: z.partialRecord(z.enum(VALUE_TYPES), count),
  type_mismatches: count,
  patterns: z.array(z.object({ pattern: z.string().max(4096), share: z.number().min(0).max(1) })).max(100),
  mean_length: z.number().nonnegative().optional(),
});

const ProfileCore = z.object({
  row_count: count,
  bytes: count.optional(),
  schema: z
    .array(z.object({ name: z.string().min(1).max(1024), type: z.string().max(256), nullable: z.boolean() }))
    .max(2000),
  attributes: z.array(AttributeProfileSchema).max(2000),
  freshness: z.iso.datetime({ offset: true }).optional(),
  duplicate_count: count.optional(),
  duplicate_rows: count.optional(),
  sampled: z.boolean(),
});

/** The profile shape the Worker computes (contracts/profile.ts), without the investigator's breakdown. */
export const SparkProfileSchema = ProfileCore.extend({
  segments: z
    .array(z.object({ attribute: z.string().max(1024), value: z.string().max(4096), profile: ProfileCore }))
    .max(1000)
    .optional(),
});

export const ScanCallbackBody = z.union([
  z.strictObject({ status: z.literal("SUCCEEDED"), profile: SparkProfileSchema }),
  z.strictObject({
    status: z.literal("SUCCEEDED"),
    /** The driver wrote the profile to the tenant's storage, at the key the Worker chose (resultKey). */
    profile_ref: z.strictObject({ bytes: count }),
  }),
  z.strictObject({ status: z.literal("FAILED"), error: z.string().min(1).max(4096) }),
]);
export type ScanCallbackBody = z.infer<typeof ScanCallbackBody>;
