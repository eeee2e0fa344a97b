/**
 * Issue 38's move: each asset's DQ scores, job markers, alerts, ended scan jobs and its incidents'
 * history entries leave D1 for the asset's Durable Object
 * (the AssetMonitor keeps them since). Online, idempotent and resumable: every cron tick takes
 * the assets that still have such rows in D1 and has each asset's object move them in steps
 * (AssetMonitor.moveHistoryIn: copy in, then delete from D1); the rows left in D1 are the
 * progress, so a tick cut short loses nothing and the next one goes on. Scans and reads go on
 * meanwhile: scans write only the object, reads merge both places (settings/dq-score.ts). Rows of
 * an asset that no longer exists are deleted, not moved. Once D1 holds none, a tick costs one
 * small read.
 */

import { assetMonitor } from "../contracts/asset-monitor-client";
import { unfencedSql } from "../db/fences";
import type { Env } from "../env";
import { ENDED } from "./retention";

/** Assets one tick looks at. */
export const MOVE_ASSETS_PER_TICK = 20;
/** Rows of each table one step copies (one D1 read and one D1 batch each). */
export const MOVE_ROWS = 500;
/** Steps one tick runs at most, all assets together. */
export const MOVE_STEPS_PER_TICK = 40;

/** What one tick moved (and deleted, of assets that are gone). */
export interface MoveReport {
  assets: number;
  dqScores: number;
  appliedJobs: number;
  alerts: number;
  /** Ended scan jobs (issue 38: D1 keeps a job only while it runs). */
  scanJobs: number;
  /** History entries of incidents (kept by the incident's asset's object since). */
  incidentHistory: number;
  deletedOfGoneAssets: number;
  /** Whether rows may be left for the next tick. */
  more: boolean;
}

/** One tick of the move: at most MOVE_ASSETS_PER_TICK assets, MOVE_STEPS_PER_TICK steps. */
export async function moveHistoryTick(
  env: Pick<Env, "DB" | "ASSET_MONITOR">,
  limits: { assets?: number; rows?: number; steps?: number } = {},
): Promise<MoveReport> {
  const rows = limits.rows ?? MOVE_ROWS;
  let steps = limits.steps ?? MOVE_STEPS_PER_TICK;
  const report: MoveReport = {
    assets: 0,
    dqScores: 0,
    appliedJobs: 0,
    alerts: 0,
    scanJobs: 0,
    incidentHistory: 0,
    deletedOfGoneAssets: 0,
    more: false,
  };
  // The first rows of each table name the assets still to move: a probe of a few rows whatever
  // the tables hold (none once the move is done). A tenant fenced by a shard move is left for
  // later (src/db/fences.ts): its rows here cannot change, and must not hold up the others'.
  const here = (table: string) => unfencedSql(`${table}.tenant_id`);
  const { results } = await env.DB.prepare(
    `SELECT p.tenant_id AS tenantId, p.asset_id AS assetId, a.id IS NOT NULL AS live FROM (
       SELECT DISTINCT tenant_id, asset_id FROM (SELECT tenant_id, asset_id FROM dq_scores WHERE ${here("dq_scores")} LIMIT ?1)
       UNION SELECT DISTINCT tenant_id, asset_id FROM (SELECT tenant_id, asset_id FROM monitor_applied_jobs WHERE ${here("monitor_applied_jobs")} LIMIT ?1)
       UNION SELECT DISTINCT tenant_id, asset_id FROM (SELECT tenant_id, asset_id FROM alerts WHERE ${here("alerts")} LIMIT ?1)
       UNION SELECT DISTINCT tenant_id, asset_id FROM (SELECT tenant_id, asset_id FROM scan_jobs
         WHERE status IN (${ENDED}) AND callback_secret IS NULL AND ${here("scan_jobs")} LIMIT ?1)
       UNION SELECT DISTINCT tenant_id, asset_id FROM (SELECT i.tenant_id, i.asset_id FROM incident_history h
         JOIN incidents i ON i.id = h.incident_id WHERE ${here("h")} LIMIT ?1)
     ) p LEFT JOIN assets a ON a.id = p.asset_id AND a.tenant_id = p.tenant_id LIMIT ?2`,
  )
    .bind(rows, limits.assets ?? MOVE_ASSETS_PER_TICK)
    .all<{ tenantId: string; assetId: number; live: number }>();
  for (const { tenantId, assetId, live } of results) {
    if (steps <= 0) {
      report.more = true;
      break;
    }
    report.assets += 1;
    if (!live) {
      const where = "WHERE tenant_id = ? AND asset_id = ?";
      const done = await env.DB.batch([
        ...["dq_scores", "monitor_applied_jobs", "alerts"].map((table) =>
          env.DB.prepare(`DELETE FROM ${table} ${where}`).bind(tenantId, assetId),
        ),
        env.DB.prepare(`DELETE FROM scan_jobs ${where} AND status IN (${ENDED})`).bind(tenantId, assetId),
        env.DB.prepare(
          `DELETE FROM incident_history WHERE tenant_id = ?1
           AND incident_id IN (SELECT id FROM incidents WHERE tenant_id = ?1 AND asset_id = ?2)`,
        ).bind(tenantId, assetId),
      ]);
      report.deletedOfGoneAssets += done.reduce((n, r) => n + (r.meta.changes ?? 0), 0);
      steps -= 1;
      continue;
    }
    const monitor = assetMonitor(env, tenantId, assetId);
    for (let more = true; more; ) {
      if (steps <= 0) {
        report.more = true;
        break;
      }
      steps -= 1;
      const moved = await monitor.moveHistoryIn({ asset: { tenantId, id: assetId }, limit: rows });
      report.dqScores += moved.dqScores;
      report.appliedJobs += moved.appliedJobs;
      report.alerts += moved.alerts;
      report.scanJobs += moved.scanJobs;
      report.incidentHistory += moved.incidentHistory;
      more = moved.more;
    }
  }
  if (results.length === (limits.assets ?? MOVE_ASSETS_PER_TICK)) report.more = true;
  return report;
}
