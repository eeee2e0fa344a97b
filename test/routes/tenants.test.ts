import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db";
import { secretBox } from "../../src/lib/crypto";
import { openTenantStorageSecret } from "../../src/tenancy/tenants";
import { admin, call } from "../support/api";
import { describeAuthMatrix } from "../support/auth-matrix";
import { unique } from "../support/unique";

const path = (id: string) => `/backend/private/configuration/tenants/${id}`;

describeAuthMatrix("tenant configuration", [
  { method: "GET", path: () => "/backend/private/configuration/tenants", role: "PLATFORM_ADMIN" },
  { method: "GET", path: (w) => path(w.tenant), role: "PLATFORM_ADMIN" },
  { method: "PUT", path: (w) => path(w.tenant), body: () => ({ name: "x" }), role: "PLATFORM_ADMIN" },
]);

const full = {
  name: "Acme",
  description: "Acme Corp",
  storage: {
    type: "AZURE",
    payload: {
      bucket: "dq-data",
      credentials: { client_secret: "super-secret-credential" },
      security: { storage_account: "acmestore", sas_key: "sv=2024&sig=very-secret-sas" },
    },
  },
  data_ttl: 30,
  free_upload_limit: 1_000_000,
  use_information_schema: true,
  "dataproc-config": {
    autoscale_policy: "projects/p/regions/r/autoscalingPolicies/a",
    spark_worker_disk_size_in_gb: 100,
    spark_master_disk_size_in_gb: 50,
    master_node_type: "n2-standard-4",
    worker_node_type: "n2-standard-8",
    download_job_spark_properties: { "spark.executor.memory": "4g" },
  },
};

describe("tenant configuration", () => {
  it("creates (201) then replaces (200) a tenant, and never returns storage secrets", async () => {
    const id = unique("acme");
    const created = await call("PUT", path(id), { as: admin, body: full });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id,
      name: "Acme",
      description: "Acme Corp",
      storage: { type: "AZURE", payload: { bucket: "dq-data", security: { storage_account: "acmestore" } } },
      data_ttl: 30,
      free_upload_limit: 1_000_000,
      use_information_schema: true,
      "dataproc-config": full["dataproc-config"],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const got = await call("GET", path(id), { as: admin });
    expect(got.body).toEqual(created.body);
    for (const res of [
      created,
      got,
      await call("GET", "/backend/private/configuration/tenants?limit=1000", { as: admin }),
    ]) {
      expect(JSON.stringify(res.body)).not.toContain("super-secret-credential");
      expect(JSON.stringify(res.body)).not.toContain("very-secret-sas");
    }
    // Sealed at rest, and still usable by the service.
    const row = await env.DB.prepare("select * from tenants where id = ?").bind(id).first();
    expect(JSON.stringify(row)).not.toContain("super-secret-credential");
    expect(JSON.stringify(row)).not.toContain("very-secret-sas");
    const tenant = await createDb(env.DB).query.tenants.findFirst({ where: (t, { eq }) => eq(t.id, id) });
    expect(await openTenantStorageSecret(secretBox(env.ENCRYPTION_KEYS), tenant!)).toEqual({
      credentials: { client_secret: "super-secret-credential" },
      sas_key: "sv=2024&sig=very-secret-sas",
    });

    const replaced = await call("PUT", path(id), { as: admin, body: { name: "Acme 2" } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      name: "Acme 2",
      description: "",
      storage: null,
      data_ttl: 90,
      free_upload_limit: 50_000_000_000, // 50 GB, decimal
      use_information_schema: false,
      "dataproc-config": null,
      created_at: created.body.created_at,
    });
  });

  it("takes back what GET gave: read-only fields ignored, omitted secrets kept, null clears, no name needed", async () => {
    const id = unique("roundtrip");
    expect((await call("PUT", path(id), { as: admin, body: full })).status).toBe(201);
    const secrets = async () => {
      const tenant = await createDb(env.DB).query.tenants.findFirst({ where: (t, { eq }) => eq(t.id, id) });
      return openTenantStorageSecret(secretBox(env.ENCRYPTION_KEYS), tenant!);
    };
    const got = (await call("GET", path(id), { as: admin })).body;
    expect(got.created_at).toBeDefined();

    const edited = { ...got, description: "edited" };
    const put = await call("PUT", path(id), { as: admin, body: edited });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ description: "edited", storage: got.storage, created_at: got.created_at });
    expect(await secrets()).toEqual({
      credentials: { client_secret: "super-secret-credential" },
      sas_key: "sv=2024&sig=very-secret-sas",
    });

    // A stored secret does not follow a changed address.
    const moved = { ...got, storage: { ...got.storage, payload: { ...got.storage.payload, bucket: "elsewhere" } } };
    const refused = await call("PUT", path(id), { as: admin, body: moved });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
      "body.storage.payload.credentials",
      "body.storage.payload.security.sas_key",
    ]);
    expect((await call("GET", path(id), { as: admin })).body.storage.payload.bucket).toBe("dq-data");

    // null clears one secret, the other is kept; name may be left out.
    const { name: _name, ...nameless } = got;
    const cleared = await call("PUT", path(id), {
      as: admin,
      body: { ...nameless, storage: { ...got.storage, payload: { ...got.storage.payload, credentials: null } } },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.name).toBe(got.name);
    expect(await secrets()).toEqual({ sas_key: "sv=2024&sig=very-secret-sas" });

    // A new tenant without a name is named after its id.
    const bare = unique("bare");
    expect((await call("PUT", path(bare), { as: admin, body: {} })).body).toMatchObject({ id: bare, name: bare });
  });

  it("validates every field and writes nothing on a bad body", async () => {
    const id = unique("bad");
    const cases: Array<[unknown, string]> = [
      [{ name: " " }, "body.name"],
      [{ name: "x", data_ttl: 1.5 }, "body.data_ttl"],
      [{ name: "x", free_upload_limit: -1 }, "body.free_upload_limit"],
      [{ name: "x", use_information_schema: "yes" }, "body.use_information_schema"],
      [{ name: "x", storage: { type: "FTP", payload: { bucket: "b" } } }, "body.storage.type"],
      [{ name: "x", storage: { type: "GCS", payload: {} } }, "body.storage.payload.bucket"],
      [
        { name: "x", storage: { type: "AZURE", payload: { bucket: "b" } } },
        "body.storage.payload.security.storage_account",
      ],
      [
        { name: "x", storage: { type: "AZURE", payload: { bucket: "b", security: { storage_account: "a" } } } },
        "body.storage.payload.security.sas_key",
      ],
      [
        { name: "x", "dataproc-config": { spark_worker_disk_size_in_gb: "100" } },
        "body.dataproc-config.spark_worker_disk_size_in_gb",
      ],
      [
        { name: "x", "dataproc-config": { spark_master_disk_size_in_gb: 10.5 } },
        "body.dataproc-config.spark_master_disk_size_in_gb",
      ],
      [{ name: "x", unknown_field: 1 }, "body"],
      [{ name: "x", id: "someone-else" }, "body.id"],
    ];
    for (const [body, field] of cases) {
      const res = await call("PUT", path(id), { as: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(
        res.body.errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toContain(field);
    }
    expect((await call("GET", path(id), { as: admin })).status).toBe(404);
  });

  it("refuses tenant ids that could collide with fixed path words", async () => {
    for (const id of [
      "v2",
      "api",
      "auth",
      "configuration",
      "token",
      "Upper",
      "a",
      "with_underscore",
      "-dash",
      "x".repeat(65),
    ]) {
      const res = await call("PUT", path(id), { as: admin, body: { name: "x" } });
      expect(res.status, id).toBe(400);
      expect(res.body.errors[0].path).toBe("path.tenantId");
    }
  });

  it("lists tenants in id order, paged, and 404s an unknown one", async () => {
    const ids = [unique("l"), unique("l")].sort();
    for (const id of ids) await call("PUT", path(id), { as: admin, body: { name: id } });
    const all: string[] = [];
    let next: string | null = "/backend/private/configuration/tenants?limit=50";
    while (next) {
      const res: { status: number; body: any; headers: Headers } = await call("GET", next, { as: admin });
      expect(res.status).toBe(200);
      all.push(...res.body.map((t: { id: string }) => t.id));
      const link: string | null = res.headers.get("link");
      next = link ? link.slice(1, link.indexOf(">")) : null;
    }
    expect(all).toEqual([...all].sort());
    expect(all).toEqual(expect.arrayContaining(ids));
    expect((await call("GET", path("no-such-tenant"), { as: admin })).status).toBe(404);
  });
});
