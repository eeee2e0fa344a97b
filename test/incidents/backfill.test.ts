import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import type { BackfillMessage } from "../../src/contracts/messages";
import { createDb } from "../../src/db";
import {
  backfillStarted,
  failBackfill,
  getBackfillJob,
  runBackfillStep,
  startBackfillStatement,
} from "../../src/incidents/backfill";
import worker from "../../src/index";
import { seedAlert } from "../support/alerts";
import { type ApiResponse, admin, call } from "../support/api";
import { seedAsset } from "../support/assets";
import { createProject } from "../support/projects";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

/** A backfill job recorded directly, as POST …/incidents/historical records it for an allowed caller. */
async function startBackfill(db: ReturnType<typeof createDb>, tenant: string, actor: string, now: Date) {
  return backfillStarted(await startBackfillStatement(db, tenant, actor, now, sql`true`));
}

/** Starts a backfill and returns its job once it has finished (the Worker runs it after answering). */
async function backfill(tenant: string) {
  const res = await call("POST", `/api/backend/${tenant}/incidents/historical`, { as: admin });
  expect(res.status).toBe(202);
  expect(res.headers.get("location")).toBe(res.body.status_url);
  return vi.waitFor(
    async () => {
      const job: ApiResponse = await call("GET", res.body.status_url, { as: admin });
      expect(job.status).toBe(200);
      expect(job.body.status).not.toBe("RUNNING");
      return job.body;
    },
    { timeout: 20_000, interval: 20 },
  );
}

describe("POST /api/backend/{tenant}/incidents/historical", () => {
  it("rebuilds the incidents of the last 30 days from the alerts, once, and reports it through a job", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const orders = await seedAsset(tenant, projectId);
    const customers = await seedAsset(tenant, projectId);
    const archive = await seedAsset(tenant, projectId);
    for (const d of [5, 4, 3]) {
      await seedAlert(orders, { metricTime: daysAgo(d), saveTime: daysAgo(d), createTime: daysAgo(d) });
    }
    await seedAlert(customers, {
      type: "freshness",
      policyName: "Freshness",
      attribute: "updated_at",
      priority: "MEDIUM",
      metricTime: daysAgo(1),
      saveTime: daysAgo(1),
      details: { observed: 72, dimension: "timeliness" },
    });
    // Older than the window: left alone.
    await seedAlert(archive, { metricTime: daysAgo(40), saveTime: daysAgo(40) });

    const job = await backfill(tenant);
    expect(job).toMatchObject({
      status: "SUCCEEDED",
      assets_total: 2,
      assets_done: 2,
      alerts: 4,
      incidents: 2,
      errors: [],
      requested_by: "platform-admin",
    });
    expect(Date.parse(job.until) - Date.parse(job.since)).toBe(30 * DAY);
    // The response carries exactly these fields (the row's cursor stays inside).
    expect(Object.keys(job).sort()).toEqual(
      [
        "job_id",
        "status",
        "since",
        "until",
        "requested_by",
        "started_at",
        "finished_at",
        "assets_total",
        "assets_done",
        "incidents",
        "alerts",
        "errors",
      ].sort(),
    );

    const listed = await call("GET", `/api/backend/${tenant}/incidents`, { as: admin });
    expect(listed.body).toHaveLength(2);
    const byAsset = Object.fromEntries(listed.body.map((i: { asset_id: string }) => [i.asset_id, i]));
    expect(byAsset[String(orders.assetId)]).toMatchObject({
      alert_policy_id: "completeness",
      attribute: "email",
      alert_count: 3,
      state: "OPEN",
      severity: "HIGH",
    });
    expect(byAsset[String(customers.assetId)]).toMatchObject({ alert_policy_id: "freshness", alert_count: 1 });
    const detail = await call("GET", `/api/backend/${tenant}/incidents/${byAsset[String(orders.assetId)].id}`, {
      as: admin,
    });
    expect(detail.body.history.flatMap((h: { alert_refs: number[] }) => h.alert_refs)).toHaveLength(3);

    // Again: nothing new.
    const again = await backfill(tenant);
    expect(again).toMatchObject({ status: "SUCCEEDED", assets_total: 2, alerts: 0, incidents: 0 });
    const after = await call("GET", `/api/backend/${tenant}/incidents`, { as: admin });
    expect(after.body).toEqual(listed.body);
  });

  it("refuses a TENANT_MEMBER (403) and another tenant's key (404), recording no job", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const email = `${unique("member")}@example.com`;
    await tenantMember(tenant, email, "TENANT_MEMBER");
    const jobs = () =>
      env.DB.prepare("SELECT count(*) AS n FROM incident_backfills WHERE tenant_id = ?").bind(tenant).first("n");
    const path = `/api/backend/${tenant}/incidents/historical`;
    const member = await call("POST", path, { as: await userToken(email) });
    expect(member.status).toBe(403);
    expect(member.body.detail).toBe("This needs the TENANT_ADMIN role");
    expect((await call("POST", path, { as: await tenantKey(other) })).status).toBe(404);
    expect(await jobs()).toBe(0);
  });

  it("a job of another tenant or an unknown job is a 404", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const job = await backfill(tenant);
    expect(job.assets_total).toBe(0);
    expect((await call("GET", `/api/backend/${other}/incidents/historical/${job.job_id}`, { as: admin })).status).toBe(
      404,
    );
    expect((await call("GET", `/api/backend/${tenant}/incidents/historical/unknown`, { as: admin })).status).toBe(404);
  });
});

describe("backfill steps", () => {
  const db = createDb(env.DB);

  /** A tenant with `n` assets, each with one alert two days ago; their ids in order. */
  async function tenantWithAssets(n: number) {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const seeded: number[] = [];
    for (let i = 0; i < n; i++) {
      const asset = await seedAsset(tenant, projectId);
      await seedAlert(asset, { metricTime: daysAgo(2), saveTime: daysAgo(2), createTime: daysAgo(2) });
      seeded.push(asset.assetId);
    }
    return { tenant, seeded };
  }

  /** The job's row as D1 holds it, read without drizzle. */
  const storedRow = (tenant: string, jobId: string) =>
    env.DB.prepare("SELECT * FROM incident_backfills WHERE tenant_id = ? AND id = ?").bind(tenant, jobId).first();

  it("hands over from step to step until every asset is done, saving progress after each", async () => {
    const { tenant, seeded } = await tenantWithAssets(3);
    const job = await startBackfill(db, tenant, "test", new Date());
    const cursors: Array<number | undefined> = [];
    let cursor: number | undefined = 0;
    while (cursor !== undefined) {
      cursor = await runBackfillStep(env, db, tenant, job.id, cursor, 1);
      cursors.push(cursor);
      const saved = await getBackfillJob(db, tenant, job.id);
      expect(saved!.assetsDone).toBe(cursors.length);
    }
    expect(cursors).toEqual([seeded[0], seeded[1], undefined]);
    expect(await getBackfillJob(db, tenant, job.id)).toMatchObject({
      status: "SUCCEEDED",
      assetsTotal: 3,
      assetsDone: 3,
      alerts: 3,
      incidents: 3,
    });
    // A step of a finished job does nothing.
    expect(await runBackfillStep(env, db, tenant, job.id, 0, 1)).toBeUndefined();
  });

  it("keeps its progress as a row of incident_backfills in D1, errors as JSON", async () => {
    const { tenant } = await tenantWithAssets(1);
    const job = await startBackfill(db, tenant, "someone@example.com", new Date());
    expect(await storedRow(tenant, job.id)).toMatchObject({
      status: "RUNNING",
      requested_by: "someone@example.com",
      finished_at: null,
      assets_total: null,
      assets_done: 0,
      errors: "[]",
    });
    await failBackfill(db, tenant, job.id, "lost");
    const row = await storedRow(tenant, job.id);
    expect(row).toMatchObject({ status: "FAILED", finished_at: expect.any(String) });
    expect(JSON.parse(row!.errors as string)).toEqual([{ asset_id: "", message: "lost" }]);
    // Another tenant's job id is not this tenant's job.
    const other = await createTenant();
    expect(await getBackfillJob(db, other, job.id)).toBeUndefined();
  });

  it("a step replayed after the job finished, or dead-lettered then, changes nothing", async () => {
    const { tenant, seeded } = await tenantWithAssets(2);
    const job = await startBackfill(db, tenant, "test", new Date());
    expect(await runBackfillStep(env, db, tenant, job.id, 0, 1)).toBe(seeded[0]);
    expect(await runBackfillStep(env, db, tenant, job.id, seeded[0]!, 1)).toBeUndefined();
    const finished = await storedRow(tenant, job.id);
    expect(finished).toMatchObject({ status: "SUCCEEDED", assets_done: 2, alerts: 2, incidents: 2 });

    // Every step delivered again, then its dead letter.
    expect(await runBackfillStep(env, db, tenant, job.id, 0, 1)).toBeUndefined();
    expect(await runBackfillStep(env, db, tenant, job.id, seeded[0]!, 1)).toBeUndefined();
    const message: BackfillMessage = {
      kind: "incident_backfill",
      tenant_id: tenant,
      job_id: job.id,
      after_asset_id: 0,
    };
    const batch = createMessageBatch("scan-jobs-dlq", [
      { id: "m1", timestamp: new Date(), attempts: 6, body: message },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as MessageBatch<never>, env);
    expect(await getQueueResult(batch, ctx)).toMatchObject({ explicitAcks: ["m1"] });

    expect(await storedRow(tenant, job.id)).toEqual(finished);
  });

  it("a step delivered twice while the job runs is counted once and hands over once", async () => {
    const { tenant, seeded } = await tenantWithAssets(2);
    const job = await startBackfill(db, tenant, "test", new Date());
    expect(await runBackfillStep(env, db, tenant, job.id, 0, 1)).toBe(seeded[0]);
    expect(await runBackfillStep(env, db, tenant, job.id, 0, 1)).toBeUndefined();
    expect(await getBackfillJob(db, tenant, job.id)).toMatchObject({ status: "RUNNING", assetsDone: 1, alerts: 1 });
    expect(await runBackfillStep(env, db, tenant, job.id, seeded[0]!, 1)).toBeUndefined();
    expect(await getBackfillJob(db, tenant, job.id)).toMatchObject({ status: "SUCCEEDED", assetsDone: 2, alerts: 2 });
  });

  it("a dead-lettered step fails a running job, keeping what it had done", async () => {
    const { tenant, seeded } = await tenantWithAssets(2);
    const job = await startBackfill(db, tenant, "test", new Date());
    await runBackfillStep(env, db, tenant, job.id, 0, 1);
    const message: BackfillMessage = {
      kind: "incident_backfill",
      tenant_id: tenant,
      job_id: job.id,
      after_asset_id: seeded[0]!,
    };
    const batch = createMessageBatch("scan-jobs-dlq", [
      { id: "m1", timestamp: new Date(), attempts: 6, body: message },
    ]);
    await worker.queue(batch as MessageBatch<never>, env);
    const res = await call("GET", `/api/backend/${tenant}/incidents/historical/${job.id}`, { as: admin });
    expect(res.body).toMatchObject({
      status: "FAILED",
      assets_done: 1,
      alerts: 1,
      finished_at: expect.any(String),
      errors: [{ asset_id: "", message: "a step could not be delivered after its retries" }],
    });
    // A step that arrives after all the same changes nothing.
    expect(await runBackfillStep(env, db, tenant, job.id, seeded[0]!, 1)).toBeUndefined();
    expect((await call("GET", `/api/backend/${tenant}/incidents/historical/${job.id}`, { as: admin })).body).toEqual(
      res.body,
    );
  });
});
