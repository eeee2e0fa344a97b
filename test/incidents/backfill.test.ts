import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createDb } from "../../src/db";
import { getBackfillJob, runBackfillStep, startBackfill } from "../../src/incidents/backfill";
import { type ApiResponse, admin, call } from "../support/api";
import { createProject, createTenant } from "../support/factories";
import { seedAlert, seedAsset } from "../support/incidents";

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

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
  it("hands over from step to step until every asset is done, saving progress after each", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const seeded = [];
    for (let i = 0; i < 3; i++) {
      const asset = await seedAsset(tenant, projectId);
      await seedAlert(asset, { metricTime: daysAgo(2), saveTime: daysAgo(2), createTime: daysAgo(2) });
      seeded.push(asset.assetId);
    }
    const job = await startBackfill(env.UPLOADS, tenant, "test", new Date());
    const db = createDb(env.DB);
    const cursors: Array<number | undefined> = [];
    let cursor: number | undefined = 0;
    while (cursor !== undefined) {
      cursor = await runBackfillStep(env, db, tenant, job.job_id, cursor, 1);
      cursors.push(cursor);
      const saved = await getBackfillJob(env.UPLOADS, tenant, job.job_id);
      expect(saved!.assets_done).toBe(cursors.length);
    }
    expect(cursors).toEqual([seeded[0], seeded[1], undefined]);
    expect(await getBackfillJob(env.UPLOADS, tenant, job.job_id)).toMatchObject({
      status: "SUCCEEDED",
      assets_total: 3,
      assets_done: 3,
      alerts: 3,
      incidents: 3,
    });
    // A step of a finished job does nothing.
    expect(await runBackfillStep(env, db, tenant, job.job_id, 0, 1)).toBeUndefined();
  });
});
