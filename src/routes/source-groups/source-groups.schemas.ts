import { z } from "@hono/zod-openapi";
import { CronExpression } from "../../catalog/assets";
import { GroupAssetEntry, GroupOptions } from "../../catalog/source-groups";
import { docsByType, LIGHT_SCAN_TYPES, typeList } from "../../connections";
import { SOURCE_GROUP_TYPES } from "../../db/schema";
import { AssetIdString } from "../assets/assets.schemas";
import { IntId, ProjectParams } from "../params";

/** Per-type payload shapes, as the OpenAPI description of `payload` tells them (from each type's module). */
const PAYLOAD_DOC = `Depends on \`type\` (unknown keys are refused): ${docsByType((m) => m.group?.doc)
  .map((d) => `${d.types.join(", ")} ${d.text}`)
  .join("; ")}. Each asset of the group gets this payload plus {table: its table_or_file_name}.`;

const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000);
const payload = z.record(z.string(), z.unknown()).openapi({ description: PAYLOAD_DOC });
const options = GroupOptions.openapi("SourceGroupOptions", {
  description: `only_light_scan true is allowed for ${typeList(LIGHT_SCAN_TYPES)} groups only`,
});
const entry = GroupAssetEntry.openapi("SourceGroupAssetEntry");
const schedule = CronExpression.nullable().openapi({
  type: "string",
  description: "5-field cron expression (minute hour day-of-month month day-of-week), UTC; null clears it",
  example: "0 6 * * *",
});
/** Enough for any real group while staying far below D1's 1,000 queries per request. */
const MAX_ENTRIES = 200;

export const SourceGroupSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    type: z.enum(SOURCE_GROUP_TYPES),
    connection_id: z.number().int(),
    db_type: z.string().nullable(),
    project_id: z.number().int(),
    scheduled_upload: z.string().openapi({ description: "The cron expression; empty when unset" }),
  })
  .openapi("SourceGroup");

const CreatedAsset = z
  .object({
    id: z.string().openapi({ description: "Asset id" }),
    analyze_job_id: z.string().openapi({ description: "The ANALYZE scan job that reads the asset's schema" }),
  })
  .openapi("SourceGroupCreatedAsset");

export const CreateSourceGroupBody = z
  .strictObject({
    name,
    description: description.default(""),
    type: z.enum(SOURCE_GROUP_TYPES),
    connection_id: z.number().int().positive(),
    assets: z.array(entry).max(MAX_ENTRIES).default([]),
    payload,
    options: options.default({}),
    scheduled_upload: schedule.optional(),
  })
  .openapi("CreateSourceGroup", {
    example: {
      name: "sales",
      type: "SNOWFLAKE",
      connection_id: 3,
      payload: { database: "SALES", schema: "PUBLIC" },
      assets: [{ name: "orders", table_or_file_name: "ORDERS" }],
    },
  });

export const CreatedSourceGroupSchema = z
  .object({ group_id: z.number().int(), assets: z.array(CreatedAsset) })
  .openapi("CreatedSourceGroup");

export const UpdateSourceGroupBody = z
  .strictObject({
    name: name.optional(),
    description: description.optional(),
    type: z.enum(SOURCE_GROUP_TYPES).optional(),
    connection_id: z.number().int().positive().optional(),
    payload: payload.optional(),
    options: options.optional(),
    scheduled_upload: schedule.optional(),
    assets_to_add: z.array(entry).max(MAX_ENTRIES).optional(),
    assets_to_delete: z
      .array(AssetIdString)
      .max(1000)
      .optional()
      .openapi({ description: "Ids of assets of this group" }),
  })
  .openapi("UpdateSourceGroup", { example: { assets_to_add: [{ name: "refunds", table_or_file_name: "REFUNDS" }] } });

export const UpdatedSourceGroupSchema = z
  .object({ assets: z.array(CreatedAsset).openapi({ description: "The assets added" }) })
  .openapi("UpdatedSourceGroup");

export const MoveSourceGroupsBody = z
  .strictObject({
    source_project_id: z.number().int().positive(),
    source_group_ids: z.array(z.number().int().positive()).min(1).max(200),
    target_connection_id: z.number().int().positive().optional(),
  })
  .openapi("MoveSourceGroups", { example: { source_project_id: 1, source_group_ids: [4] } });

export const MovedSourceGroupsSchema = z
  .object({
    message: z.string(),
    source_groups: z.array(z.number().int()).openapi({ description: "Ids of the moved groups" }),
    assets: z.array(z.string()).openapi({ description: "Ids of the assets moved with them" }),
  })
  .openapi("MovedSourceGroups");

export const GroupParams = ProjectParams.extend({ sourceGroupId: IntId("sourceGroupId") });
