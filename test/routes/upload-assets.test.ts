import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openConnectionCredential } from "../../src/catalog/connections";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import type { EndedJobSource } from "../../src/jobs/scan-jobs";
import { secretBox } from "../../src/lib/crypto";
import { admin, call } from "../support/api";
import { countRows } from "../support/assets";
import { VALID_CONNECTIONS } from "../support/connections";
import { createProject } from "../support/projects";
import { scanJob, uploadCsv } from "../support/scans";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

// Issue 35, point 5: a user who only uploads files names no store, no credential and no path.

const config = (t: string) => `/api/backend/${t}/configuration`;
const paths = (body: { errors?: Array<{ path: string }> }) => (body.errors ?? []).map((e) => e.path);

/** A tenant, a project, an UPLOAD connection and an UPLOAD asset on it, each made with the least a user types. */
async function uploadAsset(assetFields: Record<string, unknown> = {}) {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const connection = await call("POST", `${config(tenant)}/projects/${projectId}/connections`, {
    as: admin,
    body: { name: unique("uploads"), type: "UPLOAD" },
  });
  expect(connection.status, JSON.stringify(connection.body)).toBe(201);
  const asset = await call("POST", `${config(tenant)}/projects/${projectId}/assets`, {
    as: admin,
    body: { name: unique("orders"), type: "UPLOAD", connection_id: connection.body.id, ...assetFields },
  });
  expect(asset.status, JSON.stringify(asset.body)).toBe(201);
  return { tenant, projectId, connection: connection.body, asset: asset.body };
}

const schemaOf = (tenant: string, assetId: number) =>
  call("POST", `/api/data/${tenant}/assets/${assetId}/schema`, { as: admin });

describe("UPLOAD connections", () => {
  it("need only a name and the type: no payload, no credential (none is stored but an empty one)", async () => {
    const { tenant, connection } = await uploadAsset();
    expect(connection).toMatchObject({ type: "UPLOAD", payload: {}, db_type: null, scope: "PROJECT" });
    const row = await env.DB.prepare("select credential_type, credential_secret, seal_id from connections where id = ?")
      .bind(connection.id)
      .first<{ credential_type: string; credential_secret: string; seal_id: string | null }>();
    expect(row!.credential_type).toBe("NONE");
    const opened = await openConnectionCredential(secretBox(env.ENCRYPTION_KEYS), {
      id: connection.id,
      tenantId: tenant,
      credentialType: "NONE",
      credentialSecret: row!.credential_secret,
      sealId: row!.seal_id,
    });
    expect(opened).toEqual({ type: "NONE", payload: {} });
    const global = await call("POST", `${config(tenant)}/connections`, {
      as: admin,
      body: { name: unique("uploads"), type: "UPLOAD", payload: {} },
    });
    expect(global.status).toBe(201);
    expect(global.body).toMatchObject({ scope: "GLOBAL", payload: {} });
  });

  it("refuse a credential or payload fields (400 naming them), writing nothing", async () => {
    const tenant = await createTenant();
    const before = await countRows("connections", "tenant_id = ?", tenant);
    const withKeys = await call("POST", `${config(tenant)}/connections`, {
      as: admin,
      body: { name: "lake", type: "UPLOAD", credential: VALID_CONNECTIONS.S3.credential },
    });
    expect(withKeys.status).toBe(400);
    expect(JSON.stringify(withKeys.body.errors)).toContain("takes no credential");
    const withPath = await call("POST", `${config(tenant)}/connections`, {
      as: admin,
      body: { name: "lake", type: "UPLOAD", payload: { bucket: "lake" } },
    });
    expect(withPath.status).toBe(400);
    expect(paths(withPath.body).join()).toContain("body.payload");
    expect(await countRows("connections", "tenant_id = ?", tenant)).toBe(before);
  });

  it("change type to UPLOAD without a credential (the old one is dropped) and back only with one", async () => {
    const tenant = await createTenant();
    const s3 = await call("POST", `${config(tenant)}/connections`, {
      as: admin,
      body: { name: unique("lake"), type: "S3", ...VALID_CONNECTIONS.S3 },
    });
    const path = `${config(tenant)}/connections/${s3.body.id}`;
    const sealedCredential = () =>
      env.DB.prepare("select credential_type, credential_secret from connections where id = ?")
        .bind(s3.body.id)
        .first<{ credential_type: string; credential_secret: string }>();
    const withSecret = await call("PUT", path, {
      as: admin,
      body: { type: "UPLOAD", credential: VALID_CONNECTIONS.S3.credential },
    });
    expect(withSecret.status).toBe(400);
    expect(paths(withSecret.body)).toEqual(["body.credential"]);
    expect((await sealedCredential())!.credential_type).toBe("AWS");

    const toUpload = await call("PUT", path, { as: admin, body: { type: "UPLOAD" } });
    expect(toUpload.status, JSON.stringify(toUpload.body)).toBe(200);
    expect(toUpload.body).toMatchObject({ type: "UPLOAD", payload: {}, db_type: null });
    const sealed = (await sealedCredential())!;
    expect(sealed.credential_type).toBe("NONE");
    expect(sealed.credential_secret).not.toContain("aws-secret-key");

    const back = await call("PUT", path, { as: admin, body: { type: "S3" } });
    expect(back.status).toBe(400);
    expect(paths(back.body).sort()).toEqual(["body.credential", "body.payload"]);
  });
});

describe("UPLOAD assets", () => {
  it("take no payload and no schedule, and only an UPLOAD connection", async () => {
    const { tenant, projectId, connection, asset } = await uploadAsset();
    expect(asset).toMatchObject({ type: "UPLOAD", payload: {}, connection_id: connection.id, db_type: null });
    const assets = `${config(tenant)}/projects/${projectId}/assets`;
    const scheduled = await call("POST", assets, {
      as: admin,
      body: {
        name: unique("a"),
        type: "UPLOAD",
        connection_id: connection.id,
        scheduled_upload: { cron: "0 * * * *" },
      },
    });
    expect(scheduled.status).toBe(400);
    expect(paths(scheduled.body)).toEqual(["body.scheduled_upload"]);
    const later = await call("PUT", `${assets}/${asset.id}`, {
      as: admin,
      body: { scheduled_upload: { cron: "0 * * * *" } },
    });
    expect(later.status).toBe(400);
    expect(paths(later.body)).toEqual(["body.scheduled_upload"]);
    const withPath = await call("PUT", `${assets}/${asset.id}`, {
      as: admin,
      body: { payload: { path: "orders/*.csv", format: "csv" } },
    });
    expect(withPath.status).toBe(400);
    const s3 = await call("POST", `${config(tenant)}/connections`, {
      as: admin,
      body: { name: unique("lake"), type: "S3", ...VALID_CONNECTIONS.S3 },
    });
    const onS3 = await call("POST", assets, {
      as: admin,
      body: { name: unique("a"), type: "UPLOAD", connection_id: s3.body.id },
    });
    expect(onS3.status).toBe(400);
    expect(paths(onS3.body)).toEqual(["body.connection_id"]);
  });

  it("scan each uploaded batch, and load their schema from the last batch", async () => {
    const { tenant, asset } = await uploadAsset({ options: { id_attributes: ["id"] } });
    const first = await uploadCsv(tenant, asset.id, "id,email,amount\n1,a@example.com,10\n2,,20\n");
    expect(await scanJob(tenant, asset.id, first)).toMatchObject({
      status: "SUCCEEDED",
      error: null,
      engine: "WORKER",
      progress: { rows: 2 },
    });
    const schema = await schemaOf(tenant, asset.id);
    expect(schema.status, JSON.stringify(schema.body)).toBe(200);
    expect(schema.body.attributes.map((a: { name: string }) => a.name)).toEqual(["id", "email", "amount"]);

    // The next batch has a column more (and uses ; as its delimiter): the schema follows it.
    const second = await call("POST", `/v2/${tenant}/sources/${asset.id}/batch_data?delimiter=;`, {
      as: admin,
      raw: "id;email;amount;country\n3;c@example.com;30;FR\n",
      headers: { "Content-Type": "text/csv" },
    });
    expect(second.status).toBe(202);
    expect(await scanJob(tenant, asset.id, second.body.job_id)).toMatchObject({ status: "SUCCEEDED" });
    const next = await schemaOf(tenant, asset.id);
    expect(next.status).toBe(200);
    expect(next.body.attributes.map((a: { name: string; type: string }) => [a.name, a.type])).toEqual([
      ["id", "integer"],
      ["email", "string"],
      ["amount", "integer"],
      ["country", "string"],
    ]);
    const listed = await call("GET", `${config(tenant)}/assets?with_attributes=true`, { as: admin });
    const stored = listed.body.find((a: { id: number }) => a.id === asset.id);
    expect(stored.attributes.map((a: { name: string }) => a.name)).toEqual(["id", "email", "amount", "country"]);
  });

  it("answer a schema load before any upload, and a scan trigger, with a 409 that says to upload", async () => {
    const { tenant, asset } = await uploadAsset();
    const schema = await schemaOf(tenant, asset.id);
    expect(schema.status).toBe(409);
    expect(schema.body.detail).toContain(`/v2/${tenant}/sources/${asset.id}/batch_data`);

    const trigger = await call("POST", `${config(tenant)}/assets/${asset.id}/scans`, { as: admin });
    expect(trigger.status).toBe(409);
    expect(trigger.body.detail).toContain("UPLOAD asset");
    // The upload endpoint's JSON form (a scan request, no data) is the same trigger.
    const json = await call("POST", `/v2/${tenant}/sources/${asset.id}/batch_data`, { as: admin, body: {} });
    expect(json.status).toBe(409);
    expect(await countRows("scan_jobs", "tenant_id = ? and asset_id = ?", tenant, asset.id)).toBe(0);
  });

  it("answer a schema load whose last batch is gone with a 422 naming it", async () => {
    const { tenant, asset } = await uploadAsset();
    const job = await uploadCsv(tenant, asset.id, "id\n1\n");
    await scanJob(tenant, asset.id, job);
    // The ended job is its asset's object's (issue 38).
    const source: EndedJobSource = assetMonitor(env, tenant, asset.id);
    const ended = await source.scanJob(job);
    const { key } = (ended.job!.request as { upload: { key: string } }).upload;
    await env.UPLOADS.delete(key);
    const schema = await schemaOf(tenant, asset.id);
    expect(schema.status).toBe(422);
    expect(schema.body).toMatchObject({ code: "source_error", detail: expect.stringContaining(key) });
  });
});
