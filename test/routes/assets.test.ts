import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admin, type Credential, call } from "../support/api";
import { assetRow, assetsPath, countRows, createAsset, PAYLOADS } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { insertConnection } from "../support/connections";
import { createProject, projectMember } from "../support/projects";
import { createTenant, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const base = (t: string) => `/api/backend/${t}/configuration`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const paths = (res: { body: { errors?: { path: string }[] } }) => (res.body.errors ?? []).map((e) => e.path);

/** A tenant with one project, a GLOBAL and a PROJECT DELTALAKE connection. */
async function world() {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const globalConn = await insertConnection(tenant, { projectId: null, type: "DELTALAKE", dbType: "databricks" });
  const projectConn = await insertConnection(tenant, { projectId, type: "DELTALAKE", dbType: "unity" });
  return { tenant, projectId, globalConn, projectConn, path: assetsPath(tenant, projectId) };
}

/** A user with the given project roles, as a credential. */
async function user(tenant: string, roles: Array<[number, string]>): Promise<{ as: Credential; email: string }> {
  const email = `${unique("u")}@example.com`;
  await tenantMember(tenant, email, "TENANT_MEMBER");
  for (const [projectId, role] of roles) await projectMember(tenant, projectId, email, role);
  return { as: await userToken(email), email };
}

describeAuthMatrix(
  "assets",
  async (w) => {
    const connectionId = await insertConnection(w.tenant, { projectId: null, type: "DELTALAKE" });
    const asset = await createAsset(w.tenant, w.projectId, connectionId);
    return { connectionId, assetId: asset.id as number };
  },
  [
    {
      method: "POST",
      path: (w) => assetsPath(w.tenant, w.projectId),
      body: (_w, x) => ({ name: "a", type: "DELTALAKE", payload: PAYLOADS.DELTALAKE, connection_id: x.connectionId }),
      role: "PROJECT_EDITOR",
    },
    { method: "GET", path: (w) => `${base(w.tenant)}/assets`, role: "TENANT_MEMBER" },
    { method: "GET", path: (w) => assetsPath(w.tenant, w.projectId), role: "PROJECT_VIEWER" },
    { method: "GET", path: (w, x) => `${assetsPath(w.tenant, w.projectId)}/${x.assetId}`, role: "PROJECT_VIEWER" },
    {
      method: "PUT",
      path: (w, x) => `${assetsPath(w.tenant, w.projectId)}/${x.assetId}`,
      body: () => ({ description: "changed" }),
      role: "PROJECT_EDITOR",
    },
    { method: "DELETE", path: (w, x) => `${assetsPath(w.tenant, w.projectId)}/${x.assetId}`, role: "PROJECT_EDITOR" },
    {
      method: "PUT",
      path: (w, x) => `${assetsPath(w.tenant, w.projectId)}/${x.assetId}/lineage`,
      body: () => ({ parents: [] }),
      role: "PROJECT_EDITOR",
    },
    {
      method: "POST",
      path: (w) => `${assetsPath(w.tenant, w.projectId)}/move`,
      body: (w, x) => ({ source_project_id: w.projectId, source_asset_ids: [String(x.assetId)] }),
      role: "PROJECT_EDITOR",
    },
  ],
);

describe("assets: create", () => {
  it("creates an asset with exactly the fields of 2.3, db_type from the connection", async () => {
    const w = await world();
    const editor = await user(w.tenant, [[w.projectId, "PROJECT_EDITOR"]]);
    const res = await call("POST", w.path, {
      as: editor.as,
      body: {
        name: " orders ",
        description: "All orders",
        type: "DELTALAKE",
        options: { id_attributes: ["order_id"], sample_fraction: 20, only_light_scan: "true", filter: { c: ["x", 1] } },
        payload: PAYLOADS.DELTALAKE,
        connection_id: w.projectConn,
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      project_id: w.projectId,
      name: "orders",
      description: "All orders",
      type: "DELTALAKE",
      options: { id_attributes: ["order_id"], sample_fraction: 20, only_light_scan: "true", filter: { c: ["x", 1] } },
      payload: PAYLOADS.DELTALAKE,
      created_by: editor.email,
      created_at: expect.stringMatching(ISO),
      connection_id: w.projectConn,
      db_type: "unity",
    });
    const got = await call("GET", `${w.path}/${res.body.id}`, { as: editor.as });
    expect(got.body).toEqual(res.body);
  });

  it("accepts the payload of every type, on a connection of that type", async () => {
    const w = await world();
    for (const [type, payload] of Object.entries(PAYLOADS)) {
      const conn = await insertConnection(w.tenant, { projectId: null, type });
      const res = await call("POST", w.path, { as: admin, body: { name: type, type, payload, connection_id: conn } });
      expect(res.status, type).toBe(201);
      expect(res.body).toMatchObject({ type, payload, options: {}, description: "", db_type: null });
    }
    // GENERIC_JDBC's schema is optional.
    const jdbc = await insertConnection(w.tenant, { projectId: null, type: "GENERIC_JDBC", dbType: "postgres" });
    const res = await call("POST", w.path, {
      as: admin,
      body: { name: "j", type: "GENERIC_JDBC", payload: { table: "t" }, connection_id: jdbc },
    });
    expect(res.status).toBe(201);
    expect(res.body.db_type).toBe("postgres");
  });

  it("answers one asset with its connection's db_type in one D1 call", async () => {
    const w = await world();
    const jdbc = await insertConnection(w.tenant, { projectId: null, type: "GENERIC_JDBC", dbType: "postgres" });
    const created = await call("POST", w.path, {
      as: admin,
      body: { name: "one", type: "GENERIC_JDBC", payload: { table: "t" }, connection_id: jdbc },
    });
    expect(created.status).toBe(201);
    const one = () => call("GET", `${w.path}/${created.body.id}`, { as: admin });
    await one();
    // The caller's access is cached after the first request: the check, the asset and the db_type are one query.
    const res = await one();
    expect(res.status).toBe(200);
    expect(res.body.db_type).toBe("postgres");
    expect(res.headers.get("server-timing")).toMatch(/desc="1 round trips, 1 sequential"/);
  });

  it.each([
    ["DELTALAKE", { catalog: "c", schema: "s" }, ["body.payload.table"]],
    ["DELTALAKE", { ...PAYLOADS.DELTALAKE, extra: 1 }, ["body.payload"]],
    ["SNOWFLAKE", { database: "d", table: "t" }, ["body.payload.schema"]],
    ["BIGQUERY", { dataset: "", table: "t" }, ["body.payload.dataset"]],
    ["REDSHIFT", { database: "d", schema: "s", table: 5 }, ["body.payload.table"]],
    ["GENERIC_JDBC", { schema: "s" }, ["body.payload.table"]],
    ["HIVE_ICEBERG", { table: "t" }, ["body.payload.database"]],
    ["GCS", { path: "a.csv", format: "xlsx" }, ["body.payload.format"]],
    ["S3", { format: "csv" }, ["body.payload.path"]],
    ["AZURE", { path: " ", format: "json" }, ["body.payload.path"]],
  ])("refuses a %s payload %j with 400 naming the field, writing nothing", async (type, payload, expected) => {
    const w = await world();
    const conn = await insertConnection(w.tenant, { projectId: null, type });
    const res = await call("POST", w.path, { as: admin, body: { name: "x", type, payload, connection_id: conn } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("validation_failed");
    expect(paths(res)).toEqual(expected);
    expect(await countRows("assets", "project_id = ?", w.projectId)).toBe(0);
  });

  it.each([
    [{ id_attributes: "id" }, "body.options.id_attributes"],
    [{ separator: ",," }, "body.options.separator"],
    [{ separator: "" }, "body.options.separator"],
    [{ sample_fraction: 0 }, "body.options.sample_fraction"],
    [{ sample_fraction: 101 }, "body.options.sample_fraction"],
    [{ sample_fraction: 2.5 }, "body.options.sample_fraction"],
    [{ skip_investigator: true }, "body.options.skip_investigator"],
    [{ delta_only: "yes" }, "body.options.delta_only"],
    [{ resolve_wildcards_to_folders: "TRUE" }, "body.options.resolve_wildcards_to_folders"],
    [{ timestamp_attribute: "" }, "body.options.timestamp_attribute"],
    [{ limit: 0 }, "body.options.limit"],
    [{ filter: { a: "x" } }, "body.options.filter.a"],
    [{ segments: { a: [{}] } }, "body.options.segments.a.0"],
    [{ only_light_scan: "true" }, "body.options.only_light_scan"],
    [{ unknown: 1 }, "body.options"],
  ])("refuses options %j on a GCS asset with 400 at %s", async (options, path) => {
    const w = await world();
    const conn = await insertConnection(w.tenant, { projectId: null, type: "GCS" });
    const res = await call("POST", w.path, {
      as: admin,
      body: { name: "x", type: "GCS", payload: PAYLOADS.GCS, options, connection_id: conn },
    });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual([path]);
    expect(await countRows("assets", "project_id = ?", w.projectId)).toBe(0);
  });

  it("allows a light scan for SNOWFLAKE, DELTALAKE and BIGQUERY", async () => {
    const w = await world();
    for (const type of ["SNOWFLAKE", "DELTALAKE", "BIGQUERY"]) {
      const conn = await insertConnection(w.tenant, { projectId: null, type });
      const asset = await createAsset(w.tenant, w.projectId, conn, { type, options: { only_light_scan: "true" } });
      expect(asset.options).toEqual({ only_light_scan: "true" });
    }
  });

  it("refuses a connection that is not visible from the project, or of another type", async () => {
    const w = await world();
    const otherProject = await createProject(w.tenant);
    const otherProjectConn = await insertConnection(w.tenant, { projectId: otherProject, type: "DELTALAKE" });
    const otherTenant = await createTenant();
    const otherTenantConn = await insertConnection(otherTenant, { projectId: null, type: "DELTALAKE" });
    const s3 = await insertConnection(w.tenant, { projectId: null, type: "S3" });
    const cases: Array<[number, RegExp]> = [
      [otherProjectConn, /no such connection/],
      [otherTenantConn, /no such connection/],
      [999_999_999, /no such connection/],
      [s3, /is a S3 connection; the type is DELTALAKE/],
    ];
    for (const [conn, message] of cases) {
      const res = await call("POST", w.path, {
        as: admin,
        body: { name: "x", type: "DELTALAKE", payload: PAYLOADS.DELTALAKE, connection_id: conn },
      });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ path: "body.connection_id", message: expect.stringMatching(message) }]);
    }
    expect(await countRows("assets", "project_id = ?", w.projectId)).toBe(0);
  });

  it("lists every problem of a body at once", async () => {
    const w = await world();
    const res = await call("POST", w.path, {
      as: admin,
      body: { name: "", type: "NOPE", payload: {}, connection_id: "1", extra: true },
    });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(expect.arrayContaining(["body.name", "body.type", "body.connection_id", "body"]));
  });
});

describe("assets: schedules", () => {
  it("stores a schedule and computes its next run in the time zone", async () => {
    const w = await world();
    const asset = await createAsset(w.tenant, w.projectId, w.globalConn, {
      scheduled_upload: { cron: "0  6 * * *", timezone: "Europe/Paris" },
    });
    const got = await call("GET", `${w.path}/${asset.id}?with_schedules=true`, { as: admin });
    const s = got.body.scheduled_upload;
    expect(s).toEqual({ cron: "0 6 * * *", timezone: "Europe/Paris", enabled: true, next_run_at: expect.any(String) });
    // 06:00 in Paris is 04:00 or 05:00 UTC, within the next day.
    const next = new Date(s.next_run_at);
    expect([4, 5]).toContain(next.getUTCHours());
    expect(next.getUTCMinutes()).toBe(0);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(25 * 3_600_000);
  });

  it("keeps next_run_at null while disabled, and clears the schedule with null", async () => {
    const w = await world();
    const asset = await createAsset(w.tenant, w.projectId, w.globalConn, {
      scheduled_upload: { cron: "*/5 * * * *", enabled: false },
    });
    const url = `${w.path}/${asset.id}`;
    let got = await call("GET", `${url}?with_schedules=true`, { as: admin });
    expect(got.body.scheduled_upload).toEqual({
      cron: "*/5 * * * *",
      timezone: "UTC",
      enabled: false,
      next_run_at: null,
    });

    await call("PUT", url, { as: admin, body: { scheduled_upload: { cron: "*/5 * * * *" } } });
    got = await call("GET", `${url}?with_schedules=true`, { as: admin });
    expect(new Date(got.body.scheduled_upload.next_run_at).getUTCMinutes() % 5).toBe(0);

    await call("PUT", url, { as: admin, body: { scheduled_upload: null } });
    got = await call("GET", `${url}?with_schedules=true`, { as: admin });
    expect(got.body.scheduled_upload).toBeNull();
    expect((await assetRow(asset.id))!.next_run_at).toBeNull();
  });

  it.each([
    [{ cron: "0 6 * *" }, "body.scheduled_upload.cron"],
    [{ cron: "61 * * * *" }, "body.scheduled_upload.cron"],
    [{ cron: "0 0 31 2 *" }, "body.scheduled_upload.cron"],
    [{ cron: "0 6 * * *", timezone: "Mars/Olympus" }, "body.scheduled_upload.timezone"],
    [{ cron: "0 6 * * *", enabled: "yes" }, "body.scheduled_upload.enabled"],
    [{ cron: "0 6 * * *", extra: 1 }, "body.scheduled_upload"],
  ])("refuses the schedule %j with 400 at %s", async (scheduled_upload, path) => {
    const w = await world();
    const res = await call("POST", w.path, {
      as: admin,
      body: {
        name: "x",
        type: "DELTALAKE",
        payload: PAYLOADS.DELTALAKE,
        connection_id: w.globalConn,
        scheduled_upload,
      },
    });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual([path]);
  });
});

describe("assets: update", () => {
  it("changes only the fields sent", async () => {
    const w = await world();
    const asset = await createAsset(w.tenant, w.projectId, w.globalConn, { description: "d", options: { limit: 5 } });
    const res = await call("PUT", `${w.path}/${asset.id}`, { as: admin, body: { name: "renamed" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...asset, name: "renamed" });
    const opts = await call("PUT", `${w.path}/${asset.id}`, { as: admin, body: { options: { separator: ";" } } });
    expect(opts.body).toEqual({ ...asset, name: "renamed", options: { separator: ";" } });
  });

  it("changes type with a payload for it and a connection of that type", async () => {
    const w = await world();
    const asset = await createAsset(w.tenant, w.projectId, w.globalConn);
    const s3 = await insertConnection(w.tenant, { projectId: w.projectId, type: "S3", dbType: null });
    const res = await call("PUT", `${w.path}/${asset.id}`, {
      as: admin,
      body: { type: "S3", payload: PAYLOADS.S3, connection_id: s3 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "S3", payload: PAYLOADS.S3, connection_id: s3, db_type: null });
  });

  it("accepts type GCP, the spec's name for GCS files, and stores it as GCS", async () => {
    const w = await world();
    const gcs = await insertConnection(w.tenant, { projectId: null, type: "GCS" });
    const res = await call("POST", w.path, {
      as: admin,
      body: { name: unique("gcp"), type: "GCP", payload: PAYLOADS.GCS, connection_id: gcs },
    });
    expect(res.status).toBe(201);
    expect(res.body.type).toBe("GCS");
    const renamed = await call("PUT", `${w.path}/${res.body.id}`, { as: admin, body: { type: "GCP" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.type).toBe("GCS");
  });

  it("refuses a type change that the payload, connection or options do not fit, writing nothing", async () => {
    const w = await world();
    const asset = await createAsset(w.tenant, w.projectId, w.globalConn, { options: { only_light_scan: "true" } });
    const before = await assetRow(asset.id);
    const url = `${w.path}/${asset.id}`;
    const snowflake = await insertConnection(w.tenant, { projectId: null, type: "SNOWFLAKE" });
    const gcs = await insertConnection(w.tenant, { projectId: null, type: "GCS" });

    // The stored DELTALAKE payload does not fit SNOWFLAKE, and the connection is DELTALAKE.
    let res = await call("PUT", url, { as: admin, body: { type: "SNOWFLAKE" } });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(expect.arrayContaining(["body.payload.database", "body.payload", "body.type"]));
    expect(res.body.errors.find((e: any) => e.path === "body.type").message).toMatch(/DELTALAKE/);

    // Payload fits, connection does not.
    res = await call("PUT", url, { as: admin, body: { type: "SNOWFLAKE", payload: PAYLOADS.SNOWFLAKE } });
    expect(paths(res)).toEqual(["body.type"]);

    // A light scan does not go with GCS.
    res = await call("PUT", url, { as: admin, body: { type: "GCS", payload: PAYLOADS.GCS, connection_id: gcs } });
    expect(paths(res)).toEqual(["body.options.only_light_scan"]);

    // A payload alone is checked against the stored type.
    res = await call("PUT", url, { as: admin, body: { payload: PAYLOADS.SNOWFLAKE } });
    expect(paths(res)).toEqual(expect.arrayContaining(["body.payload.catalog", "body.payload"]));

    // A new connection of another type, or not visible.
    res = await call("PUT", url, { as: admin, body: { connection_id: snowflake } });
    expect(res.body.errors).toEqual([{ path: "body.connection_id", message: expect.stringMatching(/SNOWFLAKE/) }]);
    const hidden = await insertConnection(w.tenant, { projectId: await createProject(w.tenant), type: "DELTALAKE" });
    res = await call("PUT", url, { as: admin, body: { connection_id: hidden, name: "n" } });
    expect(paths(res)).toEqual(["body.connection_id"]);

    expect(await assetRow(asset.id)).toEqual(before);
    // And the valid change goes through.
    res = await call("PUT", url, {
      as: admin,
      body: { type: "SNOWFLAKE", payload: PAYLOADS.SNOWFLAKE, connection_id: snowflake },
    });
    expect(res.status).toBe(200);
  });
});

describe("assets: read and delete", () => {
  it("adds attributes, schedule and lineage only when asked", async () => {
    const w = await world();
    const a = await createAsset(w.tenant, w.projectId, w.globalConn);
    const b = await createAsset(w.tenant, w.projectId, w.globalConn);
    await env.DB.prepare("update assets set attributes = ? where id = ?")
      .bind(JSON.stringify([{ name: "id", type: "INTEGER", nullable: false }]), b.id)
      .run();
    await call("PUT", `${w.path}/${b.id}/lineage`, { as: admin, body: { parents: [String(a.id)] } });

    const plain = await call("GET", w.path, { as: admin });
    expect(plain.body).toEqual([a, b]);
    const rich = await call("GET", `${w.path}?with_attributes=true&with_schedules=true&with_lineage=true`, {
      as: admin,
    });
    expect(rich.body).toEqual([
      { ...a, attributes: [], scheduled_upload: null, parents: [], children: [String(b.id)] },
      {
        ...b,
        attributes: [{ name: "id", type: "INTEGER", nullable: false }],
        scheduled_upload: null,
        parents: [String(a.id)],
        children: [],
      },
    ]);
    const one = await call("GET", `${w.path}/${b.id}?with_lineage=true&with_attributes=false`, { as: admin });
    expect(one.body).toEqual({ ...b, parents: [String(a.id)], children: [] });
    const all = await call("GET", `${base(w.tenant)}/assets?with_lineage=true`, { as: admin });
    expect(all.body).toEqual([
      { ...a, parents: [], children: [String(b.id)] },
      { ...b, parents: [String(a.id)], children: [] },
    ]);
    const bad = await call("GET", `${w.path}?with_lineage=yes`, { as: admin });
    expect(bad.status).toBe(400);
    expect(paths(bad)).toEqual(["query.with_lineage"]);
  });

  it("lists across projects only those the caller can read, and pages by id", async () => {
    const w = await world();
    const p2 = await createProject(w.tenant);
    const p3 = await createProject(w.tenant);
    const ids = [
      (await createAsset(w.tenant, w.projectId, w.globalConn)).id,
      (await createAsset(w.tenant, p2, w.globalConn)).id,
      (await createAsset(w.tenant, p3, w.globalConn)).id,
      (await createAsset(w.tenant, w.projectId, w.globalConn)).id,
    ];
    const viewer = await user(w.tenant, [
      [w.projectId, "PROJECT_VIEWER"],
      [p3, "PROJECT_EDITOR"],
    ]);
    const mine = await call("GET", `${base(w.tenant)}/assets`, { as: viewer.as });
    expect(mine.body.map((a: any) => a.id)).toEqual([ids[0], ids[2], ids[3]]);
    const outsider = await user(w.tenant, []);
    expect((await call("GET", `${base(w.tenant)}/assets`, { as: outsider.as })).body).toEqual([]);

    const first = await call("GET", `${base(w.tenant)}/assets?limit=3&with_lineage=true`, { as: admin });
    expect(first.body.map((a: any) => a.id)).toEqual(ids.slice(0, 3));
    const link = first.headers.get("link")!;
    expect(link).toMatch(/^<\/api\/backend\/.+\/assets\?.*cursor=.+>; rel="next"$/);
    const next = await call("GET", link.slice(1, link.indexOf(">")), { as: admin });
    expect(next.body.map((a: any) => a.id)).toEqual(ids.slice(3));
    expect(next.body[0].parents).toEqual([]);
    expect(next.headers.get("link")).toBeNull();

    const projectPage = await call("GET", `${w.path}?limit=1`, { as: admin });
    expect(projectPage.body.map((a: any) => a.id)).toEqual([ids[0]]);
    const link2 = projectPage.headers.get("link")!;
    const rest = await call("GET", link2.slice(1, link2.indexOf(">")), { as: admin });
    expect(rest.body.map((a: any) => a.id)).toEqual([ids[3]]);
    expect((await call("GET", `${w.path}?cursor=garbage`, { as: admin })).status).toBe(400);
  });

  it("lists a project's assets with its access check in one D1 call, empty or paged, 404 for a project not the caller's", async () => {
    const w = await world();
    const ids = [
      (await createAsset(w.tenant, w.projectId, w.globalConn)).id,
      (await createAsset(w.tenant, w.projectId, w.projectConn)).id,
    ];
    const viewer = await user(w.tenant, [[w.projectId, "PROJECT_VIEWER"]]);
    const roundTrips = (res: { headers: Headers }) => res.headers.get("server-timing");
    for (const as of [viewer.as, admin]) {
      await call("GET", w.path, { as });
      // With the caller's standing cached: the page, the project and the membership are one query.
      const res = await call("GET", w.path, { as });
      expect(res.status).toBe(200);
      expect(res.body.map((a: any) => [a.id, a.db_type])).toEqual([
        [ids[0], "databricks"],
        [ids[1], "unity"],
      ]);
      expect(roundTrips(res)).toMatch(/desc="1 round trips, 1 sequential"/);
      const paged = await call("GET", `${w.path}?limit=1`, { as });
      const link = paged.headers.get("link")!;
      expect((await call("GET", link.slice(1, link.indexOf(">")), { as })).body.map((a: any) => a.id)).toEqual([
        ids[1],
      ]);
    }
    const empty = await createProject(w.tenant);
    expect((await call("GET", assetsPath(w.tenant, empty), { as: admin })).body).toEqual([]);
    // A member of the tenant but not of the project, a project of another tenant, none at all.
    expect((await call("GET", assetsPath(w.tenant, empty), { as: viewer.as })).status).toBe(404);
    const other = await world();
    await createAsset(other.tenant, other.projectId, other.globalConn);
    expect((await call("GET", assetsPath(w.tenant, other.projectId), { as: admin })).status).toBe(404);
    expect((await call("GET", assetsPath(w.tenant, 999_999_999), { as: admin })).status).toBe(404);
    // A bad cursor from a caller without access is that caller's 404, not a 400.
    expect((await call("GET", `${assetsPath(w.tenant, empty)}?cursor=garbage`, { as: viewer.as })).status).toBe(404);
  });

  it("answers 404 for an asset of another project or tenant", async () => {
    const w = await world();
    const asset = await createAsset(w.tenant, w.projectId, w.globalConn);
    const p2 = await createProject(w.tenant);
    const other = await world();
    for (const path of [`${assetsPath(w.tenant, p2)}/${asset.id}`, `${other.path}/${asset.id}`]) {
      expect((await call("GET", path, { as: admin })).status).toBe(404);
      expect((await call("PUT", path, { as: admin, body: { name: "x" } })).status).toBe(404);
      expect((await call("DELETE", path, { as: admin })).status).toBe(404);
      expect((await call("PUT", `${path}/lineage`, { as: admin, body: { parents: [] } })).status).toBe(404);
    }
    expect((await assetRow(asset.id))!.name).toBe(asset.name);
    // A viewer reads but cannot write.
    const viewer = await user(w.tenant, [[w.projectId, "PROJECT_VIEWER"]]);
    expect((await call("GET", `${w.path}/${asset.id}`, { as: viewer.as })).status).toBe(200);
    const write = await call("PUT", `${w.path}/${asset.id}`, { as: viewer.as, body: { name: "x" } });
    expect(write.status).toBe(403);
  });

  it("deletes an asset with its lineage edges and DQ score configuration", async () => {
    const w = await world();
    const a = await createAsset(w.tenant, w.projectId, w.globalConn);
    const b = await createAsset(w.tenant, w.projectId, w.globalConn);
    await call("PUT", `${w.path}/${a.id}/lineage`, { as: admin, body: { children: [String(b.id)] } });
    await env.DB.prepare(
      "insert into dq_score_configs (asset_id, tenant_id, enabled, weights, updated_at) values (?, ?, 1, '{}', 'now')",
    )
      .bind(a.id, w.tenant)
      .run();
    const res = await call("DELETE", `${w.path}/${a.id}`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: `Asset ${a.id} deleted` });
    expect((await call("GET", `${w.path}/${a.id}`, { as: admin })).status).toBe(404);
    expect(await countRows("asset_lineage", "parent_asset_id = ? or child_asset_id = ?", a.id, a.id)).toBe(0);
    expect(await countRows("dq_score_configs", "asset_id = ?", a.id)).toBe(0);
    const left = await call("GET", `${w.path}/${b.id}?with_lineage=true`, { as: admin });
    expect(left.body.parents).toEqual([]);
    expect((await call("DELETE", `${w.path}/${a.id}`, { as: admin })).status).toBe(404);
  });
});

describe("assets: lineage", () => {
  it("replaces the sides sent and keeps the others", async () => {
    const w = await world();
    const [a, b, c, d] = await Promise.all([1, 2, 3, 4].map(() => createAsset(w.tenant, w.projectId, w.globalConn)));
    const url = `${w.path}/${b.id}/lineage`;
    let res = await call("PUT", url, {
      as: admin,
      body: { parents: [String(a.id), String(a.id)], children: [String(c.id)] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...b, parents: [String(a.id)], children: [String(c.id)] });
    res = await call("PUT", url, { as: admin, body: { parents: [String(d.id)] } });
    expect(res.body).toMatchObject({ parents: [String(d.id)], children: [String(c.id)] });
    res = await call("PUT", url, { as: admin, body: { children: [] } });
    expect(res.body).toMatchObject({ parents: [String(d.id)], children: [] });
    const parent = await call("GET", `${w.path}/${d.id}?with_lineage=true`, { as: admin });
    expect(parent.body).toMatchObject({ parents: [], children: [String(b.id)] });
  });

  it("links assets across projects the caller can read, and nothing else", async () => {
    const w = await world();
    const p2 = await createProject(w.tenant);
    const hidden = await createProject(w.tenant);
    const a = await createAsset(w.tenant, w.projectId, w.globalConn);
    const b = await createAsset(w.tenant, p2, w.globalConn);
    const h = await createAsset(w.tenant, hidden, w.globalConn);
    const other = await world();
    const o = await createAsset(other.tenant, other.projectId, other.globalConn);
    const editor = await user(w.tenant, [
      [w.projectId, "PROJECT_EDITOR"],
      [p2, "PROJECT_VIEWER"],
    ]);
    const url = `${w.path}/${a.id}/lineage`;
    const ok = await call("PUT", url, { as: editor.as, body: { children: [String(b.id)] } });
    expect(ok.status).toBe(200);
    const bad = await call("PUT", url, {
      as: editor.as,
      body: { parents: [String(h.id), String(o.id), String(a.id), "999999999"], children: [String(b.id)] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([
      { path: "body.parents.0", message: "no such asset" },
      { path: "body.parents.1", message: "no such asset" },
      { path: "body.parents.2", message: "an asset cannot be linked to itself" },
      { path: "body.parents.3", message: "no such asset" },
    ]);
    const loop = await call("PUT", url, { as: editor.as, body: { parents: [String(b.id)], children: [String(b.id)] } });
    expect(paths(loop)).toEqual(["body.children.0"]);
    const malformed = await call("PUT", url, { as: editor.as, body: { parents: ["x1"], other: [] } });
    expect(paths(malformed)).toEqual(expect.arrayContaining(["body.parents.0", "body"]));
    // Nothing changed by the refused calls.
    const now = await call("GET", `${w.path}/${a.id}?with_lineage=true`, { as: admin });
    expect(now.body).toMatchObject({ parents: [], children: [String(b.id)] });
  });
});

describe("assets: move", () => {
  async function moveWorld() {
    const w = await world();
    const target = await createProject(w.tenant);
    const move = (body: Record<string, unknown>, as: Credential = admin) =>
      call("POST", `${assetsPath(w.tenant, target)}/move`, { as, body: { source_project_id: w.projectId, ...body } });
    return { ...w, target, move };
  }
  const projectOf = async (id: number) => (await assetRow(id))!.project_id;

  it("moves assets on GLOBAL connections, keeping the connections", async () => {
    const w = await moveWorld();
    const a = await createAsset(w.tenant, w.projectId, w.globalConn);
    const b = await createAsset(w.tenant, w.projectId, w.globalConn);
    const res = await w.move({ source_asset_ids: [String(a.id), String(b.id)] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String), assets: [String(a.id), String(b.id)] });
    const moved = await call("GET", `${assetsPath(w.tenant, w.target)}/${a.id}`, { as: admin });
    expect(moved.body).toEqual({ ...a, project_id: w.target });
    expect((await call("GET", `${w.path}/${a.id}`, { as: admin })).status).toBe(404);
    expect(await projectOf(b.id)).toBe(w.target);
  });

  it("requires target_connection_id for an asset on a PROJECT connection, moving none", async () => {
    const w = await moveWorld();
    const g = await createAsset(w.tenant, w.projectId, w.globalConn);
    const p = await createAsset(w.tenant, w.projectId, w.projectConn);
    const res = await w.move({ source_asset_ids: [String(g.id), String(p.id)] });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { path: "body.target_connection_id", message: expect.stringMatching(new RegExp(`required: asset ${p.id}`)) },
    ]);
    expect([await projectOf(g.id), await projectOf(p.id)]).toEqual([w.projectId, w.projectId]);
  });

  it("moves to a target connection of the same type, visible from the target project", async () => {
    const w = await moveWorld();
    const a = await createAsset(w.tenant, w.projectId, w.projectConn);
    const targetConn = await insertConnection(w.tenant, { projectId: w.target, type: "DELTALAKE", dbType: "tgt" });
    const res = await w.move({ source_asset_ids: [String(a.id)], target_connection_id: targetConn });
    expect(res.status).toBe(200);
    const moved = await call("GET", `${assetsPath(w.tenant, w.target)}/${a.id}`, { as: admin });
    expect(moved.body).toMatchObject({ project_id: w.target, connection_id: targetConn, db_type: "tgt" });
  });

  it("refuses a target connection of another type or not visible from the target, moving none", async () => {
    const w = await moveWorld();
    const a = await createAsset(w.tenant, w.projectId, w.globalConn);
    const snow = await insertConnection(w.tenant, { projectId: null, type: "SNOWFLAKE" });
    const b = await createAsset(w.tenant, w.projectId, snow, { type: "SNOWFLAKE" });
    const ids = [String(a.id), String(b.id)];
    // Same type as a, not as b.
    const targetConn = await insertConnection(w.tenant, { projectId: w.target, type: "DELTALAKE" });
    let res = await w.move({ source_asset_ids: ids, target_connection_id: targetConn });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { path: "body.target_connection_id", message: `is a DELTALAKE connection; asset ${b.id} is SNOWFLAKE` },
    ]);
    // The source project's own connection is not visible from the target.
    res = await w.move({ source_asset_ids: [String(a.id)], target_connection_id: w.projectConn });
    expect(res.body.errors).toEqual([
      { path: "body.target_connection_id", message: "no such connection in the target project" },
    ]);
    expect([await projectOf(a.id), await projectOf(b.id)]).toEqual([w.projectId, w.projectId]);
  });

  it("answers 404 for ids that are not assets of the source project, moving none", async () => {
    const w = await moveWorld();
    const a = await createAsset(w.tenant, w.projectId, w.globalConn);
    const elsewhere = await createAsset(w.tenant, w.target, w.globalConn);
    const res = await w.move({ source_asset_ids: [String(a.id), String(elsewhere.id), "999999999"] });
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain(`${elsewhere.id}, 999999999`);
    expect(await projectOf(a.id)).toBe(w.projectId);
    const bad = await w.move({ source_asset_ids: [] });
    expect(paths(bad)).toEqual(["body.source_asset_ids"]);
    const notString = await w.move({ source_asset_ids: [a.id] });
    expect(paths(notString)).toEqual(["body.source_asset_ids.0"]);
  });

  it("requires PROJECT_EDITOR in both projects", async () => {
    const w = await moveWorld();
    const a = await createAsset(w.tenant, w.projectId, w.globalConn);
    const body = { source_asset_ids: [String(a.id)] };
    const viewerInTarget = await user(w.tenant, [
      [w.projectId, "PROJECT_EDITOR"],
      [w.target, "PROJECT_VIEWER"],
    ]);
    expect((await w.move(body, viewerInTarget.as)).status).toBe(403);
    const notInTarget = await user(w.tenant, [[w.projectId, "PROJECT_EDITOR"]]);
    expect((await w.move(body, notInTarget.as)).status).toBe(404);
    const viewerInSource = await user(w.tenant, [
      [w.projectId, "PROJECT_VIEWER"],
      [w.target, "PROJECT_EDITOR"],
    ]);
    expect((await w.move(body, viewerInSource.as)).status).toBe(403);
    const notInSource = await user(w.tenant, [[w.target, "PROJECT_EDITOR"]]);
    expect((await w.move(body, notInSource.as)).status).toBe(404);
    expect(await projectOf(a.id)).toBe(w.projectId);
    const both = await user(w.tenant, [
      [w.projectId, "PROJECT_EDITOR"],
      [w.target, "PROJECT_EDITOR"],
    ]);
    expect((await w.move(body, both.as)).status).toBe(200);
    expect(await projectOf(a.id)).toBe(w.target);
  });
});
