import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { createDb } from "../../src/db";
import { tenantUploadStore } from "../../src/jobs/upload-storage";
import { cutoffOf, purgeTenant } from "../../src/retention/retention";
import { finishedJob } from "../scenario/support";
import { ADMIN_KEY, admin, call } from "../support/api";
import { csvAsset } from "../support/assets";
import { asDeployed } from "../support/outbound";

/**
 * A tenant's own storage (configuration `storage`): its uploaded batches are written to, scanned
 * from and expired in its bucket, on the real emulators (s3rver behind a SigV4 check, Azurite) and
 * the test's GCS server, and never land in our R2 bucket.
 */

const servers = inject("objectStores");
const DAY = 86_400_000;

const CSV = "id,email,amount\n1,a@example.com,10\n2,b@example.com,20\n3,,30\n";

/** A storage spoken to through the S3 API (s3rver behind its SigV4 check). */
const s3Api = (type: "S3" | "R2") => ({
  type,
  payload: {
    bucket: servers.s3.bucket,
    region: servers.s3.region,
    endpoint: servers.s3.endpoint,
    credentials: { access_key: servers.s3.accessKeyId, secret_key: servers.s3.secretAccessKey },
  },
});

/** The storage block of a tenant configuration for each kind of store the tests run. */
const STORAGES: Record<string, () => Record<string, unknown>> = {
  S3: () => s3Api("S3"),
  // R2's S3 API, here s3rver's: the same signing, another type and default endpoint.
  R2: () => s3Api("R2"),
  GCS: () => ({
    type: "GCS",
    payload: { bucket: servers.gcs.bucket, endpoint: servers.gcs.endpoint, credentials: servers.gcs.writer },
  }),
  AZURE: () => ({
    type: "AZURE",
    payload: {
      bucket: servers.azure.container,
      endpoint: servers.azure.endpoint,
      security: { storage_account: servers.azure.account, sas_key: servers.azure.writeSas },
    },
  }),
};

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** POSTs a data upload with its Content-Length, as a client sends a file. */
function upload(tenant: string, assetId: number, body: Uint8Array, headers: Record<string, string> = {}) {
  return SELF.fetch(`https://dq.test/v2/${tenant}/sources/${assetId}/batch_data`, {
    method: "POST",
    headers: {
      "X-SVC-Key": ADMIN_KEY,
      "Content-Type": "text/csv",
      "Content-Length": String(body.byteLength),
      ...headers,
    },
    body,
  });
}

async function tenantRow(tenant: string) {
  return (await createDb(env.DB).query.tenants.findFirst({ where: (t, { eq }) => eq(t.id, tenant) }))!;
}

/** The objects under the tenant's upload prefix in its own bucket, read with its stored credentials. */
async function ownObjects(tenant: string) {
  const store = await tenantUploadStore(env, await tenantRow(tenant));
  return (await store!.list(`uploads/${tenant}/`)).map((o) => o.key);
}

async function jobRequest(jobId: string) {
  const row = await env.DB.prepare("select request from scan_jobs where id = ?")
    .bind(jobId)
    .first<{ request: string }>();
  return JSON.parse(row!.request);
}

const ourObjects = async (tenant: string) =>
  (await env.UPLOADS.list({ prefix: `uploads/${tenant}/` })).objects.map((o) => o.key);

describe("uploads into the tenant's own storage", () => {
  for (const type of Object.keys(STORAGES)) {
    it(`${type}: stores the batch in the tenant's bucket, scans it from there, and expires it`, async () => {
      const { tenant, asset } = await csvAsset({ storage: STORAGES[type]!(), data_ttl: 30 });
      const res = await upload(tenant, asset.id, new TextEncoder().encode(CSV));
      expect(res.status, await res.clone().text()).toBe(202);
      const { job_id } = (await res.json()) as { job_id: string };
      const request = await jobRequest(job_id);
      expect(request.upload).toMatchObject({ storage: "tenant", format: "csv", bytes: CSV.length });
      expect(await ownObjects(tenant)).toEqual([request.upload.key]);
      expect(await ourObjects(tenant)).toEqual([]);

      const job = await finishedJob(tenant, asset.id, job_id);
      expect(job.progress.rows).toBe(3);

      // Retention: within the TTL nothing goes; past it the object leaves the tenant's bucket.
      const db = createDb(env.DB);
      const row = await tenantRow(tenant);
      expect((await purgeTenant(env, db, row, new Date())).tenant_storage_uploads).toBeUndefined();
      expect(await ownObjects(tenant)).toHaveLength(1);
      const later = new Date(Date.now() + 31 * DAY);
      expect(cutoffOf(30, later) > new Date().toISOString()).toBe(true);
      expect((await purgeTenant(env, db, row, later)).tenant_storage_uploads).toBe(1);
      expect(await ownObjects(tenant)).toEqual([]);
    });
  }

  it("keeps a gzip upload compressed in the tenant's bucket, the limit on inflated bytes, and scans it inflated", async () => {
    const { tenant, asset } = await csvAsset({ storage: STORAGES.S3!() });
    const compressed = await gzip(CSV);
    const res = await upload(tenant, asset.id, compressed, { "Content-Encoding": "gzip" });
    expect(res.status, await res.clone().text()).toBe(202);
    const { job_id } = (await res.json()) as { job_id: string };
    const request = await jobRequest(job_id);
    expect(request.upload).toMatchObject({ storage: "tenant", encoding: "gzip", bytes: CSV.length });
    const store = await tenantUploadStore(env, await tenantRow(tenant));
    const stored = new Uint8Array(await new Response(await store!.stream(request.upload.key)).arrayBuffer());
    expect(stored).toEqual(compressed);
    expect((await finishedJob(tenant, asset.id, job_id)).progress.rows).toBe(3);
    await store!.delete(request.upload.key);

    // Inflated past the tenant's limit: 413, and the object that was being written is gone.
    const small = await csvAsset({ storage: STORAGES.S3!(), free_upload_limit: 1000 });
    const big = await gzip(`id\n${"1\n".repeat(5000)}`);
    expect(big.byteLength).toBeLessThan(1000);
    const refused = await upload(small.tenant, small.asset.id, big, { "Content-Encoding": "gzip" });
    expect(refused.status).toBe(413);
    expect(await ownObjects(small.tenant)).toEqual([]);
    expect(
      (await call("GET", `/api/backend/${small.tenant}/configuration/assets/${small.asset.id}/scans`, { as: admin }))
        .body,
    ).toEqual([]);
  });

  it("answers 422 naming the store when the tenant's bucket refuses the credentials, and queues nothing", async () => {
    const forged = {
      type: "AZURE",
      payload: {
        bucket: servers.azure.container,
        endpoint: servers.azure.endpoint,
        security: { storage_account: servers.azure.account, sas_key: servers.azure.forgedSas },
      },
    };
    const readOnly = {
      type: "GCS",
      payload: { bucket: servers.gcs.bucket, endpoint: servers.gcs.endpoint, credentials: servers.gcs.reader },
    };
    for (const storage of [forged, readOnly]) {
      const { tenant, asset } = await csvAsset({ storage });
      const res = await upload(tenant, asset.id, new TextEncoder().encode(CSV));
      expect(res.status).toBe(422);
      const body = (await res.json()) as { code: string; detail: string };
      expect(body.code).toBe("source_error");
      expect(body.detail).toMatch(/^auth: access denied/);
      expect(body.detail).not.toContain(servers.azure.forgedSas.slice(-20));
      expect(
        (await call("GET", `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`, { as: admin })).body,
      ).toEqual([]);
      expect(await ourObjects(tenant)).toEqual([]);
    }
  });

  it("sends nothing to a storage endpoint on a private address when deployed (the upload is a 422)", async () => {
    const { tenant, asset } = await csvAsset({ storage: STORAGES.S3!() });
    const res = await asDeployed(() => upload(tenant, asset.id, new TextEncoder().encode(CSV)));
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toMatch(/^invalid: .*127\.0\.0\.1/);
    expect(body.detail).not.toContain(servers.s3.secretAccessKey);
    expect(await ourObjects(tenant)).toEqual([]);
  });

  it("refuses a storage without the credentials its type signs in with, and an R2 without its account", async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [
        { type: "S3", payload: { bucket: "b", credentials: { access_key: "AKIA" } } },
        "body.storage.payload.credentials",
        /secret_key/,
      ],
      [{ type: "GCS", payload: { bucket: "b" } }, "body.storage.payload.credentials", /client_email/],
      [
        { type: "R2", payload: { bucket: "b", credentials: { access_key: "a", secret_key: "s" } } },
        "body.storage.payload.account_id",
        /required for R2/,
      ],
      [
        { type: "S3", payload: { bucket: "b", endpoint: "http://user:pw@example.com" } },
        "body.storage.payload.endpoint",
        /without credentials/,
      ],
    ];
    for (const [storage, path, message] of cases) {
      const id = `bad-storage-${crypto.randomUUID().slice(0, 8)}`;
      const res = await call("PUT", `/backend/private/configuration/tenants/${id}`, {
        as: admin,
        body: { name: "x", storage },
      });
      expect(res.status, JSON.stringify(storage)).toBe(400);
      const problem = res.body.errors.find((e: { path: string }) => e.path === path);
      expect(problem, JSON.stringify(res.body.errors)).toBeDefined();
      expect(problem.message).toMatch(message);
      expect((await call("GET", `/backend/private/configuration/tenants/${id}`, { as: admin })).status).toBe(404);
    }
  });

  it("returns where the storage is, never its credentials, and asks for them again when the endpoint moves", async () => {
    const { tenant } = await csvAsset({ storage: STORAGES.S3!() });
    const path = `/backend/private/configuration/tenants/${tenant}`;
    const got = (await call("GET", path, { as: admin })).body;
    expect(got.storage).toEqual({
      type: "S3",
      payload: { bucket: servers.s3.bucket, region: servers.s3.region, endpoint: servers.s3.endpoint },
    });
    expect(JSON.stringify(got)).not.toContain(servers.s3.secretAccessKey);
    expect((await call("PUT", path, { as: admin, body: got })).status).toBe(200);
    const moved = {
      ...got,
      storage: { ...got.storage, payload: { ...got.storage.payload, endpoint: "https://s3.example.com" } },
    };
    const refused = await call("PUT", path, { as: admin, body: moved });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((e: { path: string }) => e.path)).toEqual(["body.storage.payload.credentials"]);
  });
});
