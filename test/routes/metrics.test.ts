import { describe, expect, it } from "vitest";
import type { Problem } from "../scenario/data";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { insertConnection } from "../support/connections";
import { type ApiAsset, applyOrdersScan } from "../support/monitor";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";

const base = (tenant: string, assetId: number) => `/api/backend/${tenant}/configuration/assets/${assetId}/metrics`;

async function fileAsset(tenant: string, projectId: number) {
  const connection = await insertConnection(tenant, { projectId, type: "S3" });
  return createAsset(tenant, projectId, connection, { type: "S3", payload: { path: "x.csv", format: "csv" } });
}

/** Applies scans 1…n of the orders scenario to the asset's monitor, `problem` on the last one. */
async function scans(tenant: string, projectId: number, asset: ApiAsset, n: number, problem?: Problem) {
  for (let i = 1; i <= n; i++) {
    const scanTime = new Date(Date.UTC(2030, 0, i));
    await applyOrdersScan(tenant, projectId, asset, i, {
      jobId: `job_m_${asset.id}_${i}`,
      scanTime,
      problem: i === n ? problem : undefined,
    });
  }
}

describeAuthMatrix(
  "metric history",
  async (w) => ({ assetId: (await fileAsset(w.tenant, w.projectId)).id as number }),
  [
    { method: "GET", path: (w, x) => base(w.tenant, x.assetId), role: "PROJECT_VIEWER" },
    { method: "GET", path: (w, x) => `${base(w.tenant, x.assetId)}/history?metric=row_count`, role: "PROJECT_VIEWER" },
  ],
);

describe("metric history", () => {
  it("gives each point its band once the detector has learnt, and marks the point that broke out", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const asset = await fileAsset(tenant, projectId);
    await scans(tenant, projectId, asset, 10, "row_drop");

    const list = await call("GET", base(tenant, asset.id), { as: admin });
    expect(list.status).toBe(200);
    const rowCount = list.body.find((m: { metric: string }) => m.metric === "row_count");
    expect(rowCount).toMatchObject({ points: 10, last_time: new Date(Date.UTC(2030, 0, 10)).toISOString() });
    expect(list.body.every((m: { metric: string }) => !m.metric.startsWith("attr:"))).toBe(true);

    const email = await call("GET", `${base(tenant, asset.id)}?attribute=email`, { as: admin });
    expect(email.status).toBe(200);
    expect(email.body.map((m: { metric: string }) => m.metric)).toContain("attr:email:null_rate");
    expect(email.body.every((m: { metric: string }) => m.metric.startsWith("attr:email:"))).toBe(true);

    const res = await call("GET", `${base(tenant, asset.id)}/history?metric=row_count`, { as: admin });
    expect(res.status).toBe(200);
    const points = res.body.points as any[];
    expect(points.map((p) => p.job_id)).toEqual(Array.from({ length: 10 }, (_, i) => `job_m_${asset.id}_${i + 1}`));
    // min_history is 7: the first seven points have no band yet, the next ones do.
    expect(points.slice(0, 7).every((p) => p.expected === null)).toBe(true);
    for (const p of points.slice(7, 9)) {
      expect(p.value).toBeGreaterThanOrEqual(p.expected.low);
      expect(p.value).toBeLessThanOrEqual(p.expected.high);
      expect(p.alerts).toEqual([]);
    }
    const broke = points[9];
    expect(broke.value).toBeLessThan(broke.expected.low);
    expect(broke.excluded).toBe(true);
    expect(broke.alerts).toEqual([expect.objectContaining({ type: "row_count_anomaly", priority: "HIGH" })]);
  });

  it("keeps the points as measured after a level is adopted, and draws the next band at the new level", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const asset = await fileAsset(tenant, projectId);
    await scans(tenant, projectId, asset, 10, "row_drop");
    const before = (await call("GET", `${base(tenant, asset.id)}/history?metric=row_count`, { as: admin })).body.points;
    const incidents = await call("GET", `/api/backend/${tenant}/incidents?alert_policy_ids=row_count_anomaly`, {
      as: admin,
    });
    const closed = await call("PATCH", `/api/backend/${tenant}/incidents/${incidents.body[0].id}`, {
      as: admin,
      body: { state: "CLOSED", reason: "EXPECTED" },
    });
    expect(closed.status).toBe(200);
    await applyOrdersScan(tenant, projectId, asset, 11, {
      jobId: `job_m_${asset.id}_11`,
      scanTime: new Date(Date.UTC(2030, 0, 11)),
      problem: "row_drop",
    });

    const after = (await call("GET", `${base(tenant, asset.id)}/history?metric=row_count`, { as: admin })).body.points;
    expect(after.slice(0, 10).map((p: { value: number }) => p.value)).toEqual(
      before.map((p: { value: number }) => p.value),
    );
    const next = after[10];
    expect(next.alerts).toEqual([]);
    expect(next.value).toBeGreaterThanOrEqual(next.expected.low);
    expect(next.value).toBeLessThanOrEqual(next.expected.high);
    // The band before the adoption stays at the old level.
    expect(after[8].expected.low).toBeGreaterThan(next.expected.high);
  });

  it("answers an unknown metric with no points, and a bad query with a 400", async () => {
    const tenant = await createTenant();
    const asset = await fileAsset(tenant, await createProject(tenant));
    const none = await call("GET", `${base(tenant, asset.id)}/history?metric=nothing`, { as: admin });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ metric: "nothing", points: [] });
    const missing = await call("GET", `${base(tenant, asset.id)}/history`, { as: admin });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { path: string }) => e.path)).toContain("query.metric");
  });

  it("is a 404 for another tenant's asset", async () => {
    const owner = await createTenant();
    const asset = await fileAsset(owner, await createProject(owner));
    const other = await createTenant();
    const res = await call("GET", `${base(other, asset.id)}/history?metric=row_count`, { as: admin });
    expect(res.status).toBe(404);
  });
});
