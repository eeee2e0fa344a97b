import { and, desc, eq, lt, type SQL } from "drizzle-orm";
import { type DqWeights, normaliseWeights } from "../contracts/dimensions";
import type { Db } from "../db";
import { insertWhere } from "../db/json-insert";
import { type DqScoreRow, dqScoreConfigs, dqScores } from "../db/schema";
import { movedStepsQuery } from "../incidents/monitor-store";
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

/** Where an asset's DQ scores are kept: its AssetMonitor (or anything that reads its store). */
export interface DqScoreSource {
  /** A page of scores, and the steps of the move out of D1 the object had taken in when it read them. */
  dqScores(limit: number, before?: string): Promise<{ scores: DqScoreEntry[]; movedSteps: number }>;
}

/** A DQ score as the asset's object keeps it. */
export type DqScoreEntry = Omit<DqScoreRow, "tenantId" | "assetId">;

/** Reads of a page that a step of the move raced before one is taken as it is (each race is a move step's). */
const MOVE_RACE_READS = 3;

/**
 * One page of an asset's DQ scores, newest first (`limit + 1` rows). They live in the asset's
 * object; rows still in D1 (issue 38's move has not reached the asset yet, or is moving it) are
 * read beside them, in parallel, and a score in both places counts once. A step of the move
 * copies rows into the object before it deletes them from D1 and counts itself on the asset's
 * mark: when D1 counts a step the object had not taken in when it answered, the object was read
 * before the copy and D1 after the delete, so the page is read again.
 */
export async function dqScoreHistory(
  db: Db,
  source: DqScoreSource,
  asset: { tenantId: string; id: number },
  limit: number,
  before?: string,
): Promise<DqScoreEntry[]> {
  for (let read = 1; ; read++) {
    const [kept, [legacy, marks]] = await Promise.all([
      source.dqScores(limit + 1, before),
      db.batch([
        db
          .select()
          .from(dqScores)
          .where(
            and(
              eq(dqScores.tenantId, asset.tenantId),
              eq(dqScores.assetId, asset.id),
              before === undefined ? undefined : lt(dqScores.scoredAt, before),
            ),
          )
          .orderBy(desc(dqScores.scoredAt), desc(dqScores.jobId))
          .limit(limit + 1),
        movedStepsQuery(db, asset),
      ]),
    ]);
    if ((marks[0]?.movedSteps ?? 0) > kept.movedSteps && read < MOVE_RACE_READS) continue;
    if (legacy.length === 0) return kept.scores;
    const byJob = new Map<string, DqScoreEntry>(legacy.map(({ tenantId: _t, assetId: _a, ...r }) => [r.jobId, r]));
    for (const r of kept.scores) byJob.set(r.jobId, r);
    return [...byJob.values()].sort(newestFirst).slice(0, limit + 1);
  }
}

/** scored_at, then job id, descending, as SQLite orders the text (both are ASCII). */
function newestFirst(a: DqScoreEntry, b: DqScoreEntry): number {
  if (a.scoredAt !== b.scoredAt) return a.scoredAt < b.scoredAt ? 1 : -1;
  return a.jobId === b.jobId ? 0 : a.jobId < b.jobId ? 1 : -1;
}
