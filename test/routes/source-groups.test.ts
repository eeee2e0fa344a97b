import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { admin, type Credential, call } from "../support/api";
import { assetRow, assetsPath, countRows, createAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { insertConnection } from "../support/connections";
import { createProject, projectMember } from "../support/projects";
import { createTenant, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const v2 = (t: string) => `/api/backend/v2/${t}/configuration`;
const groupsPath = (t: string, projectId: number) => `${v2(t)}/projects/${projectId}/source_groups`;
const paths = (res: { body: { errors?: { path: string }[] } }) => (res.body.errors ?? []).map((e) => e.path);
const SNOWFLAKE = { database: "DW", schema: "PUBLIC" };

/** A mark in the asset's object (its history lives there: metric points, alerts, DQ scores). */
async function markHistory(tenant: string, assetId: number) {
  await runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) => {
    state.storage.sql.exec("INSERT OR REPLACE INTO state (key, value) VALUES ('test_mark', '1')");
  });
}

/** Whether the asset's object still holds the mark (deleting the asset makes it forget everything). */
function historyKept(tenant: string, assetId: number): Promise<boolean> {
  return runInDurableObject(
    assetMonitor(env, tenant, assetId),
    (_o, state) => state.storage.sql.exec("SELECT 1 FROM state WHERE key = 'test_mark'").toArray().length > 0,
  );
}

/** A tenant with one project, a GLOBAL and a PROJECT SNOWFLAKE connection. */
async function world() {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const globalConn = await insertConnection(tenant, { projectId: null, type: "SNOWFLAKE", dbType: "snowflake" });
  const projectConn = await insertConnection(tenant, { projectId, type: "SNOWFLAKE", dbType: "snowflake-eu" });
  return { tenant, projectId, globalConn, projectConn, path: groupsPath(tenant, projectId) };
}

async function createGroup(
  tenant: string,
  projectId: number,
  connectionId: number,
  overrides: Record<string, unknown> = {},
  as: Credential = admin,
) {
  const res = await call("POST", groupsPath(tenant, projectId), {
    as,
    body: {
      name: unique("group"),
      type: "SNOWFLAKE",
      connection_id: connectionId,
      payload: SNOWFLAKE,
      assets: [
        { name: "orders", table_or_file_name: "ORDERS" },
        { name: "customers", table_or_file_name: "CUSTOMERS", description: "All customers" },
      ],
      ...overrides,
    },
  });
  if (res.status !== 201) throw new Error(`create group: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { group_id: number; assets: { id: string; analyze_job_id: string }[] };
}

async function user(tenant: string, roles: Array<[number, string]>): Promise<Credential> {
  const email = `${unique("u")}@example.com`;
  await tenantMember(tenant, email, "TENANT_MEMBER");
  for (const [projectId, role] of roles) await projectMember(tenant, projectId, email, role);
  return userToken(email);
}

const groupRow = (id: number) => env.DB.prepare("select * from source_groups where id = ?").bind(id).first<any>();
const groupAssets = async (groupId: number) =>
  (await env.DB.prepare("select * from assets where source_group_id = ? order by id").bind(groupId).all<any>()).results;

describeAuthMatrix(
  "source groups",
  async (w) => {
    const connectionId = await insertConnection(w.tenant, { projectId: null, type: "SNOWFLAKE" });
    const group = await createGroup(w.tenant, w.projectId, connectionId);
    return { connectionId, groupId: group.group_id };
  },
  [
    {
      method: "POST",
      path: (w) => groupsPath(w.tenant, w.projectId),
      body: (_w, x) => ({ name: "g", type: "SNOWFLAKE", connection_id: x.connectionId, payload: SNOWFLAKE }),
      role: "PROJECT_EDITOR",
    },
    {
      method: "PUT",
      path: (w, x) => `${groupsPath(w.tenant, w.projectId)}/${x.groupId}`,
      body: () => ({ description: "x" }),
      role: "PROJECT_EDITOR",
    },
    {
      method: "POST",
      path: (w) => `${groupsPath(w.tenant, w.projectId)}/move`,
      body: (w, x) => ({ source_project_id: w.projectId, source_group_ids: [x.groupId] }),
      role: "PROJECT_EDITOR",
    },
    { method: "GET", path: (w) => groupsPath(w.tenant, w.projectId), role: "PROJECT_VIEWER" },
    { method: "GET", path: (w) => `${v2(w.tenant)}/source_groups`, role: "TENANT_MEMBER" },
    { method: "DELETE", path: (w, x) => `${groupsPath(w.tenant, w.projectId)}/${x.groupId}`, role: "PROJECT_EDITOR" },
    {
      method: "POST",
      path: (w, x) => `${groupsPath(w.tenant, w.projectId)}/${x.groupId}/list`,
      role: "PROJECT_VIEWER",
    },
  ],
);

describe("source groups: create", () => {
  it("reads scheduled_upload as a string, empty when unset (spec 2.4 types it string)", async () => {
    const w = await world();
    const group = await createGroup(w.tenant, w.projectId, w.globalConn);
    const res = await call("GET", w.path, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body.find((g: { id: number }) => g.id === group.group_id).scheduled_upload).toBe("");
  });

  it("creates the group, one asset per entry and a QUEUED ANALYZE job for each, with deprecation headers", async () => {
    const w = await world();
    const res = await call("POST", w.path, {
      as: admin,
      body: {
        name: "warehouse",
        description: "DW tables",
        type: "SNOWFLAKE",
        connection_id: w.globalConn,
        payload: SNOWFLAKE,
        options: { only_light_scan: true },
        scheduled_upload: "0 6 * * 1-5",
        assets: [
          { name: "orders", table_or_file_name: "ORDERS" },
          { name: "customers", table_or_file_name: "CUSTOMERS", description: "All customers" },
        ],
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      group_id: expect.any(Number),
      assets: [
        { id: expect.stringMatching(/^\d+$/), analyze_job_id: expect.stringMatching(/^job_[0-9A-Za-z]{20}$/) },
        { id: expect.stringMatching(/^\d+$/), analyze_job_id: expect.stringMatching(/^job_[0-9A-Za-z]{20}$/) },
      ],
    });
    expect(res.headers.get("deprecation")).toMatch(/^@\d+$/);
    expect(res.headers.get("link")).toBe(
      `</api/backend/${w.tenant}/configuration/projects/${w.projectId}/assets>; rel="successor-version"`,
    );

    const [orders, customers] = res.body.assets;
    const asset = await call("GET", `${assetsPath(w.tenant, w.projectId)}/${orders.id}`, { as: admin });
    expect(asset.body).toMatchObject({
      name: "orders",
      description: "",
      type: "SNOWFLAKE",
      connection_id: w.globalConn,
      db_type: "snowflake",
      payload: { database: "DW", schema: "PUBLIC", table: "ORDERS" },
      options: { only_light_scan: "true" },
    });
    expect((await assetRow(Number(customers.id)))!.description).toBe("All customers");
    expect((await assetRow(Number(orders.id)))!.source_group_id).toBe(res.body.group_id);

    const job = await env.DB.prepare("select * from scan_jobs where id = ?").bind(orders.analyze_job_id).first<any>();
    expect(job).toMatchObject({
      tenant_id: w.tenant,
      asset_id: Number(orders.id),
      kind: "ANALYZE",
      status: "QUEUED",
      trigger: "source_group",
    });

    const group = await groupRow(res.body.group_id);
    expect(group.scheduled_upload).toBe("0 6 * * 1-5");
    const next = new Date(group.next_run_at);
    expect(next.getUTCHours()).toBe(6);
    expect([1, 2, 3, 4, 5]).toContain(next.getUTCDay());
  });

  it("creates a group without assets, for each type with its payload", async () => {
    const w = await world();
    const payloads: Record<string, object> = {
      SNOWFLAKE,
      REDSHIFT: { database: "dev", schema: "public" },
      BIGQUERY: { dataset: "sales" },
      DELTALAKE: { catalog: "main", schema: "sales" },
    };
    for (const [type, payload] of Object.entries(payloads)) {
      const conn = await insertConnection(w.tenant, { projectId: null, type });
      const res = await call("POST", w.path, { as: admin, body: { name: type, type, connection_id: conn, payload } });
      expect(res.status, type).toBe(201);
      expect(res.body.assets).toEqual([]);
    }
  });

  it.each([
    [{ type: "S3" }, ["body.type"]],
    [{ payload: { database: "DW" } }, ["body.payload.schema"]],
    [{ payload: { ...SNOWFLAKE, table: "T" } }, ["body.payload"]],
    [{ options: { only_light_scan: "true" } }, ["body.options.only_light_scan"]],
    [{ options: { other: 1 } }, ["body.options"]],
    [{ scheduled_upload: "every day" }, ["body.scheduled_upload"]],
    [{ scheduled_upload: "0 0 30 2 *" }, ["body.scheduled_upload"]],
    [{ assets: [{ name: "a" }] }, ["body.assets.0.table_or_file_name"]],
    [{ assets: [{ name: "a", table_or_file_name: "A", extra: 1 }] }, ["body.assets.0"]],
    [{ connection_id: 999_999_999 }, ["body.connection_id"]],
  ])("refuses %j with 400 at %j, writing nothing", async (override, expected) => {
    const w = await world();
    const res = await call("POST", w.path, {
      as: admin,
      body: {
        name: "g",
        type: "SNOWFLAKE",
        connection_id: w.globalConn,
        payload: SNOWFLAKE,
        assets: [{ name: "a", table_or_file_name: "A" }],
        ...override,
      },
    });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(expected);
    expect(await countRows("source_groups", "project_id = ?", w.projectId)).toBe(0);
    expect(await countRows("assets", "project_id = ?", w.projectId)).toBe(0);
  });

  it("refuses a light scan for REDSHIFT, a connection of another type or of another project", async () => {
    const w = await world();
    const redshift = await insertConnection(w.tenant, { projectId: null, type: "REDSHIFT" });
    let res = await call("POST", w.path, {
      as: admin,
      body: {
        name: "g",
        type: "REDSHIFT",
        connection_id: redshift,
        payload: { database: "d", schema: "s" },
        options: { only_light_scan: true },
      },
    });
    expect(paths(res)).toEqual(["body.options.only_light_scan"]);
    // only_light_scan false is fine for any type.
    res = await call("POST", w.path, {
      as: admin,
      body: {
        name: "g",
        type: "REDSHIFT",
        connection_id: redshift,
        payload: { database: "d", schema: "s" },
        options: { only_light_scan: false },
      },
    });
    expect(res.status).toBe(201);
    res = await call("POST", w.path, {
      as: admin,
      body: { name: "g", type: "SNOWFLAKE", connection_id: redshift, payload: SNOWFLAKE },
    });
    expect(res.body.errors).toEqual([{ path: "body.connection_id", message: expect.stringMatching(/REDSHIFT/) }]);
    const elsewhere = await insertConnection(w.tenant, { projectId: await createProject(w.tenant), type: "SNOWFLAKE" });
    res = await call("POST", w.path, {
      as: admin,
      body: { name: "g", type: "SNOWFLAKE", connection_id: elsewhere, payload: SNOWFLAKE },
    });
    expect(res.body.errors).toEqual([{ path: "body.connection_id", message: "no such connection in this project" }]);
  });
});

describe("source groups: update", () => {
  it("adds and deletes assets and returns the added ones with their ANALYZE jobs", async () => {
    const w = await world();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn);
    const url = `${w.path}/${g.group_id}`;
    const [gone, kept] = [Number(g.assets[0]!.id), Number(g.assets[1]!.id)];
    await markHistory(w.tenant, gone);
    await markHistory(w.tenant, kept);
    const res = await call("PUT", url, {
      as: admin,
      body: {
        description: "now with items",
        assets_to_add: [{ name: "items", table_or_file_name: "ITEMS" }],
        assets_to_delete: [g.assets[0]!.id],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      assets: [{ id: expect.stringMatching(/^\d+$/), analyze_job_id: expect.stringMatching(/^job_/) }],
    });
    expect(res.headers.get("deprecation")).toMatch(/^@\d+$/);
    const names = await call("POST", `${url}/list`, { as: admin });
    expect(names.body).toEqual(["customers", "items"]);
    // The deleted asset's object forgets its history (after the answer); the kept one's stays.
    await vi.waitFor(async () => expect(await historyKept(w.tenant, gone)).toBe(false));
    expect(await historyKept(w.tenant, kept)).toBe(true);
    expect(await assetRow(Number(g.assets[0]!.id))).toBeNull();
    const added = await assetRow(Number(res.body.assets[0].id));
    expect(JSON.parse(added!.payload as string)).toEqual({ ...SNOWFLAKE, table: "ITEMS" });
    expect((await groupRow(g.group_id)).description).toBe("now with items");
    expect(await countRows("scan_jobs", "id = ?", res.body.assets[0].analyze_job_id)).toBe(1);
  });

  it("carries a new payload, options and connection to every asset of the group", async () => {
    const w = await world();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn, { options: { only_light_scan: true } });
    // An option set on one asset through the assets API survives the group change.
    await call("PUT", `${assetsPath(w.tenant, w.projectId)}/${g.assets[1]!.id}`, {
      as: admin,
      body: { options: { only_light_scan: "true", limit: 10 } },
    });
    const res = await call("PUT", `${w.path}/${g.group_id}`, {
      as: admin,
      body: { payload: { database: "DW2", schema: "S" }, options: {}, connection_id: w.projectConn },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ assets: [] });
    const rows = await groupAssets(g.group_id);
    expect(rows.map((r: any) => [JSON.parse(r.payload), JSON.parse(r.options), r.connection_id, r.db_type])).toEqual([
      [{ database: "DW2", schema: "S", table: "ORDERS" }, {}, w.projectConn, "snowflake-eu"],
      [{ database: "DW2", schema: "S", table: "CUSTOMERS" }, { limit: 10 }, w.projectConn, "snowflake-eu"],
    ]);

    // A type change needs a payload and a connection for it; then every asset follows.
    const bq = await insertConnection(w.tenant, { projectId: null, type: "BIGQUERY", dbType: "bigquery" });
    const before = await groupAssets(g.group_id);
    let bad = await call("PUT", `${w.path}/${g.group_id}`, { as: admin, body: { type: "BIGQUERY" } });
    expect(paths(bad)).toEqual(expect.arrayContaining(["body.payload.dataset", "body.type"]));
    bad = await call("PUT", `${w.path}/${g.group_id}`, {
      as: admin,
      body: { type: "BIGQUERY", payload: { dataset: "d" } },
    });
    expect(paths(bad)).toEqual(["body.type"]);
    expect(await groupAssets(g.group_id)).toEqual(before);
    const ok = await call("PUT", `${w.path}/${g.group_id}`, {
      as: admin,
      body: { type: "BIGQUERY", payload: { dataset: "d" }, connection_id: bq, options: { only_light_scan: false } },
    });
    expect(ok.status).toBe(200);
    const after = await groupAssets(g.group_id);
    expect(after.map((r: any) => [r.type, JSON.parse(r.payload), JSON.parse(r.options).only_light_scan])).toEqual([
      ["BIGQUERY", { dataset: "d", table: "ORDERS" }, "false"],
      ["BIGQUERY", { dataset: "d", table: "CUSTOMERS" }, "false"],
    ]);
    const list = await call("GET", w.path, { as: admin });
    expect(list.body[0]).toMatchObject({ type: "BIGQUERY", connection_id: bq, db_type: "bigquery" });
  });

  it("refuses to delete assets that are not in the group, changing nothing", async () => {
    const w = await world();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn);
    const loose = await createAsset(w.tenant, w.projectId, w.globalConn, {
      type: "SNOWFLAKE",
      payload: { ...SNOWFLAKE, table: "T" },
    });
    const res = await call("PUT", `${w.path}/${g.group_id}`, {
      as: admin,
      body: {
        name: "renamed",
        assets_to_add: [{ name: "x", table_or_file_name: "X" }],
        assets_to_delete: [g.assets[0]!.id, String(loose.id), "999999999"],
      },
    });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(["body.assets_to_delete.1", "body.assets_to_delete.2"]);
    expect((await groupAssets(g.group_id)).map((a: any) => a.name)).toEqual(["orders", "customers"]);
    expect((await groupRow(g.group_id)).name).not.toBe("renamed");
  });

  it("sets and clears the schedule", async () => {
    const w = await world();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn);
    await call("PUT", `${w.path}/${g.group_id}`, { as: admin, body: { scheduled_upload: "*/10 * * * *" } });
    let row = await groupRow(g.group_id);
    expect(row.scheduled_upload).toBe("*/10 * * * *");
    expect(new Date(row.next_run_at).getUTCMinutes() % 10).toBe(0);
    expect(new Date(row.next_run_at).getTime()).toBeGreaterThan(Date.now());
    await call("PUT", `${w.path}/${g.group_id}`, { as: admin, body: { scheduled_upload: null } });
    row = await groupRow(g.group_id);
    expect([row.scheduled_upload, row.next_run_at]).toEqual([null, null]);
  });
});

describe("source groups: read and delete", () => {
  it("lists groups with exactly the fields of 2.4, per project and across readable projects, paged", async () => {
    const w = await world();
    const p2 = await createProject(w.tenant);
    const hidden = await createProject(w.tenant);
    const a = await createGroup(w.tenant, w.projectId, w.globalConn, { name: "a", scheduled_upload: "0 1 * * *" });
    const b = await createGroup(w.tenant, p2, w.globalConn, { name: "b" });
    const h = await createGroup(w.tenant, hidden, w.globalConn, { name: "h" });
    const list = await call("GET", w.path, { as: admin });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([
      {
        id: a.group_id,
        name: "a",
        description: "",
        type: "SNOWFLAKE",
        connection_id: w.globalConn,
        db_type: "snowflake",
        project_id: w.projectId,
        scheduled_upload: "0 1 * * *",
      },
    ]);
    expect(list.headers.get("link")).toBe(
      `</api/backend/${w.tenant}/configuration/projects/${w.projectId}/assets>; rel="successor-version"`,
    );
    const viewer = await user(w.tenant, [
      [w.projectId, "PROJECT_VIEWER"],
      [p2, "PROJECT_VIEWER"],
    ]);
    const mine = await call("GET", `${v2(w.tenant)}/source_groups`, { as: viewer });
    expect(mine.body.map((g: any) => g.id)).toEqual([a.group_id, b.group_id]);
    const all = await call("GET", `${v2(w.tenant)}/source_groups?limit=2`, { as: admin });
    expect(all.body.map((g: any) => g.id)).toEqual([a.group_id, b.group_id]);
    // The page's Link names the next page, and the successor of the deprecated endpoint.
    const link = all.headers.get("link")!;
    expect(link).toContain(`</api/backend/${w.tenant}/configuration/assets>; rel="successor-version"`);
    const next = /<([^>]+)>; rel="next"/.exec(link)![1]!;
    expect((await call("GET", next, { as: admin })).body.map((g: any) => g.id)).toEqual([h.group_id]);
  });

  it("lists the names of a group's assets", async () => {
    const w = await world();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn);
    const res = await call("POST", `${w.path}/${g.group_id}/list`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(["orders", "customers"]);
  });

  it("deletes a group with its assets; another project's or tenant's group is a 404", async () => {
    const w = await world();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn);
    const p2 = await createProject(w.tenant);
    const other = await world();
    for (const path of [`${groupsPath(w.tenant, p2)}/${g.group_id}`, `${other.path}/${g.group_id}`]) {
      expect((await call("DELETE", path, { as: admin })).status).toBe(404);
      expect((await call("PUT", path, { as: admin, body: { name: "x" } })).status).toBe(404);
      expect((await call("POST", `${path}/list`, { as: admin })).status).toBe(404);
    }
    const viewer = await user(w.tenant, [[w.projectId, "PROJECT_VIEWER"]]);
    expect((await call("DELETE", `${w.path}/${g.group_id}`, { as: viewer })).status).toBe(403);
    expect(await countRows("assets", "source_group_id = ?", g.group_id)).toBe(2);
    const ids = g.assets.map((a: { id: string }) => Number(a.id));
    for (const id of ids) await markHistory(w.tenant, id);

    const res = await call("DELETE", `${w.path}/${g.group_id}`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.stringContaining(String(g.group_id)) });
    expect(await groupRow(g.group_id)).toBeNull();
    expect(await countRows("assets", "source_group_id = ?", g.group_id)).toBe(0);
    // Its assets' objects forget their history (after the answer).
    for (const id of ids) await vi.waitFor(async () => expect(await historyKept(w.tenant, id)).toBe(false));
  });
});

describe("source groups: move", () => {
  async function moveWorld() {
    const w = await world();
    const target = await createProject(w.tenant);
    const move = (body: Record<string, unknown>, as: Credential = admin) =>
      call("POST", `${groupsPath(w.tenant, target)}/move`, { as, body: { source_project_id: w.projectId, ...body } });
    return { ...w, target, move };
  }

  it("moves groups on GLOBAL connections with all their assets", async () => {
    const w = await moveWorld();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn);
    const res = await w.move({ source_group_ids: [g.group_id] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: expect.any(String),
      source_groups: [g.group_id],
      assets: g.assets.map((a) => a.id),
    });
    expect((await groupRow(g.group_id)).project_id).toBe(w.target);
    expect((await groupAssets(g.group_id)).map((a: any) => [a.project_id, a.connection_id])).toEqual([
      [w.target, w.globalConn],
      [w.target, w.globalConn],
    ]);
    expect((await call("POST", `${groupsPath(w.tenant, w.target)}/${g.group_id}/list`, { as: admin })).status).toBe(
      200,
    );
  });

  it("requires a target connection for PROJECT connections, of the right type, moving nothing otherwise", async () => {
    const w = await moveWorld();
    const global = await createGroup(w.tenant, w.projectId, w.globalConn);
    const scoped = await createGroup(w.tenant, w.projectId, w.projectConn);
    const ids = [global.group_id, scoped.group_id];
    let res = await w.move({ source_group_ids: ids });
    expect(res.status).toBe(400);
    expect(paths(res)).toEqual(["body.target_connection_id", "body.target_connection_id", "body.target_connection_id"]);
    const redshift = await insertConnection(w.tenant, { projectId: w.target, type: "REDSHIFT" });
    res = await w.move({ source_group_ids: ids, target_connection_id: redshift });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/is a REDSHIFT connection; source group \d+ is SNOWFLAKE/);
    res = await w.move({ source_group_ids: ids, target_connection_id: w.projectConn });
    expect(res.body.errors).toEqual([
      { path: "body.target_connection_id", message: "no such connection in the target project" },
    ]);
    res = await w.move({ source_group_ids: [...ids, 999_999_999] });
    expect(res.status).toBe(404);
    for (const id of ids) expect((await groupRow(id)).project_id).toBe(w.projectId);
    expect(await countRows("assets", "project_id = ?", w.target)).toBe(0);

    const target = await insertConnection(w.tenant, { projectId: w.target, type: "SNOWFLAKE", dbType: "tgt" });
    res = await w.move({ source_group_ids: ids, target_connection_id: target });
    expect(res.status).toBe(200);
    const rows = [...(await groupAssets(global.group_id)), ...(await groupAssets(scoped.group_id))];
    expect(rows.every((r: any) => r.project_id === w.target && r.connection_id === target && r.db_type === "tgt")).toBe(
      true,
    );
    expect((await groupRow(scoped.group_id)).connection_id).toBe(target);
  });

  it("requires PROJECT_EDITOR in both projects", async () => {
    const w = await moveWorld();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn);
    const body = { source_group_ids: [g.group_id] };
    const viewerInTarget = await user(w.tenant, [
      [w.projectId, "PROJECT_EDITOR"],
      [w.target, "PROJECT_VIEWER"],
    ]);
    expect((await w.move(body, viewerInTarget)).status).toBe(403);
    const notInSource = await user(w.tenant, [[w.target, "PROJECT_EDITOR"]]);
    expect((await w.move(body, notInSource)).status).toBe(404);
    expect((await groupRow(g.group_id)).project_id).toBe(w.projectId);
  });

  it("detaches an asset moved alone from its group", async () => {
    const w = await moveWorld();
    const g = await createGroup(w.tenant, w.projectId, w.globalConn);
    const res = await call("POST", `${assetsPath(w.tenant, w.target)}/move`, {
      as: admin,
      body: { source_project_id: w.projectId, source_asset_ids: [g.assets[0]!.id] },
    });
    expect(res.status).toBe(200);
    expect((await assetRow(Number(g.assets[0]!.id)))!.source_group_id).toBeNull();
    expect((await call("POST", `${w.path}/${g.group_id}/list`, { as: admin })).body).toEqual(["customers"]);
  });
});

describe("source groups: OpenAPI", () => {
  it("documents every group route as deprecated, and the asset routes", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const groups = Object.entries(doc.paths).filter(([p]) => p.includes("/source_groups"));
    expect(groups.length).toBe(5);
    for (const [, ops] of groups) for (const op of Object.values(ops as object)) expect(op.deprecated).toBe(true);
    const assetOps = doc.paths["/api/backend/{tenant}/configuration/projects/{projectId}/assets/{assetId}"];
    expect(Object.keys(assetOps).sort()).toEqual(["delete", "get", "put"]);
    expect(doc.components.schemas.Asset.properties).toHaveProperty("scheduled_upload");
    expect(doc.components.schemas.CreateSourceGroup.properties.scheduled_upload).toBeDefined();
  });
});
