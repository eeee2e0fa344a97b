import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import { type DqWeights, normaliseWeights } from "../contracts/dimensions";
import type { Db } from "../db";
import { insertWhere } from "../db/json-insert";
import { dqScoreConfigs, dqScores } from "../db/schema";
import { nowIso } from "../lib/time";

/** How an asset's DQ score is computed: the overall score is the weighted mean of the dimensions. */
export interface DqScoreConfig {
  enabled: boolean;
  /** Non-negative, summing to 1. */
  weights: DqWeights;
}

/** What an asset without a stored configuration uses. */
export function defaultDqScoreConfig(): DqScoreConfig {
  return { enabled: true, weights: { completeness: 0.25, accuracy: 0.25, consistency: 0.25, timeliness: 0.25 } };
}

/** The effective configuration of an asset (defaults when none is stored); the scan pipeline reads it. */
export async function getDqScoreConfig(db: Db, tenantId: string, assetId: number): Promise<DqScoreConfig> {
  return dqScoreConfigOf((await dqScoreConfigQuery(db, tenantId, assetId))[0]);
}

/**
 * The asset's stored DQ score settings, at most one row (for dqScoreConfigOf), as a query a D1
 * batch can carry (a select: drizzle's batch fails to map a findFirst that finds nothing).
 */
export function dqScoreConfigQuery(db: Db, tenantId: string, assetId: number) {
  return db
    .select()
    .from(dqScoreConfigs)
    .where(and(eq(dqScoreConfigs.tenantId, tenantId), eq(dqScoreConfigs.assetId, assetId)))
    .limit(1);
}

/** The settings a stored row says, or the defaults without one. */
export function dqScoreConfigOf(row: { enabled: boolean; weights: DqWeights } | undefined): DqScoreConfig {
  return row ? { enabled: row.enabled, weights: row.weights } : defaultDqScoreConfig();
}

/**
 * The statement that changes what is sent (an omitted member keeps its value), for the caller's
 * batch: one upsert, so concurrent changes of `enabled` and of `weights` do not undo each other,
 * written only where `allowed` holds (the caller's access to the asset, checked in the same
 * batch). Weights are stored normalised; the row written comes back (dqScoreConfigOf reads it).
 */
export function putDqScoreConfigStatement(
  db: Db,
  tenantId: string,
  assetId: number,
  changes: { enabled?: boolean; weights?: DqWeights },
  allowed: SQL,
) {
  const defaults = defaultDqScoreConfig();
  const set: { enabled?: boolean; weights?: DqWeights; updatedAt: string } = { updatedAt: nowIso() };
  if (changes.enabled !== undefined) set.enabled = changes.enabled;
  if (changes.weights !== undefined) set.weights = normaliseWeights(changes.weights);
  const row = { assetId, tenantId, enabled: defaults.enabled, weights: defaults.weights, ...set };
  return insertWhere(db, dqScoreConfigs, row, allowed)
    .onConflictDoUpdate({ target: dqScoreConfigs.assetId, set })
    .returning();
}

/**
 * The statement that reverts an asset to the defaults (which it then reports), for the caller's
 * batch: it deletes only where `allowed` holds.
 */
export function resetDqScoreConfigStatement(db: Db, tenantId: string, assetId: number, allowed: SQL) {
  return db
    .delete(dqScoreConfigs)
    .where(and(eq(dqScoreConfigs.tenantId, tenantId), eq(dqScoreConfigs.assetId, assetId), allowed));
}

/** One page of an asset's DQ scores, newest first (`limit + 1` rows). */
export function dqScoreHistory(db: Db, asset: { tenantId: string; id: number }, limit: number, before?: string) {
  return db.query.dqScores.findMany({
    where: and(
      eq(dqScores.tenantId, asset.tenantId),
      eq(dqScores.assetId, asset.id),
      before === undefined ? undefined : lt(dqScores.scoredAt, before),
    ),
    orderBy: [desc(dqScores.scoredAt), desc(dqScores.jobId)],
    limit: limit + 1,
  });
}
