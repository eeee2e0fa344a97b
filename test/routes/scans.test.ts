import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, admin, call } from "../support/api";
import { createAsset, csvAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { insertConnection } from "../support/connections";

const CSV = "id,email,amount\n1,a@example.com,10\n2,b@example.com,20\n";

const fileAsset = (tenantOverrides: Record<string, unknown> = {}) => csvAsset(tenantOverrides);

const scans = (tenant: string, assetId: number | string) =>
  `/api/backend/${tenant}/configuration/assets/${assetId}/scans`;

describeAuthMatrix(
  "scans and uploads",
  async (w) => {
    const connection = await insertConnection(w.tenant, { projectId: w.projectId, type: "S3" });
    const asset = await createAsset(w.tenant, w.projectId, connection, {
      type: "S3",
      payload: { path: "x.csv", format: "csv" },
    });
    const job = await call("POST", scans(w.tenant, asset.id), { as: admin });
    return { assetId: asset.id as number, jobId: job.body.job_id as string };
  },
  [
    { method: "POST", path: (w, x) => scans(w.tenant, x.assetId), role: "PROJECT_EDITOR" },
    { method: "GET", path: (w, x) => scans(w.tenant, x.assetId), role: "PROJECT_VIEWER" },
    { method: "GET", path: (w, x) => `${scans(w.tenant, x.assetId)}/${x.jobId}`, role: "PROJECT_VIEWER" },
    { method: "POST", path: (w, x) => `${scans(w.tenant, x.assetId)}/${x.jobId}/cancel`, role: "PROJECT_EDITOR" },
    {
      method: "POST",
      path: (w, x) => `/api/backend/${w.tenant}/configuration/sources/${x.assetId}/alerts?job_id=${x.jobId}`,
      role: "PROJECT_VIEWER",
    },
    {
      method: "POST",
      path: (w, x) => `/v2/${w.tenant}/sources/${x.assetId}/batch_data`,
      body: () => ({}),
      role: "PROJECT_EDITOR",
    },
    {
      method: "POST",
      path: (w, x) => `/api/data/${w.tenant}/sources/${x.assetId}/batch_data`,
      body: () => ({}),
      role: "PROJECT_EDITOR",
    },
    {
      method: "POST",
      path: (w, x) => `/api/data/v2/${w.tenant}/batch_data?source_id=${x.assetId}`,
      body: () => ({}),
      role: "PROJECT_EDITOR",
    },
  ],
);

describe("scan trigger and job status", () => {
  it("queues a scan, returns {message, job_id} at once, and shows the job", async () => {
    const { tenant, asset } = await fileAsset();
    const res = await call("POST", scans(tenant, asset.id), { as: admin, body: { path: "in/2024-*.csv" } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ message: expect.any(String), job_id: expect.stringMatching(/^job_/) });
    const job = await call("GET", `${scans(tenant, asset.id)}/${res.body.job_id}`, { as: admin });
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({
      job_id: res.body.job_id,
      asset_id: String(asset.id),
      kind: "SCAN",
      trigger: "api",
      status: expect.stringMatching(/^(QUEUED|RUNNING|SUCCEEDED|FAILED)$/),
      progress: { rows: expect.any(Number), bytes: expect.any(Number) },
      created_at: expect.any(String),
    });
    const list = await call("GET", scans(tenant, asset.id), { as: admin });
    expect(list.body.map((j: { job_id: string }) => j.job_id)).toContain(res.body.job_id);
    const row = await env.DB.prepare("select request from scan_jobs where id = ?")
      .bind(res.body.job_id)
      .first<{ request: string }>();
    expect(JSON.parse(row!.request)).toEqual({ path: "in/2024-*.csv" });
  });

  it("refuses a request that does not fit the asset, and writes no job", async () => {
    const { tenant, asset } = await fileAsset();
    const cases: Array<[unknown, string]> = [
      [{ location: "SNOWFLAKE" }, "body.location"],
      [{ location: "MARS" }, "body.location"],
      [{ table: "t" }, "body.table"],
      [{ format: "xml" }, "body.format"],
      [{ delimiter: ";;" }, "body.delimiter"],
      [{ unknown: 1 }, "body"],
    ];
    for (const [body, path] of cases) {
      const res = await call("POST", scans(tenant, asset.id), { as: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await call("GET", scans(tenant, asset.id), { as: admin })).body).toEqual([]);
  });

  it("404s an unknown asset, another asset's job and another tenant's asset", async () => {
    const a = await fileAsset();
    const b = await fileAsset();
    const job = await call("POST", scans(a.tenant, a.asset.id), { as: admin });
    expect((await call("GET", `${scans(a.tenant, 999999999)}`, { as: admin })).status).toBe(404);
    expect((await call("GET", `${scans(b.tenant, b.asset.id)}/${job.body.job_id}`, { as: admin })).status).toBe(404);
    expect((await call("GET", `${scans(b.tenant, a.asset.id)}/${job.body.job_id}`, { as: admin })).status).toBe(404);
    const alerts = `/api/backend/${b.tenant}/configuration/sources/${b.asset.id}/alerts?job_id=${job.body.job_id}`;
    expect((await call("POST", alerts, { as: admin })).status).toBe(404);
    expect(
      (await call("POST", `/api/backend/${a.tenant}/configuration/sources/${a.asset.id}/alerts`, { as: admin })).status,
    ).toBe(400);
  });
});

describe("uploads", () => {
  it("streams an uploaded CSV into R2 and queues its scan with the size as total bytes", async () => {
    const { tenant, asset } = await fileAsset();
    const res = await call("POST", `/v2/${tenant}/sources/${asset.id}/batch_data?delimiter=,`, {
      as: admin,
      raw: CSV,
      headers: { "Content-Type": "text/csv" },
    });
    expect(res.status).toBe(202);
    const row = await env.DB.prepare("select request, total_bytes, trigger from scan_jobs where id = ?")
      .bind(res.body.job_id)
      .first<{ request: string; total_bytes: number; trigger: string }>();
    const request = JSON.parse(row!.request);
    expect(row).toMatchObject({ total_bytes: CSV.length, trigger: "upload" });
    expect(request).toEqual({
      upload: { key: expect.stringMatching(`^uploads/${tenant}/${asset.id}/`), format: "csv", bytes: CSV.length },
      delimiter: ",",
    });
    const stored = await env.UPLOADS.get(request.upload.key);
    expect(await stored!.text()).toBe(CSV);
  });

  it("refuses an upload over the tenant's limit (413), without a length (411), or of another type (415), storing nothing", async () => {
    const { tenant, asset } = await fileAsset({ free_upload_limit: 10 });
    const path = `/v2/${tenant}/sources/${asset.id}/batch_data`;
    const big = await call("POST", path, { as: admin, raw: CSV, headers: { "Content-Type": "text/csv" } });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe("payload_too_large");
    const odd = await call("POST", path, { as: admin, raw: "x", headers: { "Content-Type": "text/plain" } });
    expect(odd.status).toBe(415);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("a\n1\n"));
        controller.close();
      },
    });
    const chunked = await SELF.fetch(`https://dq.test${path}`, {
      method: "POST",
      headers: { "X-SVC-Key": ADMIN_KEY, "Content-Type": "text/csv" },
      body: stream,
    });
    expect(chunked.status).toBe(411);
    const listed = await env.UPLOADS.list({ prefix: `uploads/${tenant}/` });
    expect(listed.objects).toEqual([]);
    expect((await call("GET", scans(tenant, asset.id), { as: admin })).body).toEqual([]);
  });

  it("keeps the deprecated upload paths working, with Deprecation and Link headers", async () => {
    const { tenant, asset } = await fileAsset();
    const paths = [
      `/api/data/${tenant}/sources/${asset.id}/batch_data`,
      `/api/data/v2/${tenant}/sources/${asset.id}/batch_data`,
      `/api/data/${tenant}/batch_data?source_id=${asset.id}`,
      `/api/data/v2/${tenant}/batch_data?source_id=${asset.id}`,
    ];
    for (const path of paths) {
      const res = await call("POST", path, { as: admin, body: { location: "S3", path: "in/a.csv" } });
      expect(res.status, path).toBe(202);
      expect(res.body.job_id).toMatch(/^job_/);
      expect(res.headers.get("deprecation")).toMatch(/^@\d+$/);
      expect(res.headers.get("link")).toBe(
        `</api/backend/${tenant}/configuration/assets/${asset.id}/scans>; rel="successor-version"`,
      );
    }
    const missing = await call("POST", `/api/data/${tenant}/batch_data`, { as: admin, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { path: string }) => e.path)).toEqual(["query.source_id"]);
    // A JSON request may name the asset in its body instead (issue 10, point 12).
    for (const version of ["", "v2/"]) {
      const inBody = await call("POST", `/api/data/${version}${tenant}/batch_data`, {
        as: admin,
        body: { source_id: asset.id, location: "S3", path: "in/a.csv" },
      });
      expect(inBody.status, version).toBe(202);
      const job = await call("GET", `${scans(tenant, asset.id)}/${inBody.body.job_id}`, { as: admin });
      expect(job.status).toBe(200);
    }
    const disagreeing = await call("POST", `/api/data/${tenant}/batch_data?source_id=${asset.id}`, {
      as: admin,
      body: { source_id: asset.id + 1000, location: "S3", path: "in/a.csv" },
    });
    expect(disagreeing.status).toBe(400);
    expect(disagreeing.body.errors.map((e: { path: string }) => e.path)).toEqual(["body.source_id"]);
    const doc = await call("GET", "/openapi.json");
    expect(doc.body.paths["/api/data/{tenant}/batch_data"].post.deprecated).toBe(true);
    expect(doc.body.paths["/v2/{tenant}/sources/{source_id}/batch_data"].post.deprecated).toBeUndefined();
  });
});
