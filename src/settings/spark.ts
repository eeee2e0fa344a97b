import { and, eq, type SQL } from "drizzle-orm";
import type { Db } from "../db";
import { insertWhere } from "../db/json-insert";
import { sparkJobConfigs } from "../db/schema";
import { nowIso } from "../lib/time";

/** The four independently stored blocks of a tenant's Spark job configuration (spec 2.9). */
export const SPARK_BLOCKS = ["spark_properties", "dataproc_config", "emr_config", "databricks_config"] as const;
export type SparkBlock = (typeof SPARK_BLOCKS)[number];

/** A stored configuration: only the blocks that are set. */
export type SparkJobConfig = {
  spark_properties?: Record<string, string>;
  dataproc_config?: Record<string, unknown>;
  emr_config?: Record<string, unknown>;
  databricks_config?: Record<string, unknown>;
  /** Files larger than this go to Spark (docs/resources/light-and-full-scans.md); absent = the default. */
  full_scan_threshold_bytes?: number;
};

/** A PUT: a block omitted (undefined) keeps its value, null clears it, an object replaces it whole. */
export type SparkJobConfigChanges = { [B in SparkBlock]?: SparkJobConfig[B] | null } & {
  full_scan_threshold_bytes?: number | null;
};

type Row = typeof sparkJobConfigs.$inferSelect;

const COLUMN = {
  spark_properties: "sparkProperties",
  dataproc_config: "dataprocConfig",
  emr_config: "emrConfig",
  databricks_config: "databricksConfig",
} as const satisfies Record<SparkBlock, keyof Row>;

function view(row: Row | undefined): SparkJobConfig {
  const config: Record<string, unknown> = {};
  if (!row) return config;
  for (const block of SPARK_BLOCKS) {
    const value = row[COLUMN[block]];
    if (value !== null && value !== undefined) config[block] = value;
  }
  if (row.fullScanThresholdBytes !== null) config.full_scan_threshold_bytes = row.fullScanThresholdBytes;
  return config as SparkJobConfig;
}

/** The tenant's configuration; `{}` when none has been saved. */
export async function getSparkJobConfig(db: Db, tenantId: string): Promise<SparkJobConfig> {
  return view(await db.query.sparkJobConfigs.findFirst({ where: eq(sparkJobConfigs.tenantId, tenantId) }));
}

/**
 * The statement that applies a PUT, one upsert, so concurrent PUTs of different blocks never undo
 * each other: only the blocks sent appear in the conflict update. It writes only where `allowed`
 * holds (the caller's access, checked in the same batch); read its row with sparkJobConfigView.
 */
export function putSparkJobConfigStatement(
  db: Db,
  tenantId: string,
  changes: SparkJobConfigChanges,
  allowed: SQL | undefined,
) {
  const updatedAt = nowIso();
  const set: Partial<Pick<Row, (typeof COLUMN)[SparkBlock] | "fullScanThresholdBytes">> = {};
  if (changes.spark_properties !== undefined) set.sparkProperties = changes.spark_properties;
  if (changes.dataproc_config !== undefined) set.dataprocConfig = changes.dataproc_config;
  if (changes.emr_config !== undefined) set.emrConfig = changes.emr_config;
  if (changes.databricks_config !== undefined) set.databricksConfig = changes.databricks_config;
  if (changes.full_scan_threshold_bytes !== undefined) set.fullScanThresholdBytes = changes.full_scan_threshold_bytes;
  return insertWhere(db, sparkJobConfigs, { tenantId, ...set, updatedAt }, allowed)
    .onConflictDoUpdate({ target: sparkJobConfigs.tenantId, set: { ...set, updatedAt } })
    .returning();
}

/** The configuration a putSparkJobConfigStatement wrote (none: it did not write). */
export const sparkJobConfigView = (rows: readonly Row[]): SparkJobConfig => view(rows[0]);

/**
 * The statement that removes the configuration for good, where `allowed` holds (the caller's
 * access, checked in the same batch); removing none is not an error.
 */
export function deleteSparkJobConfigStatement(db: Db, tenantId: string, allowed: SQL | undefined) {
  return db.delete(sparkJobConfigs).where(and(eq(sparkJobConfigs.tenantId, tenantId), allowed));
}
