/**
 * data_ttl (issue 10, point 4): the daily retention deletes a tenant's scan jobs, alerts, DQ-score
 * history, closed incidents with their history and tickets, audit events, uploaded batches in R2
 * (however many young ones come before them in key order)
 * and each asset's metric history in its Durable Object once older than the TTL — never an open
 * incident or the alerts it is about, never another tenant's data, and nothing twice.
 */

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import { cutoffOf, purgeTenant, runRetention } from "../../src/retention/retention";
import { seedAlert } from "../support/alerts";
import { admin, call } from "../support/api";
import { countRows, csvAsset, seedAsset } from "../support/assets";
import { seedHistory, seedIncident } from "../support/incidents";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";

const DAY = 86_400_000;

async function uploadAndWait(tenant: string, assetId: number, seq: number) {
  const rows = Array.from({ length: 50 }, (_, i) => `${seq * 100 + i},u${i}@example.com,${i + 1}`);
  const res = await call("POST", `/v2/${tenant}/sources/${assetId}/batch_data`, {
    as: admin,
    raw: `id,email,amount\n${rows.join("\n")}\n`,
    headers: { "Content-Type": "text/csv" },
  });
  expect(res.status).toBe(202);
  await vi.waitFor(
    async () => {
      const job = await call("GET", `/api/backend/${tenant}/configuration/assets/${assetId}/scans/${res.body.job_id}`, {
        as: admin,
      });
      expect(job.body.status).toBe("SUCCEEDED");
    },
    { timeout: 30_000, interval: 25 },
  );
}

/** A tenant with two scanned uploads (jobs, scores, metric history, R2 objects, audit entries). */
async function scannedTenant(ttl: number) {
  const { tenant, projectId, asset } = await csvAsset({ data_ttl: ttl });
  for (const seq of [1, 2]) await uploadAndWait(tenant, asset.id, seq);
  return { tenant, projectId, assetId: asset.id as number };
}

/** The rows of one of the asset's object's tables. */
const objectRows = (tenant: string, assetId: number, table: string) =>
  runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) => {
    return (state.storage.sql.exec(`SELECT count(*) AS n FROM ${table}`).toArray()[0] as { n: number }).n;
  });
const metricPoints = (tenant: string, assetId: number) => objectRows(tenant, assetId, "metric_points");

/** The tenant's rows, and its scanned asset's jobs, DQ scores and applied jobs (in the asset's object, issue 38). */
async function counts(tenant: string, assetId: number) {
  return {
    // D1 keeps a job while it runs, the asset's object once it ended (issue 38).
    scan_jobs:
      (await countRows("scan_jobs", "tenant_id = ?", tenant)) + (await objectRows(tenant, assetId, "scan_jobs")),
    dq_scores:
      (await countRows("dq_scores", "tenant_id = ?", tenant)) + (await objectRows(tenant, assetId, "dq_scores")),
    applied_jobs: await objectRows(tenant, assetId, "applied_jobs"),
    alerts: (await countRows("alerts", "tenant_id = ?", tenant)) + (await objectRows(tenant, assetId, "alerts")),
    incidents: await countRows("incidents", "tenant_id = ?", tenant),
    incident_history: await countRows("incident_history", "tenant_id = ?", tenant),
    audit_events: await countRows("audit_events", "tenant_id = ?", tenant),
    uploads: (await env.UPLOADS.list({ prefix: `uploads/${tenant}/` })).objects.length,
  };
}

describe("retention (data_ttl)", () => {
  it("deletes what is older than the TTL, keeps open incidents and their alerts, and is idempotent", {
    timeout: 120_000,
  }, async () => {
    const short = await scannedTenant(30);
    const long = await scannedTenant(365);
    const now = new Date();
    // An open incident with its alert, and a closed incident with its history, on another asset
    // of the short-TTL tenant; an alert of the scanned asset no open incident refers to.
    const other = await seedAsset(short.tenant, short.projectId);
    const hourAgo = new Date(now.getTime() - 3_600_000).toISOString();
    const openId = await seedIncident(other, { openedAt: hourAgo });
    const keptAlert = await seedAlert(other, { saveTime: now.toISOString() });
    const closedId = await seedIncident(other, {
      openedAt: hourAgo,
      state: "CLOSED",
      closedAt: hourAgo,
      closeReason: "FIXED",
      attribute: "amount",
    });
    await seedHistory(short.tenant, closedId, [
      { time: hourAgo, fromState: null, toState: "OPEN" },
      { time: hourAgo, fromState: "OPEN", toState: "CLOSED" },
    ]);
    const scanned = {
      tenant: short.tenant,
      projectId: short.projectId,
      assetId: short.assetId,
      connectionId: other.connectionId,
    };
    await seedAlert(scanned, { saveTime: now.toISOString() });

    const before = await counts(short.tenant, short.assetId);
    expect(before.scan_jobs).toBe(2);
    expect(before).toMatchObject({ dq_scores: 2, applied_jobs: 2 });
    expect(before.uploads).toBe(2);
    expect(before.audit_events).toBeGreaterThan(0);
    expect(await metricPoints(short.tenant, short.assetId)).toBeGreaterThan(0);
    const longBefore = await counts(long.tenant, long.assetId);
    const longPoints = await metricPoints(long.tenant, long.assetId);

    // 40 days on: everything of today is past a 30-day TTL, and well within a 365-day one.
    const later = new Date(now.getTime() + 40 * DAY);
    expect(cutoffOf(30, later) > now.toISOString()).toBe(true);
    const db = createDb(env.DB);
    const deleted = await purgeTenant(env, db, { id: short.tenant, dataTtl: 30 }, later);
    expect(deleted).toMatchObject({ scan_jobs: 2, dq_scores: 2, monitor_applied_jobs: 2, uploads: 2, alerts: 1 });
    // D1 counts the closed incident and the history rows its delete cascades to.
    expect(deleted.incidents).toBeGreaterThanOrEqual(1);
    expect(deleted.metric_points).toBeGreaterThan(0);
    expect(deleted.audit_events).toBe(before.audit_events);

    const after = await counts(short.tenant, short.assetId);
    expect(after).toEqual({
      scan_jobs: 0,
      dq_scores: 0,
      applied_jobs: 0,
      alerts: 1, // the open incident's
      incidents: 1, // the open one
      incident_history: 0, // the closed incident's went with it
      audit_events: 0,
      uploads: 0,
    });
    expect(await countRows("incidents", "id = ? and state = 'OPEN'", openId)).toBe(1);
    expect(await countRows("alerts", "id = ?", keptAlert)).toBe(1);
    expect(await metricPoints(short.tenant, short.assetId)).toBe(0);

    // Nothing of the long-TTL tenant goes; a second run deletes nothing more.
    expect(await purgeTenant(env, db, { id: long.tenant, dataTtl: 365 }, later)).toEqual({});
    expect(await counts(long.tenant, long.assetId)).toEqual(longBefore);
    expect(await metricPoints(long.tenant, long.assetId)).toBe(longPoints);
    expect(await purgeTenant(env, db, { id: short.tenant, dataTtl: 30 }, later)).toEqual({});
  });

  it("deletes every job that ended, a cancelled one too, and never one still queued or running", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    const old = new Date(Date.now() - 60 * DAY).toISOString();
    const statuses = ["SUCCEEDED", "FAILED", "CANCELLED", "QUEUED", "RUNNING"] as const;
    for (const status of statuses) {
      await env.DB.prepare(
        `insert into scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, created_at)
         values (?, ?, ?, 'SCAN', ?, 'API', '{}', ?)`,
      )
        .bind(`job-${status}-${asset.tenant}`, asset.tenant, asset.assetId, status, old)
        .run();
    }
    const deleted = await purgeTenant(env, createDb(env.DB), { id: asset.tenant, dataTtl: 30 }, new Date());
    expect(deleted.scan_jobs).toBe(3);
    const left = await env.DB.prepare("select status from scan_jobs where tenant_id = ? order by status")
      .bind(asset.tenant)
      .all<{ status: string }>();
    expect(left.results.map((r) => r.status)).toEqual(["QUEUED", "RUNNING"]);
  });

  it("deletes an audit tally once its last request is older than the TTL, not before", async () => {
    const tenant = await createTenant();
    const cutoff = new Date(Date.now() - 30 * DAY);
    const at = (ms: number) => new Date(cutoff.getTime() + ms).toISOString();
    const insert = (name: string, first: string, last: string | null, tally: string | null) =>
      env.DB.prepare(
        `insert into audit_events (tenant_id, at, actor, credential, method, route, path, status, request_id, count, last_at, tally)
         values (?, ?, 'a', 'token', 'POST', '/r', '/p', 202, ?, ?, ?, ?)`,
      )
        .bind(tenant, first, name, tally ? 5 : 1, last, tally)
        .run();
    await insert("row-old", at(-60_000), null, null);
    await insert("row-young", at(60_000), null, null);
    // A tally whose first request is past the cutoff and whose last is not: the day still counts.
    await insert("tally-straddling", at(-60_000), at(60_000), "tally-straddling");
    await insert("tally-old", at(-120_000), at(-60_000), "tally-old");
    const deleted = await purgeTenant(
      env,
      createDb(env.DB),
      { id: tenant, dataTtl: 30 },
      new Date(cutoff.getTime() + 30 * DAY),
    );
    expect(deleted.audit_events).toBe(2);
    const left = await env.DB.prepare("select request_id from audit_events where tenant_id = ? order by request_id")
      .bind(tenant)
      .all<{ request_id: string }>();
    expect(left.results.map((r) => r.request_id)).toEqual(["row-young", "tally-straddling"]);
  });

  it("finds old uploads behind thousands of young ones in key order", { timeout: 60_000 }, async () => {
    const tenant = `t-keys-${crypto.randomUUID().slice(0, 8)}`;
    const put = (key: string) => env.UPLOADS.put(key, "id\n1\n");
    // Five old batches, last in key order…
    for (let i = 0; i < 5; i++) await put(`uploads/${tenant}/9/old-${i}.csv`);
    const oldest = (await env.UPLOADS.list({ prefix: `uploads/${tenant}/9/` })).objects;
    const newestOld = Math.max(...oldest.map((o) => o.uploaded.getTime()));
    // (R2 times are whole milliseconds: the young ones must be stored at a later one.)
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(newestOld + 2));
    // …and 2,100 young ones before them, more than the first pages of a listing hold.
    for (let start = 0; start < 2100; start += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          put(`uploads/${tenant}/1/young-${String(start + i).padStart(4, "0")}.csv`),
        ),
      );
    }
    // A TTL whose cutoff falls between the two: one day, seen one day and 1 ms after the old ones.
    const now = new Date(newestOld + DAY + 1);
    const deleted = await purgeTenant(env, createDb(env.DB), { id: tenant, dataTtl: 1 }, now);
    expect(deleted.uploads).toBe(5);
    expect((await env.UPLOADS.list({ prefix: `uploads/${tenant}/9/` })).objects).toEqual([]);
    let young = 0;
    let cursor: string | undefined;
    do {
      const page = await env.UPLOADS.list({ prefix: `uploads/${tenant}/1/`, cursor });
      young += page.objects.length;
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    expect(young).toBe(2100);
  });

  it("runs in the first UTC hour of a day only, each minute on its own slice of tenants", async () => {
    const db = createDb(env.DB);
    expect(await runRetention(env, db, new Date("2026-11-24T05:00:00Z"))).toBeUndefined();
    // Minute 59 of the hour: the 5,901st tenant onwards, which this test run does not have.
    expect(await runRetention(env, db, new Date("2026-11-24T00:59:00Z"))).toEqual({ tenants: 0, deleted: {} });
  });
});
