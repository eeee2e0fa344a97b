import { getTableColumns, sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { CONNECTION_TYPES, connections } from "./connections";
import { projects, tenants } from "./tenancy";
/**
 * What an attribute's values are, which decides the policies that judge it: identifiers (keys) and
 * codes (categories, also low-cardinality integers) are never averaged; quantities get bands and
 * distribution tests; free text gets patterns; timestamps feed freshness.
 */
export const ATTRIBUTE_KINDS = ["identifier", "code", "quantity", "text", "timestamp"] as const;
export type AttributeKind = (typeof ATTRIBUTE_KINDS)[number];

/** One attribute of an asset as stored: its type from the source, and its kind once a scan saw it. */
export interface AssetAttribute {
  name: string;
  type: string;
  nullable: boolean;
  kind?: AttributeKind;
  /** "inferred" from the scans, or "user" when set by PUT …/policies. */
  kind_source?: "inferred" | "user";
  /** The latest scan's statistics of the attribute (absent until a scan profiled it). */
  stats?: AttributeStats;
}

/** What the latest scan measured of an attribute, as GET …/assets?with_attributes=true shows it. */
export interface AttributeStats {
  scanned_at: string;
  count: number;
  nulls: number;
  empties: number;
  distinct: number;
  distinct_exact: boolean;
  inferred_type: string;
  type_mismatches: number;
  min?: number | string;
  max?: number | string;
  mean?: number;
  stddev?: number;
  /** The values at p0, p1, p5, p10, p25, p50, p75, p90, p95, p99, p100. */
  quantiles?: number[];
  top_values?: Array<{ value: string; count: number }>;
}

/** One monitored table or file, under a project, read through a connection. */
export const assets = sqliteTable(
  "assets",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id),
    connectionId: integer("connection_id")
      .notNull()
      .references(() => connections.id),
    /** Set when the asset belongs to a (deprecated) source group. */
    sourceGroupId: integer("source_group_id"),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    type: text("type", { enum: CONNECTION_TYPES }).notNull(),
    options: text("options", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    dbType: text("db_type"),
    /** The schema read from the source (POST …/schema, and every scan), with each attribute's kind. */
    attributes: text("attributes", { mode: "json" }).$type<AssetAttribute[]>(),
    scheduleCron: text("schedule_cron"),
    scheduleTimezone: text("schedule_timezone").notNull().default("UTC"),
    scheduleEnabled: integer("schedule_enabled", { mode: "boolean" }).notNull().default(false),
    /** Next minute the schedule is due (ISO 8601 UTC); the cron dispatcher reads it. */
    nextRunAt: text("next_run_at"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("assets_tenant_project_idx").on(t.tenantId, t.projectId, t.id),
    index("assets_tenant_connection_idx").on(t.tenantId, t.connectionId),
    index("assets_tenant_group_idx").on(t.tenantId, t.sourceGroupId),
    index("assets_next_run_idx").on(t.nextRunAt),
  ],
);

/** Lineage: parent feeds child. Both assets are of the same tenant. */
export const assetLineage = sqliteTable(
  "asset_lineage",
  {
    tenantId: text("tenant_id").notNull(),
    parentAssetId: integer("parent_asset_id")
      .notNull()
      .references(() => assets.id, { onDelete: "cascade" }),
    childAssetId: integer("child_asset_id")
      .notNull()
      .references(() => assets.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.parentAssetId, t.childAssetId] }),
    index("asset_lineage_child_idx").on(t.childAssetId),
  ],
);

/**
 * Every column of an asset but its attributes (the latest scan's statistics of each attribute:
 * tens of KB of JSON for a wide table), for the reads that do not show them: a scan, an upload,
 * the scan job routes. Read and parsed for nothing, they were a measurable part of a scan's CPU.
 */
export const assetHeadColumns = (() => {
  const { attributes: _attributes, ...head } = getTableColumns(assets);
  return head;
})();

export const SOURCE_GROUP_TYPES = ["SNOWFLAKE", "REDSHIFT", "BIGQUERY", "DELTALAKE"] as const;

/** A set of assets sharing one configuration (deprecated API, /api/backend/v2/). */
export const sourceGroups = sqliteTable(
  "source_groups",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id),
    connectionId: integer("connection_id")
      .notNull()
      .references(() => connections.id),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    type: text("type", { enum: SOURCE_GROUP_TYPES }).notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    options: text("options", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    dbType: text("db_type"),
    /** Cron expression (UTC) or null. */
    scheduledUpload: text("scheduled_upload"),
    nextRunAt: text("next_run_at"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("source_groups_tenant_project_idx").on(t.tenantId, t.projectId, t.id),
    index("source_groups_next_run_idx").on(t.nextRunAt),
  ],
);

export const SCAN_JOB_STATUSES = ["QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"] as const;
export const SCAN_JOB_KINDS = ["ANALYZE", "SCAN", "SCHEMA"] as const;
/** Where a scan runs: light in the Worker, full on the tenant's Spark cluster. */
export const SCAN_ENGINES = ["WORKER", "SPARK"] as const;
/** The Spark providers a full scan can be dispatched to. */
export const SPARK_PROVIDERS = ["DATABRICKS", "EMR", "DATAPROC"] as const;
export type SparkProvider = (typeof SPARK_PROVIDERS)[number];

/** A scan of an asset: triggered, uploaded, scheduled, or the analyze job of a new group asset. */
export const scanJobs = sqliteTable(
  "scan_jobs",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    assetId: integer("asset_id").notNull(),
    kind: text("kind", { enum: SCAN_JOB_KINDS }).notNull(),
    status: text("status", { enum: SCAN_JOB_STATUSES }).notNull(),
    /** What started it: api, upload, schedule, source_group. */
    trigger: text("trigger").notNull(),
    /** The request that describes the scan (location, path, format…), JSON. */
    request: text("request", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    rowsScanned: integer("rows_scanned").notNull().default(0),
    /** Bytes the scan will read, when known up front (files): progress = bytes_scanned / total_bytes. */
    totalBytes: integer("total_bytes"),
    bytesScanned: integer("bytes_scanned").notNull().default(0),
    error: text("error"),
    attempts: integer("attempts").notNull().default(0),
    createdAt: text("created_at").notNull(),
    startedAt: text("started_at"),
    finishedAt: text("finished_at"),
    engine: text("engine", { enum: SCAN_ENGINES }).notNull().default("WORKER"),
    /** Why the scan runs where it runs (or why a requested full scan could not), in words. */
    engineReason: text("engine_reason"),
    provider: text("provider", { enum: SPARK_PROVIDERS }),
    /** The provider's id of the run (Databricks run_id, EMR cluster id, Dataproc operation name). */
    providerRunId: text("provider_run_id"),
    providerRunUrl: text("provider_run_url"),
    /** The provider's own state of the run, as last polled (RUNNING, TERMINATED_WITH_ERRORS…). */
    providerState: text("provider_state"),
    /** The per-job HMAC key of the Spark callback, sealed (lib/crypto SealedSecret JSON). */
    callbackSecret: text("callback_secret"),
    /** When the single-use callback was accepted; null until then. */
    callbackUsedAt: text("callback_used_at"),
    /** After this instant a full scan that has not called back is timed out. */
    callbackDeadline: text("callback_deadline"),
  },
  (t) => [
    index("scan_jobs_tenant_asset_idx").on(t.tenantId, t.assetId, t.createdAt),
    // The minute cron polls the running provider runs of every tenant.
    index("scan_jobs_spark_running_idx").on(t.status, t.engine).where(sql`${t.providerRunId} is not null`),
  ],
);
