import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it, vi } from "vitest";
import { MAX_ATTEMPTS, processScanJob } from "../../src/consumers/scan-jobs";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import worker from "../../src/index";
import { createScanJob, type EndedJobSource, getScanJob } from "../../src/jobs/scan-jobs";
import { finishedJob } from "../scenario/support";
import { admin, call } from "../support/api";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";
import { DATABASES, runnerFor, uniqueTable } from "./sql/support/databases";

const servers = inject("objectStores");

async function project() {
  const tenant = await createTenant();
  return { tenant, projectId: await createProject(tenant) };
}

async function connection(tenant: string, projectId: number, body: Record<string, unknown>): Promise<number> {
  const res = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/connections`, {
    as: admin,
    body: { name: unique("conn"), ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function asset(tenant: string, projectId: number, body: Record<string, unknown>): Promise<number> {
  const res = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/assets`, {
    as: admin,
    body: { name: unique("asset"), ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

const s3Connection = (overrides: { secret?: string; endpoint?: string } = {}) => ({
  type: "S3",
  payload: {
    bucket: servers.s3.bucket,
    region: servers.s3.region,
    endpoint: overrides.endpoint ?? servers.s3.endpoint,
  },
  credential: {
    type: "AWS",
    payload: { access_key: servers.s3.accessKeyId, secret_key: overrides.secret ?? servers.s3.secretAccessKey },
  },
});

const ORDERS = { path: "data/2024/*/orders-*.csv", format: "csv" };

async function scan(tenant: string, assetId: number) {
  const res = await call("POST", `/api/backend/${tenant}/configuration/assets/${assetId}/scans`, { as: admin });
  expect(res.status).toBe(202);
  return res.body.job_id as string;
}

describe("scans of files in object storage", () => {
  it("S3: lists the files matching the path, streams and profiles them, with progress", async () => {
    const { tenant, projectId } = await project();
    const id = await asset(tenant, projectId, {
      type: "S3",
      connection_id: await connection(tenant, projectId, s3Connection()),
      payload: ORDERS,
    });
    const job = await finishedJob(tenant, id, await scan(tenant, id));
    // orders-a (2 rows) + orders-b (1) + orders-c (3): summary.csv and the 2025 file do not match.
    expect(job.progress.rows).toBe(6);
    expect(job.progress.bytes).toBe(job.progress.total_bytes);
    expect(job.progress.fraction).toBe(1);
  });

  it("Azure Blob (SAS) and GCS (service account) profile the same files", async () => {
    const { tenant, projectId } = await project();
    const azure = await asset(tenant, projectId, {
      type: "AZURE",
      payload: ORDERS,
      connection_id: await connection(tenant, projectId, {
        type: "AZURE",
        payload: {
          storage_account: servers.azure.account,
          bucket: servers.azure.container,
          endpoint: servers.azure.endpoint,
        },
        credential: { type: "AZURE_SAS", payload: { sas_key: servers.azure.sas } },
      }),
    });
    const reader = servers.gcs.reader;
    const gcs = await asset(tenant, projectId, {
      type: "GCS",
      payload: ORDERS,
      connection_id: await connection(tenant, projectId, {
        type: "GCS",
        payload: { bucket: servers.gcs.bucket, endpoint: servers.gcs.endpoint },
        credential: {
          type: "GCP",
          payload: { project_id: "test-project", client_id: "1", ...reader },
        },
      }),
    });
    for (const id of [azure, gcs]) {
      const job = await finishedJob(tenant, id, await scan(tenant, id));
      expect(job.progress.rows).toBe(6);
    }
  });

  it("loads a file asset's schema from its first file", async () => {
    const { tenant, projectId } = await project();
    const id = await asset(tenant, projectId, {
      type: "S3",
      connection_id: await connection(tenant, projectId, s3Connection()),
      payload: ORDERS,
    });
    const res = await call("POST", `/api/data/${tenant}/assets/${id}/schema`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      asset_id: String(id),
      attributes: [
        { name: "id", type: "integer", nullable: true },
        { name: "amount", type: "number", nullable: true },
      ],
    });
    const got = await call(
      "GET",
      `/api/backend/${tenant}/configuration/projects/${projectId}/assets/${id}?with_attributes=true`,
      {
        as: admin,
      },
    );
    expect(got.body.attributes).toEqual(res.body.attributes);
  });
});

describe("delta_only", () => {
  it("scans only the rows newer than the last applied scan's freshness", async () => {
    const { tenant, projectId } = await project();
    const id = await asset(tenant, projectId, {
      type: "S3",
      connection_id: await connection(tenant, projectId, s3Connection()),
      payload: ORDERS,
      options: { timestamp_attribute: "updated_at", delta_only: "true" },
    });
    const upload = async (csv: string) => {
      const res = await call("POST", `/v2/${tenant}/sources/${id}/batch_data`, {
        as: admin,
        raw: csv,
        headers: { "Content-Type": "text/csv" },
      });
      expect(res.status).toBe(202);
      return finishedJob(tenant, id, res.body.job_id);
    };
    const first = await upload("id,updated_at\n1,2026-11-01T10:00:00Z\n2,2026-11-01T11:00:00Z\n");
    expect(first.progress.rows).toBe(2);
    // One row at or before the last freshness (11:00), two after it: only those two are scanned.
    const second = await upload(
      "id,updated_at\n2,2026-11-01T11:00:00Z\n3,2026-11-01T12:00:00Z\n4,2026-11-01T13:00:00Z\n",
    );
    expect(second.progress.rows).toBe(2);
    const third = await upload("id,updated_at\n4,2026-11-01T13:00:00Z\n5,2026-11-01T14:00:00Z\n");
    expect(third.progress.rows).toBe(1);
  });
});

describe("scan failures", () => {
  it("bad credentials and missing files fail the job at once with a readable reason and no secret", async () => {
    const { tenant, projectId } = await project();
    const denied = await asset(tenant, projectId, {
      type: "S3",
      connection_id: await connection(tenant, projectId, s3Connection({ secret: "not-the-secret-key-0123456789" })),
      payload: ORDERS,
    });
    const missing = await asset(tenant, projectId, {
      type: "S3",
      connection_id: await connection(tenant, projectId, s3Connection()),
      payload: { path: "nothing/here/*.csv", format: "csv" },
    });
    for (const [id, reason] of [
      [denied, /access denied|signature|credential/i],
      [missing, /no file matches/i],
    ] as const) {
      const jobId = await scan(tenant, id);
      const path = `/api/backend/${tenant}/configuration/assets/${id}/scans/${jobId}`;
      const job = await vi.waitFor(
        async () => {
          const res = await call("GET", path, { as: admin });
          expect(res.body.status).toBe("FAILED");
          return res.body;
        },
        { timeout: 20_000, interval: 25 },
      );
      expect(job.error).toMatch(reason);
      expect(job.error).not.toContain("not-the-secret-key");
      expect(job.attempts).toBe(1);
    }
  });

  it("retries an unreachable source with backoff, then fails it; the dead-letter queue fails what is left", async () => {
    const { tenant, projectId } = await project();
    const id = await asset(tenant, projectId, {
      type: "S3",
      connection_id: await connection(
        tenant,
        projectId,
        s3Connection({ endpoint: `http://127.0.0.1:${servers.closedPort}` }),
      ),
      payload: ORDERS,
    });
    const db = createDb(env.DB);
    // Jobs recorded without queue messages: this test is the only one delivering them.
    const job = await createScanJob(db, { tenantId: tenant, assetId: id, kind: "SCAN", trigger: "api" });
    const message = { job_id: job.id, tenant_id: tenant, asset_id: id };
    expect(await processScanJob(env, message, 1)).toBe("retry");
    let row = await db.query.scanJobs.findFirst({ where: (j, { eq }) => eq(j.id, job.id) });
    expect(row).toMatchObject({
      status: "QUEUED",
      attempts: 1,
      error: expect.stringMatching(/^retrying after: .*127\.0\.0\.1/),
    });
    expect(await processScanJob(env, message, MAX_ATTEMPTS)).toBe("done");
    // An ended job is read where it lives: its asset's object (issue 38).
    const source: EndedJobSource = assetMonitor(env, tenant, id);
    row = await getScanJob(db, source, tenant, id, job.id);
    expect(row).toMatchObject({ status: "FAILED", attempts: 2, error: expect.stringMatching(/127\.0\.0\.1/) });

    // A job whose deliveries all failed before it could record anything.
    const lost = await createScanJob(db, { tenantId: tenant, assetId: id, kind: "SCAN", trigger: "api" });
    const batch = createMessageBatch("scan-jobs-dlq", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: { job_id: lost.id, tenant_id: tenant, asset_id: id } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch as MessageBatch<never>, env);
    expect(await getQueueResult(batch, ctx)).toMatchObject({ explicitAcks: ["m1"] });
    row = await getScanJob(db, source, tenant, id, lost.id);
    expect(row).toMatchObject({ status: "FAILED", error: expect.stringMatching(/^gave up after/) });
  });

  it("a message for a finished job changes nothing (at-least-once delivery)", async () => {
    const { tenant, projectId } = await project();
    const id = await asset(tenant, projectId, {
      type: "S3",
      connection_id: await connection(tenant, projectId, s3Connection()),
      payload: ORDERS,
    });
    const jobId = await scan(tenant, id);
    const before = await finishedJob(tenant, id, jobId);
    expect(await processScanJob(env, { job_id: jobId, tenant_id: tenant, asset_id: id }, 2)).toBe("done");
    const after = await call("GET", `/api/backend/${tenant}/configuration/assets/${id}/scans/${jobId}`, { as: admin });
    expect(after.body).toEqual(before);
  });
});

describe("schema load from a database", () => {
  it("reads a PostgreSQL table's attributes", async () => {
    const runner = await runnerFor("postgres");
    const table = uniqueTable("dq_schema");
    try {
      await runner.query(`CREATE TABLE ${table} (id BIGINT NOT NULL, email TEXT, created_at TIMESTAMPTZ)`);
      const { tenant, projectId } = await project();
      const id = await asset(tenant, projectId, {
        type: "GENERIC_JDBC",
        payload: { schema: "public", table },
        connection_id: await connection(tenant, projectId, {
          type: "GENERIC_JDBC",
          payload: DATABASES.postgres.payload,
          credential: { type: "GENERIC_MAP", payload: DATABASES.postgres.credential },
        }),
      });
      const res = await call("POST", `/api/data/${tenant}/assets/${id}/schema`, { as: admin });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      // The tenant's use_information_schema is false by default: types come from a zero-row query, which
      // cannot tell nullability (test/jobs/analyze.test.ts reads the catalog with the flag on).
      expect(res.body.attributes.map((a: { name: string; type: string }) => [a.name, a.type])).toEqual([
        ["id", "bigint"],
        ["email", "text"],
        ["created_at", "timestamp with time zone"],
      ]);
      // A table that does not exist: a 422 problem, not a 5xx.
      await runner.query(`DROP TABLE ${table}`);
      const gone = await call("POST", `/api/data/${tenant}/assets/${id}/schema`, { as: admin });
      expect(gone.status).toBe(422);
      expect(gone.body.code).toBe("source_error");
    } finally {
      await runner.query(`DROP TABLE IF EXISTS ${table}`);
      await runner.close();
    }
  });
});
