import { z } from "@hono/zod-openapi";
import { CONNECTION_TYPES, INCIDENT_STATES, LEVELS } from "../../db/schema";
import { POLICY_IDS } from "../../detection/policies";
import { SegmentSchema } from "../alerts/alerts.schemas";
import { isoTime } from "../params";

/** A comma-separated query list of `item`s (blanks ignored), at most `max` of them. */
function commaList<T extends z.ZodType>(item: T, max: number, description: string, example: string) {
  return z
    .string()
    .max(4000)
    .transform((s) =>
      s
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== ""),
    )
    .pipe(
      // The items take strings (a coerced number's input type is unknown): state it for the pipe.
      z.array(item).min(1, "must name at least one value").max(max, `at most ${max} values`) as unknown as z.ZodType<
        z.output<T>[],
        string[]
      >,
    )
    .optional()
    .openapi({ type: "string", description: `${description}, comma-separated`, example });
}

const positiveInt = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** The list filters of spec 4.8; the summary and distribution take the same. */
export const IncidentFilterQuery = z.object({
  project_ids: commaList(positiveInt, 200, "Project ids", "1,2"),
  connection_types: commaList(z.enum(CONNECTION_TYPES), CONNECTION_TYPES.length, "Connection types", "S3,SNOWFLAKE"),
  alert_policy_ids: commaList(z.enum(POLICY_IDS), POLICY_IDS.length, "Alert policy ids", "completeness,freshness"),
  severities: commaList(z.enum(LEVELS), LEVELS.length, "Severities (LOW, MEDIUM, HIGH)", "HIGH"),
  impacts: commaList(z.enum(LEVELS), LEVELS.length, "Impacts (LOW, MEDIUM, HIGH)", "MEDIUM,HIGH"),
  connection_ids: commaList(positiveInt, 200, "Connection ids", "3,7"),
  from_time: isoTime("Range start, inclusive, on opened_at (ISO 8601)"),
  to_time: isoTime("Range end, exclusive, on opened_at (ISO 8601)"),
  text_to_search: z
    .string()
    .trim()
    .min(1)
    .max(200)
    .optional()
    .openapi({ description: "Case-insensitive substring of the policy name or the source (asset) name" }),
});

/** The list's filters: spec 4.8's, and the asset and the state, so a pipeline gate asks for just its asset's open incidents. */
export const IncidentListQuery = IncidentFilterQuery.extend({
  asset_ids: commaList(positiveInt, 200, "Asset ids (the list only)", "42"),
  states: commaList(z.enum(INCIDENT_STATES), INCIDENT_STATES.length, "States, OPEN or CLOSED (the list only)", "OPEN"),
});

const Levels = z.enum(LEVELS);

export const IncidentSchema = z
  .object({
    id: z.number().int(),
    asset_id: z.string(),
    project_id: z.number().int(),
    connection_id: z.number().int(),
    connection_type: z.string(),
    source_name: z.string(),
    alert_policy_id: z.string(),
    policy_name: z.string(),
    attribute: z.string().nullable().openapi({ description: "null for asset-level policies" }),
    segment: SegmentSchema,
    state: z.enum(INCIDENT_STATES),
    severity: Levels.openapi({ description: "Highest priority of its alerts" }),
    impact: Levels.openapi({ description: "Grows with the asset's downstream lineage" }),
    tag: z.string().openapi({ description: "The policy's dimension" }),
    alert_count: z.number().int(),
    clean_scans: z.number().int().openapi({ description: "Consecutive clean scans since the last alert" }),
    level_scans: z.number().int().openapi({
      description:
        "Consecutive scans at the level of the last alert (adopted as NEW_NORMAL at the asset's adapt_after)",
    }),
    opened_at: z.string(),
    last_alert_at: z.string(),
    closed_at: z.string().nullable(),
    close_reason: z.string().nullable(),
    first_response_at: z.string().nullable().openapi({ description: "First manual change" }),
    ticket: z.object({ key: z.string(), url: z.string().nullable() }).nullable(),
  })
  .openapi("Incident");

export const HistoryEntrySchema = z
  .object({
    time: z.string(),
    from_state: z.enum(INCIDENT_STATES).nullable().openapi({ description: "null for the opening entry" }),
    to_state: z.enum(INCIDENT_STATES),
    alert_refs: z
      .array(z.number().int())
      .openapi({ description: "Alert ids (POST …/configuration/alerts/by_filters)" }),
    actor: z.string().openapi({ description: '"system" or the user or key that acted' }),
    note: z.string().nullable(),
    reason: z.string().nullable(),
    job_id: z.string().nullable(),
    details: z.record(z.string(), z.unknown()).nullable().openapi({
      description:
        "What a scan that confirmed the incident without a new alert measured (metric, observed, expected); for NEW_NORMAL, band_before and band_after",
    }),
  })
  .openapi("IncidentHistoryEntry");

export const IncidentDetailSchema = IncidentSchema.extend({
  metrics: z
    .array(
      z.object({
        alert_id: z.number().int().nullable().openapi({ description: "null for a scan that confirmed the incident" }),
        job_id: z.string(),
        metric: z.string(),
        metric_value: z.string(),
        metric_time: z.string(),
        priority: Levels,
        observed: z.unknown(),
        expected: z.unknown(),
        investigation: z
          .array(
            z.object({
              attribute: z.string(),
              value: z.string(),
              rows: z.number().int(),
              problem_rows: z.number().int(),
              share_of_problem: z.number(),
              share_of_rows: z.number(),
              lift: z.number(),
            }),
          )
          .optional()
          .openapi({ description: "Where the alert's problem concentrates, strongest first (the investigator)" }),
      }),
    )
    .openapi({
      description: "The incident's alerts (the newest 1000) and the scans that confirmed it, oldest first",
    }),
  history: z.array(HistoryEntrySchema),
}).openapi("IncidentDetail");

export const UpdateIncidentBody = z
  .strictObject({
    state: z.enum(INCIDENT_STATES),
    note: z.string().max(2000).optional(),
    reason: z.enum(["FIXED", "EXPECTED", "FALSE_POSITIVE", "NO_ACTION_NEEDED"]).optional().openapi({
      description:
        "Required when closing; EXPECTED adopts the level, FALSE_POSITIVE and NO_ACTION_NEEDED accept what was observed; FIXED alerts again if it comes back",
    }),
  })
  .superRefine((b, ctx) => {
    if (b.state === "CLOSED" && !b.reason)
      ctx.addIssue({ code: "custom", path: ["reason"], message: "is required when closing" });
    if (b.state === "OPEN" && b.reason)
      ctx.addIssue({ code: "custom", path: ["reason"], message: "is only for closing" });
  })
  .openapi("UpdateIncident", { example: { state: "CLOSED", reason: "EXPECTED", note: "New pricing from 1 March" } });

const LevelCounts = z.object({ LOW: z.number().int(), MEDIUM: z.number().int(), HIGH: z.number().int() });

export const DistributionSchema = z
  .object({
    from_time: z.string(),
    to_time: z.string(),
    levels: z.array(Levels),
    days: z.array(
      z.object({
        date: z.string().openapi({ description: "UTC day, YYYY-MM-DD" }),
        total: z.number().int(),
        by_severity: LevelCounts,
        by_impact: LevelCounts,
      }),
    ),
  })
  .openapi("IncidentDistribution", {
    description: "Incidents opened per UTC day of the range, by severity and by impact; every day present",
  });

export const SummarySchema = z
  .object({
    from_time: z.string(),
    to_time: z.string(),
    total: z.number().int().openapi({ description: "Incidents opened in the range" }),
    open: z.number().int().openapi({ description: "Incidents open now, whenever they opened" }),
    closed: z.number().int().openapi({ description: "Incidents opened in the range and closed since" }),
    resolved: z.number().int().openapi({ description: "How many closed incidents mean_time_to_resolve is over" }),
    mean_time_to_resolve: z.number().int().openapi({
      description:
        "Mean whole hours, opened → closed, of the incidents opened in the range and closed; 0 when resolved is 0",
    }),
    previous_mean_time_to_resolve: z
      .number()
      .int()
      .openapi({ description: "The same over the equal range just before; 0 when none was resolved then" }),
    mean_time_to_first_response: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Hours, opened → first manual change; null if none" }),
    open_by_tag: z.record(z.string(), z.number().int()).openapi({ description: "Open now, per tag" }),
    closed_by_tag: z
      .record(z.string(), z.number().int())
      .openapi({ description: "Opened in the range and closed, per tag" }),
  })
  .openapi("IncidentSummary");

export const BackfillJobSchema = z
  .object({
    job_id: z.string(),
    status: z.enum(["RUNNING", "SUCCEEDED", "FAILED"]),
    since: z.string(),
    until: z.string(),
    requested_by: z.string(),
    started_at: z.string(),
    finished_at: z.string().nullable(),
    assets_total: z.number().int().nullable(),
    assets_done: z.number().int(),
    incidents: z.number().int(),
    alerts: z.number().int(),
    errors: z.array(z.object({ asset_id: z.string(), message: z.string() })),
  })
  .openapi("IncidentBackfillJob");

export const BackfillAcceptedSchema = z
  .object({ message: z.string(), job_id: z.string(), status_url: z.string() })
  .openapi("IncidentBackfillAccepted");
