/**
 * Retention (`data_ttl`, days): what a tenant's TTL lets go. Run by the cron in the first hour of
 * each UTC day (see `retentionSlice`), in bounded steps: every statement deletes at most
 * BATCH_ROWS rows, a tenant gets at most MAX_ROUNDS rounds per run (uploads in our bucket: see
 * purgeUploads), so one run stays far inside
 * D1's limits; whatever is left is found by the next run. Every step is idempotent (it deletes
 * what is older than the cutoff and still there), so a run that stops halfway leaves a consistent
 * state and the next one goes on.
 *
 * Kept whatever their age: open incidents, their history and tickets, and the alerts of an asset
 * that has an open incident opened at or before them (what the open incident is about). An asset's
 * alerts, metric history, DQ scores, applied jobs and its incidents' history live in its object,
 * which prunes them (the history of incidents closed before the cutoff). Closed incidents go by
 * their closing time, with their history still in D1 (FK cascade) and ticket requests.
 */

import { asc, eq, sql } from "drizzle-orm";
import { assetMonitor } from "../contracts/asset-monitor-client";
import type { Db } from "../db";
import { unfenced } from "../db/fences";
import { assets, type TenantRow, tenants } from "../db/schema";
import type { Env } from "../env";
import { FINAL_STATUSES } from "../jobs/lifecycle";
import { type StorageEnv, tenantUploadStore, uploadPrefix } from "../jobs/upload-storage";

/** The statuses of a job that ended, as SQL literals (constants of ours, never input). */
export const ENDED = FINAL_STATUSES.map((status) => `'${status}'`).join(", ");

/** Rows one DELETE removes at most. */
export const BATCH_ROWS = 500;
/** Rounds (one DELETE per table each) per tenant per run. */
export const MAX_ROUNDS = 4;
/**
 * Objects deleted from a tenant's own bucket per run, one request each: well inside a Worker's
 * subrequests; a backlog goes on the next day (a lifecycle rule on the bucket can do it sooner).
 */
export const MAX_TENANT_STORE_DELETES = 200;
/** Tenants one cron tick looks after: tick m of the retention hour takes tenants [m·100, m·100+100). */
export const TENANTS_PER_TICK = 100;

const DAY_MS = 86_400_000;

/** What one run removed, per kind. */
export interface RetentionReport {
  tenants: number;
  deleted: Record<string, number>;
}

/**
 * `DELETE … WHERE rowid IN (SELECT rowid … LIMIT n)` statements, one per table: the rows of
 * `tenant` older than `cutoff` that may go. Table names and conditions are ours; the tenant and
 * the cutoff are bound.
 */
function deletions(d1: D1Database, tenant: string, cutoff: string): Record<string, D1PreparedStatement> {
  const limited = (table: string, where: string, binds: unknown[] = [tenant, cutoff]) =>
    d1
      .prepare(`delete from ${table} where rowid in (select rowid from ${table} where ${where} limit ${BATCH_ROWS})`)
      .bind(...binds);
  return {
    alerts: limited(
      "alerts",
      `tenant_id = ?1 and save_time < ?2 and not exists (
        select 1 from incidents i where i.tenant_id = alerts.tenant_id and i.asset_id = alerts.asset_id
        and i.state = 'OPEN' and i.opened_at <= alerts.save_time)`,
    ),
    ticket_requests: limited(
      "ticket_requests",
      `tenant_id = ?1 and incident_id in (select id from incidents where tenant_id = ?1
        and state = 'CLOSED' and closed_at < ?2)`,
    ),
    incidents: limited("incidents", "tenant_id = ?1 and state = 'CLOSED' and closed_at < ?2"),
    // Every job that ended (a cancelled one too) its asset's object has not taken in yet (the
    // objects prune theirs below); a job still queued or running is never removed.
    scan_jobs: limited("scan_jobs", `tenant_id = ?1 and status in (${ENDED}) and created_at < ?2`),
    dq_scores: limited("dq_scores", "tenant_id = ?1 and scored_at < ?2"),
    monitor_applied_jobs: limited("monitor_applied_jobs", "tenant_id = ?1 and applied_at < ?2"),
    // A tally (one day's data-plane requests, decision 0014) goes with its last request.
    audit_events: limited("audit_events", "tenant_id = ?1 and at < ?2 and coalesce(last_at, at) < ?2"),
    notification_deliveries: limited(
      "notification_deliveries",
      "tenant_id = ?1 and status <> 'PENDING' and created_at < ?2",
    ),
  };
}

/** The cutoff of a TTL at `now`: what is older goes. */
export function cutoffOf(ttlDays: number, now: Date): string {
  return new Date(now.getTime() - ttlDays * DAY_MS).toISOString();
}

type RetentionEnv = Pick<Env, "DB" | "UPLOADS" | "ASSET_MONITOR"> & StorageEnv;
type RetentionTenant = Pick<TenantRow, "id" | "dataTtl"> & Partial<Pick<TenantRow, "storage" | "storageSecret">>;

/**
 * Applies one tenant's TTL: D1 rows, uploaded batches (in our R2 and in the tenant's own bucket),
 * and each asset's metric history.
 */
export async function purgeTenant(
  env: RetentionEnv,
  db: Db,
  tenant: RetentionTenant,
  now: Date,
  deleted: Record<string, number> = {},
): Promise<Record<string, number>> {
  const cutoff = cutoffOf(tenant.dataTtl, now);
  const add = (kind: string, n: number) => {
    if (n > 0) deleted[kind] = (deleted[kind] ?? 0) + n;
  };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const statements = deletions(db.$client, tenant.id, cutoff);
    const kinds = Object.keys(statements);
    // One batch per round: each statement is small, and the batch is one round trip.
    const results = await db.$client.batch(Object.values(statements));
    let any = false;
    results.forEach((r, i) => {
      const n = r.meta.changes ?? 0;
      add(kinds[i]!, n);
      if (n >= BATCH_ROWS) any = true;
    });
    if (!any) break;
  }
  add("uploads", await purgeUploads(env.UPLOADS, tenant.id, cutoff));
  add("tenant_storage_uploads", await purgeTenantStorage(env, tenant, cutoff));
  // Each asset with the opening of its oldest open incident: its alerts from then on stay.
  const tenantAssets = await db
    .select({
      id: assets.id,
      openSince: sql<string | null>`(SELECT min(i.opened_at) FROM incidents i
        WHERE i.tenant_id = ${assets.tenantId} AND i.asset_id = ${assets.id} AND i.state = 'OPEN')`,
    })
    .from(assets)
    .where(eq(assets.tenantId, tenant.id));
  for (const { id, openSince } of tenantAssets) {
    const pruned = await assetMonitor(env, tenant.id, id).pruneHistory(cutoff, openSince ?? undefined);
    add("metric_points", pruned.points);
    add("dq_scores", pruned.dqScores);
    add("monitor_applied_jobs", pruned.appliedJobs);
    add("alerts", pruned.alerts);
    add("scan_jobs", pruned.scanJobs);
    add("incident_history", pruned.incidentHistory);
  }
  return deleted;
}

/** Pages of 1,000 keys one run lists of a tenant's uploads in our bucket (100,000 objects). */
export const MAX_UPLOAD_PAGES = 100;
/** Uploads one run deletes from our bucket per tenant, in deletes of 1,000 keys. */
export const MAX_UPLOAD_DELETES = 10_000;

/**
 * Deletes the tenant's uploaded batches stored in our bucket before `cutoff`. The listing goes
 * in key order (asset, then a random id), not by age: so it walks every page (up to
 * MAX_UPLOAD_PAGES), not only the first ones, or old batches behind many young ones would never
 * be found. At most MAX_UPLOAD_DELETES per run; the next run finds the rest.
 */
async function purgeUploads(bucket: R2Bucket, tenantId: string, cutoff: string): Promise<number> {
  const before = Date.parse(cutoff);
  let cursor: string | undefined;
  let removed = 0;
  let old: string[] = [];
  const flush = async () => {
    if (old.length === 0) return;
    await bucket.delete(old);
    removed += old.length;
    old = [];
  };
  for (let page = 0; page < MAX_UPLOAD_PAGES && removed + old.length < MAX_UPLOAD_DELETES; page++) {
    const listing = await bucket.list({ prefix: `uploads/${tenantId}/`, limit: 1000, cursor });
    for (const o of listing.objects) {
      if (o.uploaded.getTime() >= before || removed + old.length >= MAX_UPLOAD_DELETES) continue;
      old.push(o.key);
      if (old.length === 1000) await flush();
    }
    if (!listing.truncated) break;
    cursor = listing.cursor;
  }
  await flush();
  return removed;
}

/**
 * Deletes the uploads stored in the tenant's own bucket before `cutoff` (at most
 * MAX_TENANT_STORE_DELETES). A bucket that cannot be read is left for the next run: retention of
 * everything else goes on.
 */
async function purgeTenantStorage(env: StorageEnv, tenant: RetentionTenant, cutoff: string): Promise<number> {
  const before = Date.parse(cutoff);
  try {
    const store = await tenantUploadStore(env, tenant);
    if (!store) return 0;
    const old = (await store.list(uploadPrefix(tenant.id)))
      .filter((o) => o.lastModified !== undefined && Date.parse(o.lastModified) < before)
      .slice(0, MAX_TENANT_STORE_DELETES);
    for (const o of old) await store.delete(o.key);
    return old.length;
  } catch (err) {
    console.warn(
      JSON.stringify({
        event: "retention_tenant_storage_failed",
        tenant: tenant.id,
        reason: err instanceof Error ? err.message : String(err),
      }),
    );
    return 0;
  }
}

/**
 * The retention run of one cron tick: during the first hour of a UTC day, tick m looks after the
 * m-th hundred tenants (by id), so a day's 60 ticks cover 6,000 tenants, each once. Outside that
 * hour it does nothing.
 */
export async function runRetention(env: RetentionEnv, db: Db, now: Date): Promise<RetentionReport | undefined> {
  if (now.getUTCHours() !== 0) return undefined;
  const slice = await db
    .select({
      id: tenants.id,
      dataTtl: tenants.dataTtl,
      storage: tenants.storage,
      storageSecret: tenants.storageSecret,
      fenced: sql<number>`(${unfenced(tenants.id)}) = 0`,
    })
    .from(tenants)
    .orderBy(asc(tenants.id))
    .limit(TENANTS_PER_TICK)
    .offset(now.getUTCMinutes() * TENANTS_PER_TICK);
  const deleted: Record<string, number> = {};
  // A fenced tenant stays in the slice (the offsets of the day's ticks do not shift) but is left
  // alone: its rows here are moving or gone (src/db/fences.ts); its new shard's retention has it.
  const here = slice.filter((t) => !t.fenced);
  for (const tenant of here) await purgeTenant(env, db, tenant, now, deleted);
  return { tenants: here.length, deleted };
}
