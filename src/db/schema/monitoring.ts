import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

export const PRIORITIES = ["LOW", "MEDIUM", "HIGH"] as const;
export type Priority = (typeof PRIORITIES)[number];

/**
 * An alert: one policy violation found by one scan (spec 2.6 fields plus the explanation).
 * Written only by the asset's AssetMonitor; (job, type, attribute, segment) is unique, so applying the
 * same job twice writes nothing new.
 */
export const alerts = sqliteTable(
  "alerts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id").notNull(),
    assetId: integer("asset_id").notNull(),
    projectId: integer("project_id").notNull(),
    connectionId: integer("connection_id").notNull(),
    jobId: text("job_id").notNull(),
    /** The policy id, e.g. "completeness". */
    type: text("type").notNull(),
    policyName: text("policy_name").notNull(),
    /** The attribute the alert is about; "" for asset-level alerts (keeps the unique key simple). */
    attribute: text("attribute").notNull().default(""),
    /** The segment the alert is about (segmentKey: JSON [attribute, value]); "" for the whole asset. */
    segment: text("segment").notNull().default(""),
    priority: text("priority", { enum: PRIORITIES }).notNull(),
    description: text("description").notNull(),
    sourceName: text("source_name").notNull(),
    sourceType: text("source_type").notNull(),
    isNotificationEnabled: integer("is_notification_enabled", { mode: "boolean" }).notNull(),
    metric: text("metric").notNull(),
    metricValue: text("metric_value").notNull(),
    /** When the measured data was produced (the scan's time). */
    metricTime: text("metric_time").notNull(),
    /** When the job was created (upload time). */
    createTime: text("create_time").notNull(),
    saveTime: text("save_time").notNull(),
    /** Observed value, expected band, strategy, training window and size, dimension. */
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  },
  (t) => [
    uniqueIndex("alerts_job_type_attr_segment_uq").on(t.jobId, t.type, t.attribute, t.segment),
    index("alerts_tenant_job_idx").on(t.tenantId, t.jobId),
    index("alerts_tenant_asset_time_idx").on(t.tenantId, t.assetId, t.saveTime),
    index("alerts_tenant_time_idx").on(t.tenantId, t.saveTime),
  ],
);

/** DQ score of an asset per scan (0-100 per dimension and overall). */
export const dqScores = sqliteTable(
  "dq_scores",
  {
    jobId: text("job_id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    assetId: integer("asset_id").notNull(),
    scoredAt: text("scored_at").notNull(),
    completeness: real("completeness").notNull(),
    accuracy: real("accuracy").notNull(),
    consistency: real("consistency").notNull(),
    timeliness: real("timeliness").notNull(),
    overall: real("overall").notNull(),
  },
  (t) => [index("dq_scores_tenant_asset_time_idx").on(t.tenantId, t.assetId, t.scoredAt)],
);

/** Per-asset policy overrides (enabled, priority, params), validated by the policies' schema. */
export const assetPolicies = sqliteTable("asset_policies", {
  assetId: integer("asset_id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  overrides: text("overrides", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  /** Consecutive clean scans after which an incident closes itself (default 3). */
  autoCloseAfter: integer("auto_close_after"),
  /** Scans at a new level after which the detector adopts it and closes the incident as NEW_NORMAL (default 3). */
  adaptAfter: integer("adapt_after"),
  /** Attribute kinds set by a user (attribute name → kind); they win over the inferred kinds. */
  attributeKinds: text("attribute_kinds", { mode: "json" }).$type<Record<string, string>>(),
  /** false mutes notifications for the whole asset (per policy: overrides[policy].notify). */
  notify: integer("notify", { mode: "boolean" }),
  updatedAt: text("updated_at").notNull(),
});

/**
 * Scan jobs whose results the AssetMonitor wrote to D1. Inserted first in the same batch as
 * the job's alerts, score and incident changes: a replayed job fails on this key and the whole
 * batch rolls back, so nothing is written twice.
 */
export const monitorAppliedJobs = sqliteTable(
  "monitor_applied_jobs",
  {
    jobId: text("job_id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    assetId: integer("asset_id").notNull(),
    appliedAt: text("applied_at").notNull(),
    /** The scan's freshness (newest timestamp), where a delta_only scan of the asset starts next. */
    freshness: text("freshness"),
  },
  (t) => [index("monitor_applied_jobs_asset_idx").on(t.tenantId, t.assetId, t.appliedAt)],
);

/**
 * One row per asset, changed in place by each scan the AssetMonitor applies (the per-scan history,
 * applied jobs and DQ scores, lives in the asset's Durable Object): the last job whose results are
 * in D1, so a job replayed after its D1 batch committed (and its object's record did not) is not
 * written twice, and the freshness a delta_only scan starts from.
 */
export const assetMonitorMarks = sqliteTable("asset_monitor_marks", {
  assetId: integer("asset_id").primaryKey(),
  tenantId: text("tenant_id").notNull(),
  /** The last job whose D1 writes committed (null: none since the mark was made by the history's move). */
  lastJobId: text("last_job_id"),
  appliedAt: text("applied_at"),
  /** The freshness (newest timestamp) of the last applied scan that had one. */
  freshness: text("freshness"),
  /**
   * Steps of the move of the asset's DQ scores and job markers from D1 into its object that
   * finished (their D1 rows deleted): a read that met fewer in the object retries (settings/dq-score.ts).
   */
  movedSteps: integer("moved_steps").notNull().default(0),
  /**
   * When the asset's newest alert was saved (its alerts live in its object, issue 38): what the
   * cross-asset "assets with alerts since" (incident backfill) reads.
   */
  lastAlertAt: text("last_alert_at"),
});
