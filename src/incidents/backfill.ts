import { and, asc, eq, exists, gte, or, type SQL, sql } from "drizzle-orm";
import type { MonitoredAsset } from "../contracts/asset-monitor";
import { assetMonitor } from "../contracts/asset-monitor-client";
import type { Db } from "../db";
import { insertWhere } from "../db/json-insert";
import {
  alerts,
  assetMonitorMarks,
  assets,
  type BackfillError,
  type IncidentBackfillRow,
  incidentBackfills,
} from "../db/schema";
import type { Env } from "../env";
import { randomId } from "../lib/ids";
import { nowIso } from "../lib/time";

/** Spec 8: the incident backfill covers the last 30 days. */
export const BACKFILL_DAYS = 30;
/** AssetMonitors rebuilt at once: each is its own object, so a few run in parallel. */
const PARALLEL_ASSETS = 4;
const DAY_MS = 86_400_000;

/** Progress of one backfill, as its incident_backfills row. */

/** Selects the job's row; with `running`, only while it is RUNNING (every progress write needs that). */
function whereJob(tenantId: string, jobId: string, running = false) {
  return and(
    eq(incidentBackfills.tenantId, tenantId),
    eq(incidentBackfills.id, jobId),
    running ? eq(incidentBackfills.status, "RUNNING") : undefined,
  );
}

/** A backfill job of the tenant, or undefined. */
export async function getBackfillJob(
  db: Db,
  tenantId: string,
  jobId: string,
): Promise<IncidentBackfillRow | undefined> {
  return db.query.incidentBackfills.findFirst({ where: whereJob(tenantId, jobId) });
}

/**
 * The INSERT of a new backfill job (RUNNING, nothing done yet), written where `allowed` holds (the
 * caller's access, checked in the same batch); it returns the row. The queued steps do the work.
 */
export function startBackfillStatement(db: Db, tenantId: string, actor: string, now: Date, allowed: SQL) {
  return insertWhere(
    db,
    incidentBackfills,
    {
      tenantId,
      id: randomId(),
      status: "RUNNING",
      since: new Date(now.getTime() - BACKFILL_DAYS * DAY_MS).toISOString(),
      until: now.toISOString(),
      requestedBy: actor,
      startedAt: now.toISOString(),
      errors: [],
    },
    allowed,
  ).returning();
}

/** The job a startBackfillStatement wrote (its access check passed, so it wrote one). */
export function backfillStarted(rows: IncidentBackfillRow[]): IncidentBackfillRow {
  const [job] = rows;
  if (!job) throw new Error("the backfill's INSERT wrote no row though its access check passed");
  return job;
}

/**
 * The tenant's assets that have alerts since `since`: their mark's last alert time (their alerts
 * live in their objects, issue 38), or alerts still in D1 (alerts_tenant_asset_time_idx answers
 * each probe).
 */
export async function assetsWithAlertsSince(db: Db, tenantId: string, since: string): Promise<MonitoredAsset[]> {
  return db
    .select({
      tenantId: assets.tenantId,
      id: assets.id,
      name: assets.name,
      type: assets.type,
      projectId: assets.projectId,
      connectionId: assets.connectionId,
    })
    .from(assets)
    .where(
      and(
        eq(assets.tenantId, tenantId),
        or(
          exists(
            db
              .select({ one: sql`1` })
              .from(assetMonitorMarks)
              .where(and(eq(assetMonitorMarks.assetId, assets.id), gte(assetMonitorMarks.lastAlertAt, since))),
          ),
          exists(
            db
              .select({ one: sql`1` })
              .from(alerts)
              .where(and(eq(alerts.tenantId, tenantId), eq(alerts.assetId, assets.id), gte(alerts.saveTime, since))),
          ),
        ),
      ),
    )
    .orderBy(asc(assets.id));
}

/** Assets one step of a backfill rebuilds before it hands over to the next queue message. */
export const ASSETS_PER_STEP = 50;

/**
 * One step of a backfill, run by the scan-jobs queue consumer: rebuilds the incidents of the
 * next ASSETS_PER_STEP assets (by id, after `afterAssetId`) with alerts in the job's window,
 * through their AssetMonitors (idempotent there), and saves the progress. Returns the cursor of
 * the next step, or undefined when the job is finished. The save applies only while the job is
 * RUNNING and still at `afterAssetId`: a replayed or duplicated step writes nothing and hands
 * over to no one. One asset's failure is recorded and the others go on.
 */
export async function runBackfillStep(
  env: Pick<Env, "ASSET_MONITOR">,
  db: Db,
  tenantId: string,
  jobId: string,
  afterAssetId: number,
  perStep = ASSETS_PER_STEP,
): Promise<number | undefined> {
  const job = await getBackfillJob(db, tenantId, jobId);
  if (job?.status !== "RUNNING" || job.afterAssetId !== afterAssetId) return undefined;
  const progress = {
    assetsTotal: job.assetsTotal,
    assetsDone: job.assetsDone,
    incidents: job.incidents,
    alerts: job.alerts,
    errors: [...job.errors],
    afterAssetId,
  };
  let next: number | undefined;
  try {
    const all = await assetsWithAlertsSince(db, tenantId, job.since);
    progress.assetsTotal ??= all.length;
    const targets = all.filter((a) => a.id > afterAssetId).slice(0, perStep);
    for (let i = 0; i < targets.length; i += PARALLEL_ASSETS) {
      const group = targets.slice(i, i + PARALLEL_ASSETS);
      const results = await Promise.allSettled(
        group.map((asset) => assetMonitor(env, tenantId, asset.id).rebuildIncidents({ asset, since: job.since })),
      );
      results.forEach((r, k) => {
        if (r.status === "fulfilled") {
          progress.incidents += r.value.incidents;
          progress.alerts += r.value.alerts;
        } else {
          progress.errors.push({ asset_id: String(group[k]!.id), message: String(r.reason?.message ?? r.reason) });
        }
      });
      progress.assetsDone += group.length;
    }
    const last = targets.at(-1);
    if (last) progress.afterAssetId = last.id;
    if (last && all.some((a) => a.id > last.id)) next = last.id;
  } catch (err) {
    progress.errors.push({ asset_id: "", message: String((err as Error)?.message ?? err) });
  }
  const status = next !== undefined ? "RUNNING" : progress.errors.length > 0 ? "FAILED" : "SUCCEEDED";
  const saved = await db
    .update(incidentBackfills)
    .set({ ...progress, status, finishedAt: status === "RUNNING" ? null : nowIso() })
    .where(and(whereJob(tenantId, jobId, true), eq(incidentBackfills.afterAssetId, afterAssetId)))
    .returning({ id: incidentBackfills.id });
  return saved.length > 0 ? next : undefined;
}

/** Marks a backfill FAILED when its step could not be delivered (dead-letter queue); a finished one stays as it is. */
export async function failBackfill(db: Db, tenantId: string, jobId: string, reason: string): Promise<void> {
  const error: BackfillError = { asset_id: "", message: reason };
  await db
    .update(incidentBackfills)
    .set({
      status: "FAILED",
      // Appended in SQL: no read, so nothing can slip in between.
      errors: sql`json_insert(${incidentBackfills.errors}, '$[#]', json(${JSON.stringify(error)}))`,
      finishedAt: nowIso(),
    })
    .where(whereJob(tenantId, jobId, true));
}
