import { z } from "@hono/zod-openapi";
import { AssetOptions, AssetSchedule } from "../../catalog/assets";
import { docsByType, LIGHT_SCAN_TYPES, typeList } from "../../connections";
import { ATTRIBUTE_KINDS, CONNECTION_TYPES } from "../../db/schema";
import { PageQuery } from "../pagination";
import { IntId, ProjectParams } from "../params";

/** Per-type payload shapes, as the OpenAPI description of `payload` tells them (from each type's module). */
export const PAYLOAD_DOC = `Depends on \`type\` (unknown keys are refused): ${docsByType((m) => m.docs.asset)
  .map((d) => `${d.types.join(", ")} ${d.text}`)
  .join("; ")}.`;

const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000);
const payload = z.record(z.string(), z.unknown()).openapi({ description: PAYLOAD_DOC });
const options = AssetOptions.openapi("AssetOptions", {
  description: `only_light_scan 'true' is allowed for ${typeList(LIGHT_SCAN_TYPES)} assets only`,
});
const schedule = AssetSchedule.openapi("AssetScheduleInput", {
  description:
    "Scans on a schedule: cron (5 fields: minute hour day-of-month month day-of-week), timezone (IANA, default UTC), " +
    "enabled (default true). null clears the schedule.",
});

/** Asset ids travel as strings in some bodies (move, lineage): digits only. */
export const AssetIdString = z
  .string()
  .regex(/^[1-9]\d{0,14}$/, "must be an asset id (digits)")
  .transform(Number)
  .openapi({ type: "string", example: "42" });

export const ScheduledUploadSchema = z
  .object({
    cron: z.string(),
    timezone: z.string(),
    enabled: z.boolean(),
    next_run_at: z.string().nullable().openapi({ description: "Next due minute (ISO 8601 UTC); null while disabled" }),
  })
  .openapi("AssetSchedule");

/** One attribute of an asset: its source type, and once a scan saw it, its kind and latest statistics. */
export const AssetAttributeSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    nullable: z.boolean(),
    kind: z.enum(ATTRIBUTE_KINDS).optional().openapi({ description: "What the values are; decides the policies" }),
    kind_source: z.enum(["inferred", "user"]).optional(),
    stats: z
      .object({
        scanned_at: z.string(),
        count: z.number(),
        nulls: z.number(),
        empties: z.number(),
        distinct: z.number(),
        distinct_exact: z.boolean(),
        inferred_type: z.string(),
        type_mismatches: z.number(),
        min: z.union([z.number(), z.string()]).optional(),
        max: z.union([z.number(), z.string()]).optional(),
        mean: z.number().optional(),
        stddev: z.number().optional(),
        quantiles: z.array(z.number()).optional().openapi({ description: "p0 p1 p5 p10 p25 p50 p75 p90 p95 p99 p100" }),
        top_values: z.array(z.object({ value: z.string(), count: z.number() })).optional(),
      })
      .optional()
      .openapi({ description: "The latest scan's statistics" }),
  })
  .openapi("AssetAttribute");

export const AssetSchema = z
  .object({
    id: z.number().int(),
    project_id: z.number().int(),
    name: z.string(),
    description: z.string(),
    type: z.enum(CONNECTION_TYPES),
    options: z.record(z.string(), z.unknown()),
    payload: z.record(z.string(), z.unknown()).openapi({ description: PAYLOAD_DOC }),
    created_by: z.string(),
    created_at: z.string(),
    connection_id: z.number().int(),
    db_type: z.string().nullable(),
    attributes: z.array(AssetAttributeSchema).optional().openapi({
      description:
        "with_attributes=true: the attributes as the last scan (or schema load) saw them, with their kind and latest statistics ([] until then)",
    }),
    scheduled_upload: ScheduledUploadSchema.nullable()
      .optional()
      .openapi({ description: "with_schedules=true: the schedule, or null" }),
    parents: z.array(z.string()).optional().openapi({ description: "with_lineage=true: ids of the assets feeding it" }),
    children: z.array(z.string()).optional().openapi({ description: "with_lineage=true: ids of the assets it feeds" }),
  })
  .openapi("Asset");

/** An asset's type: a connection type, or GCP, the spec's other name (2.3) for GCS files, stored as GCS. */
const assetType = z
  .enum([...CONNECTION_TYPES, "GCP"])
  .transform((t) => (t === "GCP" ? "GCS" : t))
  .openapi({
    description:
      "A connection type, the type of the asset's connection; GCP is accepted as GCS (files in Google Cloud Storage). " +
      "UPLOAD: data that arrives only by upload (no schedule; a scan trigger is a 409)",
  });

export const CreateAssetBody = z
  .strictObject({
    name,
    description: description.default(""),
    type: assetType,
    options: options.default({}),
    payload: payload.default({}),
    connection_id: z.number().int().positive(),
    scheduled_upload: schedule.nullable().optional(),
  })
  .openapi("CreateAsset", {
    example: {
      name: "orders",
      description: "Daily order exports",
      type: "S3",
      connection_id: 1,
      payload: { path: "exports/orders/*.csv", format: "csv" },
      options: { id_attributes: ["order_id"], timestamp_attribute: "updated_at" },
    },
  });

export const UpdateAssetBody = z
  .strictObject({
    name: name.optional(),
    description: description.optional(),
    type: assetType.optional(),
    options: options.optional().openapi({ description: "Replaces all options" }),
    payload: payload.optional(),
    connection_id: z.number().int().positive().optional(),
    scheduled_upload: schedule.nullable().optional(),
  })
  .openapi("UpdateAsset", { example: { description: "Daily order exports (EU)" } });

const flag = (what: string) =>
  z
    .enum(["true", "false"])
    .default("false")
    .transform((v) => v === "true")
    .openapi({ description: `'true' adds ${what}` });

/** The with_* flags of asset lists and gets. */
export const AssetExtrasQuery = z.object({
  with_attributes: flag("attributes"),
  with_schedules: flag("scheduled_upload"),
  with_lineage: flag("parents and children"),
});
export const AssetListQuery = PageQuery.extend(AssetExtrasQuery.shape);

export const AssetParams = ProjectParams.extend({ assetId: IntId("assetId") });

export const LineageBody = z
  .strictObject({
    parents: z.array(AssetIdString).max(1000).optional().openapi({ description: "Assets feeding this one" }),
    children: z.array(AssetIdString).max(1000).optional().openapi({ description: "Assets this one feeds" }),
  })
  .openapi("AssetLineageInput", { example: { parents: ["12"], children: ["15"] } });

export const MoveAssetsBody = z
  .strictObject({
    source_project_id: z.number().int().positive(),
    source_asset_ids: z.array(AssetIdString).min(1).max(1000),
    target_connection_id: z.number().int().positive().optional(),
  })
  .openapi("MoveAssets", { example: { source_project_id: 1, source_asset_ids: ["12", "13"] } });

export const MovedAssetsSchema = z
  .object({ message: z.string(), assets: z.array(z.string()).openapi({ description: "Ids of the moved assets" }) })
  .openapi("MovedAssets");
