import { and, asc, eq, exists, gte, sql } from "drizzle-orm";
import type { Db } from "../db";
import { alerts, assets } from "../db/schema";
import type { Env } from "../env";
import { randomId } from "../lib/ids";
import { assetMonitor } from "../monitor/client";
import type { IncidentAsset } from "../monitor/incidents";

/** Spec 8: the incident backfill covers the last 30 days. */
export const BACKFILL_DAYS = 30;
/** AssetMonitors rebuilt at once: each is its own object, so a few run in parallel. */
const PARALLEL_ASSETS = 4;
const DAY_MS = 86_400_000;

export type BackfillStatus = "RUNNING" | "SUCCEEDED" | "FAILED";

/** Progress of one backfill, kept as a JSON object in R2 (no D1 table holds tenant-wide jobs). */
export interface BackfillJob {
  job_id: string;
  status: BackfillStatus;
  since: string;
  until: string;
  requested_by: string;
  started_at: string;
  finished_at: string | null;
  assets_total: number | null;
  assets_done: number;
  incidents: number;
  alerts: number;
  errors: Array<{ asset_id: string; message: string }>;
}

const jobKey = (tenantId: string, jobId: string) => `jobs/incidents-historical/${tenantId}/${jobId}.json`;

async function saveJob(bucket: R2Bucket, tenantId: string, job: BackfillJob): Promise<void> {
  await bucket.put(jobKey(tenantId, job.job_id), JSON.stringify(job), {
    httpMetadata: { contentType: "application/json" },
  });
}

/** A backfill job of the tenant, or undefined. */
export async function getBackfillJob(bucket: R2Bucket, tenantId: string, jobId: string) {
  if (!/^[0-9A-Za-z]{1,64}$/.test(jobId)) return undefined;
  const object = await bucket.get(jobKey(tenantId, jobId));
  return object ? ((await object.json()) as BackfillJob) : undefined;
}

/** Records a new backfill job (RUNNING, nothing done yet); `run` does the work. */
export async function startBackfill(bucket: R2Bucket, tenantId: string, actor: string, now: Date) {
  const job: BackfillJob = {
    job_id: randomId(),
    status: "RUNNING",
    since: new Date(now.getTime() - BACKFILL_DAYS * DAY_MS).toISOString(),
    until: now.toISOString(),
    requested_by: actor,
    started_at: now.toISOString(),
    finished_at: null,
    assets_total: null,
    assets_done: 0,
    incidents: 0,
    alerts: 0,
    errors: [],
  };
  await saveJob(bucket, tenantId, job);
  return job;
}

/** The tenant's assets that have alerts since `since` (alerts_tenant_asset_time_idx answers each probe). */
export async function assetsWithAlertsSince(db: Db, tenantId: string, since: string): Promise<IncidentAsset[]> {
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
        exists(
          db
            .select({ one: sql`1` })
            .from(alerts)
            .where(and(eq(alerts.tenantId, tenantId), eq(alerts.assetId, assets.id), gte(alerts.saveTime, since))),
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
 * the next step, or undefined when the job is finished. One step at a time means one writer of
 * the progress record; one asset's failure is recorded and the others go on.
 */
export async function runBackfillStep(
  env: Pick<Env, "ASSET_MONITOR" | "UPLOADS">,
  db: Db,
  tenantId: string,
  jobId: string,
  afterAssetId: number,
  perStep = ASSETS_PER_STEP,
): Promise<number | undefined> {
  const job = await getBackfillJob(env.UPLOADS, tenantId, jobId);
  if (job?.status !== "RUNNING") return undefined;
  let next: number | undefined;
  try {
    const all = await assetsWithAlertsSince(db, tenantId, job.since);
    if (job.assets_total === null) job.assets_total = all.length;
    const targets = all.filter((a) => a.id > afterAssetId).slice(0, perStep);
    for (let i = 0; i < targets.length; i += PARALLEL_ASSETS) {
      const group = targets.slice(i, i + PARALLEL_ASSETS);
      const results = await Promise.allSettled(
        group.map((asset) => assetMonitor(env, tenantId, asset.id).rebuildIncidents({ asset, since: job.since })),
      );
      results.forEach((r, k) => {
        if (r.status === "fulfilled") {
          job.incidents += r.value.incidents;
          job.alerts += r.value.alerts;
        } else {
          job.errors.push({ asset_id: String(group[k]!.id), message: String(r.reason?.message ?? r.reason) });
        }
      });
      job.assets_done += group.length;
    }
    const last = targets.at(-1);
    if (last && all.some((a) => a.id > last.id)) next = last.id;
  } catch (err) {
    job.errors.push({ asset_id: "", message: String((err as Error)?.message ?? err) });
  }
  if (next === undefined) {
    job.status = job.errors.length > 0 ? "FAILED" : "SUCCEEDED";
    job.finished_at = new Date().toISOString();
  }
  await saveJob(env.UPLOADS, tenantId, job);
  return next;
}

/** Marks a backfill FAILED when its step could not be delivered (dead-letter queue). */
export async function failBackfill(bucket: R2Bucket, tenantId: string, jobId: string, reason: string): Promise<void> {
  const job = await getBackfillJob(bucket, tenantId, jobId);
  if (job?.status !== "RUNNING") return;
  job.status = "FAILED";
  job.errors.push({ asset_id: "", message: reason });
  job.finished_at = new Date().toISOString();
  await saveJob(bucket, tenantId, job);
}
