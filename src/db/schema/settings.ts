import { integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { assets } from "./assets";
import { tenants } from "./tenancy";
/** Spark cluster settings of a tenant (2.9): each block stored and replaced on its own. */
export const sparkJobConfigs = sqliteTable("spark_job_configs", {
  tenantId: text("tenant_id")
    .primaryKey()
    .references(() => tenants.id, { onDelete: "cascade" }),
  sparkProperties: text("spark_properties", { mode: "json" }).$type<Record<string, string>>(),
  dataprocConfig: text("dataproc_config", { mode: "json" }).$type<Record<string, unknown>>(),
  emrConfig: text("emr_config", { mode: "json" }).$type<Record<string, unknown>>(),
  databricksConfig: text("databricks_config", { mode: "json" }).$type<Record<string, unknown>>(),
  /** Files larger than this go to Spark (when configured); null = the default threshold. */
  fullScanThresholdBytes: integer("full_scan_threshold_bytes"),
  updatedAt: text("updated_at").notNull(),
});

/** How tickets are opened in an external tracker (only JIRA). */
export const ticketTemplates = sqliteTable(
  "ticket_templates",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    type: text("type", { enum: ["JIRA"] }).notNull(),
    props: text("props", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("ticket_templates_tenant_name_uq").on(t.tenantId, t.name)],
);

/** DQ score settings of an asset; no row = defaults (enabled, 0.25 each). */
export const dqScoreConfigs = sqliteTable("dq_score_configs", {
  assetId: integer("asset_id")
    .primaryKey()
    .references(() => assets.id, { onDelete: "cascade" }),
  tenantId: text("tenant_id").notNull(),
  enabled: integer("enabled", { mode: "boolean" }).notNull(),
  weights: text("weights", { mode: "json" })
    .$type<{ completeness: number; accuracy: number; consistency: number; timeliness: number }>()
    .notNull(),
  updatedAt: text("updated_at").notNull(),
});
