import { describe, expect, it } from "vitest";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { insertConnection } from "../support/connections";
import { applyOrdersScan } from "../support/monitor";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";

const base = (tenant: string, assetId: number) => `/api/backend/${tenant}/configuration/assets/${assetId}`;

async function fileAsset(tenant: string, projectId: number) {
  const connection = await insertConnection(tenant, { projectId, type: "S3" });
  return createAsset(tenant, projectId, connection, { type: "S3", payload: { path: "x.csv", format: "csv" } });
}

describeAuthMatrix(
  "policies and DQ score history",
  async (w) => ({ assetId: (await fileAsset(w.tenant, w.projectId)).id as number }),
  [
    { method: "GET", path: (w, x) => `${base(w.tenant, x.assetId)}/policies`, role: "PROJECT_VIEWER" },
    {
      method: "PUT",
      path: (w, x) => `${base(w.tenant, x.assetId)}/policies`,
      body: () => ({ auto_close_after: 2 }),
      role: "PROJECT_EDITOR",
    },
    { method: "GET", path: (w, x) => `${base(w.tenant, x.assetId)}/dq_score/history`, role: "PROJECT_VIEWER" },
  ],
);

describe("asset policies", () => {
  it("lists the ten policies with their defaults, then applies overrides and the auto-close threshold", async () => {
    const tenant = await createTenant();
    const asset = await fileAsset(tenant, await createProject(tenant));
    const path = `${base(tenant, asset.id)}/policies`;
    const defaults = await call("GET", path, { as: admin });
    expect(defaults.status).toBe(200);
    expect(defaults.body.auto_close_after).toBe(3);
    expect(defaults.body.adapt_after).toBe(3);
    expect(defaults.body.attribute_kinds).toEqual({});
    expect(defaults.body.policies.map((p: { id: string }) => p.id).sort()).toEqual([
      "cardinality_drift",
      "completeness",
      "distribution_drift",
      "freshness",
      "pattern_drift",
      "row_count_anomaly",
      "schema_change",
      "type_mismatch",
      "uniqueness",
      "value_range",
    ]);
    const completeness = defaults.body.policies.find((p: { id: string }) => p.id === "completeness");
    expect(completeness).toMatchObject({ kind: "rule", enabled: true, priority: "MEDIUM", params: { max_rate: 0.05 } });

    const put = await call("PUT", path, {
      as: admin,
      body: {
        auto_close_after: 5,
        adapt_after: 4,
        attribute_kinds: { PULocationID: "code", fare: "quantity" },
        overrides: { completeness: { priority: "HIGH", params: { max_rate: 0.2 } }, pattern_drift: { enabled: false } },
      },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      auto_close_after: 5,
      adapt_after: 4,
      attribute_kinds: { PULocationID: "code", fare: "quantity" },
    });
    const byId = Object.fromEntries(put.body.policies.map((p: { id: string }) => [p.id, p]));
    expect(byId.completeness).toMatchObject({ priority: "HIGH", params: { max_rate: 0.2, margin: 0.002 } });
    expect(byId.pattern_drift.enabled).toBe(false);
    // Sending only the threshold keeps the overrides.
    const again = await call("PUT", path, { as: admin, body: { auto_close_after: 4 } });
    expect(again.body.overrides).toEqual(put.body.overrides);
    // …and every other setting not sent.
    expect(again.body).toMatchObject({
      auto_close_after: 4,
      adapt_after: 4,
      attribute_kinds: put.body.attribute_kinds,
    });
    expect((await call("GET", path, { as: admin })).body).toEqual(again.body);
  });

  it("refuses unknown policies, unknown or invalid params, and an out-of-range threshold, changing nothing", async () => {
    const tenant = await createTenant();
    const asset = await fileAsset(tenant, await createProject(tenant));
    const path = `${base(tenant, asset.id)}/policies`;
    const cases: Array<[unknown, string]> = [
      [{ overrides: { made_up: { enabled: true } } }, "body.overrides"],
      [
        { overrides: { completeness: { params: { max_rate: "high" } } } },
        "body.overrides.completeness.params.max_rate",
      ],
      [{ overrides: { completeness: { priority: "URGENT" } } }, "body.overrides.completeness.priority"],
      [
        { overrides: { row_count_anomaly: { params: { window: 5, min_history: 9 } } } },
        "body.overrides.row_count_anomaly.params.min_history",
      ],
      [{ auto_close_after: 0 }, "body.auto_close_after"],
      [{ adapt_after: 0 }, "body.adapt_after"],
      [{ attribute_kinds: { fare: "money" } }, "body.attribute_kinds.fare"],
    ];
    for (const [body, field] of cases) {
      const res = await call("PUT", path, { as: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        res.body.errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toContain(field);
    }
    expect((await call("GET", path, { as: admin })).body.overrides).toEqual({});
  });
});

describe("DQ score history", () => {
  it("lists one score per applied scan, newest first", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const asset = await fileAsset(tenant, projectId);
    for (const n of [1, 2]) {
      await applyOrdersScan(tenant, projectId, asset, n, {
        jobId: `job_dq_${asset.id}_${n}`,
        scanTime: new Date(Date.UTC(2030, 0, n)),
      });
    }
    const res = await call("GET", `${base(tenant, asset.id)}/dq_score/history`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body.map((s: { job_id: string }) => s.job_id)).toEqual([`job_dq_${asset.id}_2`, `job_dq_${asset.id}_1`]);
    for (const score of res.body) {
      for (const d of ["completeness", "accuracy", "consistency", "timeliness", "overall"]) {
        expect(score[d]).toBeGreaterThanOrEqual(0);
        expect(score[d]).toBeLessThanOrEqual(100);
      }
    }
    expect(res.body[0].completeness).toBe(100);
  });
});
