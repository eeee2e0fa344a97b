import { z } from "@hono/zod-openapi";
import { MAX_REFS } from "../../incidents/limits";

/** The segment (asset option `segments`) an alert or incident is about; null for the whole asset. */
export const SegmentSchema = z
  .object({ attribute: z.string(), value: z.string().openapi({ description: 'A listed value, or "(other)"' }) })
  .nullable()
  .openapi("Segment", { description: "The segment (asset option segments) it is about; null for the whole asset" });

export const AlertSchema = z
  .object({
    type: z.string().openapi({ description: "The policy id, e.g. completeness" }),
    source: z.string().openapi({ description: "The asset id" }),
    description: z.string(),
    job_id: z.string(),
    create_time: z.string().openapi({ description: "Upload (job creation) time" }),
    save_time: z.string(),
    is_notification_enabled: z.boolean(),
    metric_time: z.string(),
    metric_value: z.string(),
    policy_name: z.string(),
    priority: z.enum(["LOW", "MEDIUM", "HIGH"]),
    source_name: z.string(),
    source_type: z.string(),
    id: z.number().int(),
    attribute: z.string().nullable(),
    segment: SegmentSchema,
    metric: z.string(),
    details: z.record(z.string(), z.unknown()).openapi({
      description:
        "observed, expected band, unit (when the metric's name does not say it: freshness in hours), strategy, training window and size, dimension; values (categorical policies: each moved value, with the test that found it and its p-value), schema_changes, investigation (where the problem concentrates); deviation (signed distance from the baseline in band half-widths); after_close (the close of the same condition this alert went clearly beyond)",
    }),
  })
  .openapi("Alert");

export const AlertsByFiltersBody = z
  .strictObject({
    asset_id: z.string().regex(/^[1-9]\d{0,15}$/, "must be an asset id"),
    alert_refs: z.array(z.number().int().positive()).max(MAX_REFS),
  })
  .openapi("AlertsByFilters", {
    example: { asset_id: "12", alert_refs: [101, 102] },
    description: "An incident's asset_id and the alert_refs of its history",
  });
