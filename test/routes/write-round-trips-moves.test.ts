/**
 * Issue 40, point 3, for the writes that move, link or create several rows (asset and source-group
 * moves, lineage, source-group creates and updates): one sequential D1 round trip for the write,
 * both projects' checks and every check of the move as conditions of its statements; the same
 * answers as before, a refused caller changes nothing and is audited, a stranger gets a 404.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admin, type Credential, call } from "../support/api";
import { assetsPath, createAsset } from "../support/assets";
import { createConnection, insertConnection } from "../support/connections";
import { seedIncident } from "../support/incidents";
import { createProject, projectMember } from "../support/projects";
import { audited, sequential } from "../support/round-trips";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

/** A user of the tenant with a role in each project given. */
async function member(tenant: string, roles: [number, string][]): Promise<Credential> {
  const email = `${unique("user")}@example.com`;
  await tenantMember(tenant, email, "TENANT_MEMBER");
  for (const [projectId, role] of roles) await projectMember(tenant, projectId, email, role);
  return userToken(email);
}

/** Callers refused a move from `source` to `target`, with their answer: a viewer of either project, a stranger to either. */
async function refusedMovers(tenant: string, source: number, target: number): Promise<[Credential, number][]> {
  return [
    [
      await member(tenant, [
        [source, "PROJECT_EDITOR"],
        [target, "PROJECT_VIEWER"],
      ]),
      403,
    ],
    [await member(tenant, [[source, "PROJECT_EDITOR"]]), 404],
    [
      await member(tenant, [
        [source, "PROJECT_VIEWER"],
        [target, "PROJECT_EDITOR"],
      ]),
      403,
    ],
    [await member(tenant, [[target, "PROJECT_EDITOR"]]), 404],
    [await tenantKey(await createTenant()), 404],
  ];
}

/** Project and connection of each asset, and of each incident, as stored. */
async function placed(assetIds: number[], incidentIds: number[]) {
  const a = await env.DB.prepare(
    `select id, project_id, connection_id, source_group_id from assets where id in (select value from json_each(?)) order by id`,
  )
    .bind(JSON.stringify(assetIds))
    .all();
  const i = await env.DB.prepare(
    `select id, project_id, connection_id from incidents where id in (select value from json_each(?)) order by id`,
  )
    .bind(JSON.stringify(incidentIds))
    .all();
  return { assets: a.results, incidents: i.results };
}

describe("POST assets/move in one sequential D1 round trip", () => {
  it("moves assets and their incidents for an editor of both projects; every refusal moves nothing", async () => {
    const tenant = await createTenant();
    const source = await createProject(tenant);
    const target = await createProject(tenant);
    const global = await createConnection(tenant, { type: "S3" });
    const own = await createConnection(tenant, { projectId: source, type: "S3" });
    const a = await createAsset(tenant, source, global.id, { type: "S3" });
    const b = await createAsset(tenant, source, global.id, { type: "S3" });
    const p = await createAsset(tenant, source, own.id, { type: "S3" });
    const incident = await seedIncident({ tenant, projectId: source, assetId: a.id, connectionId: global.id });
    const path = `${assetsPath(tenant, target)}/move`;
    const move = (body: Record<string, unknown>, as: Credential = admin) =>
      call("POST", path, { as, body: { source_project_id: source, ...body } });
    const ids = [String(a.id), String(b.id)];
    const before = await placed([a.id, b.id, p.id], [incident]);
    const refusals = await refusedMovers(tenant, source, target);
    for (const [as, status] of refusals) expect((await move({ source_asset_ids: ids }, as)).status).toBe(status);
    // Checks of the move: an asset on a PROJECT connection, ids not of the source, a connection of another type.
    const scoped = await move({ source_asset_ids: [...ids, String(p.id)] });
    expect(scoped.status).toBe(400);
    expect(scoped.body.errors).toEqual([
      {
        path: "body.target_connection_id",
        message: `required: asset ${p.id} uses a PROJECT connection, which cannot follow it to another project`,
      },
    ]);
    const missing = await move({ source_asset_ids: [...ids, "999999999"] });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain(`999999999 of project ${source}`);
    const snowflake = await insertConnection(tenant, { projectId: target, type: "SNOWFLAKE" });
    const wrongType = await move({ source_asset_ids: ids, target_connection_id: snowflake });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors).toEqual([
      { path: "body.target_connection_id", message: `is a SNOWFLAKE connection; asset ${a.id} is S3` },
      { path: "body.target_connection_id", message: `is a SNOWFLAKE connection; asset ${b.id} is S3` },
    ]);
    const hidden = await move({ source_asset_ids: ids, target_connection_id: own.id });
    expect(hidden.body.errors).toEqual([
      { path: "body.target_connection_id", message: "no such connection in the target project" },
    ]);
    expect(await placed([a.id, b.id, p.id], [incident])).toEqual(before);
    // An editor of both: one round trip, the assets and their incident moved.
    const editor = await member(tenant, [
      [source, "PROJECT_EDITOR"],
      [target, "PROJECT_EDITOR"],
    ]);
    const moved = await move({ source_asset_ids: [...ids, String(a.id)] }, editor);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toEqual({ message: `2 asset(s) moved to project ${target}`, assets: ids });
    expect(sequential(moved), moved.headers.get("server-timing") ?? "").toBe(1);
    const after = await placed([a.id, b.id, p.id], [incident]);
    expect(after.assets.map((r) => r.project_id)).toEqual([target, target, source]);
    expect(after.incidents.map((r) => r.project_id)).toEqual([target]);
    // To a connection of the target: its id and db_type follow, in the same round trip.
    const tgt = await insertConnection(tenant, { projectId: source, type: "S3", dbType: "tgt" });
    const back = await call("POST", `${assetsPath(tenant, source)}/move`, {
      as: admin,
      body: { source_project_id: target, source_asset_ids: [String(a.id)], target_connection_id: tgt },
    });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(sequential(back)).toBe(1);
    const row = (await call("GET", `${assetsPath(tenant, source)}/${a.id}`, { as: admin })).body;
    expect(row).toMatchObject({ project_id: source, connection_id: tgt, db_type: "tgt" });
    expect((await placed([a.id], [incident])).incidents).toEqual([
      { id: incident, project_id: source, connection_id: tgt },
    ]);
    expect(await audited(tenant, "POST", path)).toEqual([200, 400, 400, 400, 403, 403]);
  });
});

describe("source groups created and moved in one sequential D1 round trip", () => {
  const groups = (tenant: string, projectId: number) =>
    `/api/backend/v2/${tenant}/configuration/projects/${projectId}/source_groups`;
  const body = (connection_id: number, name = unique("g")) => ({
    name,
    type: "SNOWFLAKE",
    connection_id,
    payload: { database: "DW", schema: "PUBLIC" },
    assets: [
      { name: "orders", table_or_file_name: "ORDERS" },
      { name: "refunds", table_or_file_name: "REFUNDS" },
    ],
  });
  const stored = async (tenant: string) => {
    const count = async (table: string) =>
      (await env.DB.prepare(`select count(*) as n from ${table} where tenant_id = ?`)
        .bind(tenant)
        .first<{ n: number }>())!.n;
    return { groups: await count("source_groups"), assets: await count("assets"), jobs: await count("scan_jobs") };
  };

  it("POST: the group, its assets and their ANALYZE jobs for an editor; a refused caller or a failed check writes nothing", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const snowflake = await createConnection(tenant, { projectId, type: "SNOWFLAKE" });
    const s3 = await createConnection(tenant, { projectId, type: "S3" });
    const elsewhere = await createConnection(await createTenant(), { type: "SNOWFLAKE" });
    const path = groups(tenant, projectId);
    expect(
      (
        await call("POST", path, {
          as: await member(tenant, [[projectId, "PROJECT_VIEWER"]]),
          body: body(snowflake.id),
        })
      ).status,
    ).toBe(403);
    expect((await call("POST", path, { as: await member(tenant, []), body: body(snowflake.id) })).status).toBe(404);
    expect(
      (await call("POST", path, { as: await tenantKey(await createTenant()), body: body(snowflake.id) })).status,
    ).toBe(404);
    const wrongType = await call("POST", path, { as: admin, body: body(s3.id) });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors).toEqual([
      { path: "body.connection_id", message: "is a S3 connection; the type is SNOWFLAKE" },
    ]);
    const foreign = await call("POST", path, { as: admin, body: body(elsewhere.id) });
    expect(foreign.body.errors).toEqual([
      { path: "body.connection_id", message: "no such connection in this project" },
    ]);
    expect(await stored(tenant)).toEqual({ groups: 0, assets: 0, jobs: 0 });
    const editor = await member(tenant, [[projectId, "PROJECT_EDITOR"]]);
    const made = await call("POST", path, { as: editor, body: body(snowflake.id) });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(sequential(made), made.headers.get("server-timing") ?? "").toBe(1);
    expect(await stored(tenant)).toEqual({ groups: 1, assets: 2, jobs: 2 });
    const names = await call("POST", `${path}/${made.body.group_id}/list`, { as: admin, body: {} });
    expect(names.body).toEqual(["orders", "refunds"]);
    // Each asset's job is its own ANALYZE job, QUEUED, naming the group.
    for (const a of made.body.assets as { id: string; analyze_job_id: string }[]) {
      const job = await env.DB.prepare("select asset_id, kind, status, request from scan_jobs where id = ?")
        .bind(a.analyze_job_id)
        .first<{ asset_id: number; kind: string; status: string; request: string }>();
      expect(job).toMatchObject({ asset_id: Number(a.id), kind: "ANALYZE" });
      expect(JSON.parse(job!.request)).toEqual({ source_group_id: made.body.group_id });
    }
    const asset = await call("GET", `${assetsPath(tenant, projectId)}/${made.body.assets[0].id}`, { as: admin });
    expect(asset.body).toMatchObject({ name: "orders", connection_id: snowflake.id, payload: { table: "ORDERS" } });
    expect(await audited(tenant, "POST", path)).toEqual([201, 400, 400, 403]);
  });

  it("move: groups, their assets and incidents for an editor of both projects; every refusal moves nothing", async () => {
    const tenant = await createTenant();
    const source = await createProject(tenant);
    const target = await createProject(tenant);
    const global = await createConnection(tenant, { type: "SNOWFLAKE" });
    const own = await createConnection(tenant, { projectId: source, type: "SNOWFLAKE" });
    const g = (await call("POST", groups(tenant, source), { as: admin, body: body(global.id) })).body;
    const p = (await call("POST", groups(tenant, source), { as: admin, body: body(own.id) })).body;
    const assetIds = (g.assets as { id: string }[]).map((a) => Number(a.id));
    const incident = await seedIncident({ tenant, projectId: source, assetId: assetIds[0]!, connectionId: global.id });
    const path = `${groups(tenant, target)}/move`;
    const move = (b: Record<string, unknown>, as: Credential = admin) =>
      call("POST", path, { as, body: { source_project_id: source, ...b } });
    const before = await placed(assetIds, [incident]);
    const refusals = await refusedMovers(tenant, source, target);
    for (const [as, status] of refusals)
      expect((await move({ source_group_ids: [g.group_id] }, as)).status).toBe(status);
    const scoped = await move({ source_group_ids: [g.group_id, p.group_id] });
    expect(scoped.status).toBe(400);
    expect(scoped.body.errors.map((e: { message: string }) => e.message)).toEqual([
      `required: source group ${p.group_id} uses a PROJECT connection`,
      ...(p.assets as { id: string }[]).map(
        (a) => `required: asset ${a.id} of source group ${p.group_id} uses a PROJECT connection`,
      ),
    ]);
    const missing = await move({ source_group_ids: [g.group_id, 999_999_999] });
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toContain(`999999999 of project ${source}`);
    expect(await placed(assetIds, [incident])).toEqual(before);
    const editor = await member(tenant, [
      [source, "PROJECT_EDITOR"],
      [target, "PROJECT_EDITOR"],
    ]);
    const moved = await move({ source_group_ids: [g.group_id] }, editor);
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toEqual({
      message: `1 source group(s) moved to project ${target}`,
      source_groups: [g.group_id],
      assets: assetIds.map(String),
    });
    expect(sequential(moved), moved.headers.get("server-timing") ?? "").toBe(1);
    const after = await placed(assetIds, [incident]);
    expect(after.assets.map((r) => [r.project_id, r.source_group_id])).toEqual(
      assetIds.map(() => [target, g.group_id]),
    );
    expect(after.incidents.map((r) => r.project_id)).toEqual([target]);
    expect(await audited(tenant, "POST", path)).toEqual([200, 400, 403, 403]);
  });
});

describe("PUT lineage in one sequential D1 round trip", () => {
  it("links assets the caller can read; a refused caller or an id it cannot read changes nothing", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const readable = await createProject(tenant);
    const hidden = await createProject(tenant);
    const connection = await createConnection(tenant, { type: "S3" });
    const [a, b, c] = await Promise.all(
      [1, 2, 3].map(() => createAsset(tenant, projectId, connection.id, { type: "S3" })),
    );
    const r = await createAsset(tenant, readable, connection.id, { type: "S3" });
    const h = await createAsset(tenant, hidden, connection.id, { type: "S3" });
    const path = `${assetsPath(tenant, projectId)}/${a.id}/lineage`;
    expect((await call("PUT", path, { as: admin, body: { parents: [String(b.id)] } })).status).toBe(200);
    const edges = async () =>
      (
        await env.DB.prepare(
          "select parent_asset_id as p, child_asset_id as c from asset_lineage where tenant_id = ? order by p, c",
        )
          .bind(tenant)
          .all()
      ).results;
    const before = await edges();
    const body = { parents: [String(c.id)], children: [String(r.id)] };
    expect((await call("PUT", path, { as: await member(tenant, [[projectId, "PROJECT_VIEWER"]]), body })).status).toBe(
      403,
    );
    expect((await call("PUT", path, { as: await member(tenant, [[readable, "PROJECT_EDITOR"]]), body })).status).toBe(
      404,
    );
    expect((await call("PUT", path, { as: await tenantKey(await createTenant()), body })).status).toBe(404);
    const other = `${assetsPath(tenant, readable)}/${a.id}/lineage`;
    expect((await call("PUT", other, { as: admin, body })).status).toBe(404);
    const editor = await member(tenant, [
      [projectId, "PROJECT_EDITOR"],
      [readable, "PROJECT_VIEWER"],
    ]);
    const unreadable = await call("PUT", path, {
      as: editor,
      body: { parents: [String(h.id), String(a.id)], children: [String(h.id)] },
    });
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.errors).toEqual([
      { path: "body.parents.0", message: "no such asset" },
      { path: "body.parents.1", message: "an asset cannot be linked to itself" },
      { path: "body.children.0", message: "no such asset" },
    ]);
    expect(await edges()).toEqual(before);
    const linked = await call("PUT", path, { as: editor, body });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body).toMatchObject({
      id: a.id,
      db_type: a.db_type,
      parents: [String(c.id)],
      children: [String(r.id)],
    });
    expect(sequential(linked), linked.headers.get("server-timing") ?? "").toBe(1);
    expect(await edges()).toEqual([
      { p: a.id, c: r.id },
      { p: c.id, c: a.id },
    ]);
    expect(await audited(tenant, "PUT", path)).toEqual([200, 400, 403, 200]);
  });
});

describe("PUT source group in two sequential D1 round trips (checked against the stored group in the Worker)", () => {
  it("reads the caller, the group, its connection and the assets to delete in one batch; refusals change nothing", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const snowflake = await createConnection(tenant, { projectId, type: "SNOWFLAKE" });
    const s3 = await createConnection(tenant, { projectId, type: "S3" });
    const path = `/api/backend/v2/${tenant}/configuration/projects/${projectId}/source_groups`;
    const created = await call("POST", path, {
      as: admin,
      body: {
        name: unique("g"),
        type: "SNOWFLAKE",
        connection_id: snowflake.id,
        payload: { database: "DW", schema: "PUBLIC" },
        assets: [{ name: "orders", table_or_file_name: "ORDERS" }],
      },
    });
    expect(created.status).toBe(201);
    const groupPath = `${path}/${created.body.group_id}`;
    const stored = async () => ({
      groups: (
        await env.DB.prepare("select name, connection_id, updated_at from source_groups where tenant_id = ?")
          .bind(tenant)
          .all()
      ).results,
      assets: (
        await env.DB.prepare("select id, name, updated_at from assets where tenant_id = ? order by id")
          .bind(tenant)
          .all()
      ).results,
    });
    const before = await stored();
    const body = { name: unique("renamed") };
    expect(
      (await call("PUT", groupPath, { as: await member(tenant, [[projectId, "PROJECT_VIEWER"]]), body })).status,
    ).toBe(403);
    expect((await call("PUT", groupPath, { as: await member(tenant, []), body })).status).toBe(404);
    expect((await call("PUT", groupPath, { as: await tenantKey(await createTenant()), body })).status).toBe(404);
    const editor = await member(tenant, [[projectId, "PROJECT_EDITOR"]]);
    expect((await call("PUT", `${path}/999999`, { as: editor, body })).status).toBe(404);
    const wrong = await call("PUT", groupPath, {
      as: editor,
      body: { connection_id: s3.id, assets_to_delete: ["999999"] },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual([
      { path: "body.connection_id", message: "is a S3 connection; the type is SNOWFLAKE" },
      { path: "body.assets_to_delete.0", message: "not an asset of this group" },
    ]);
    expect(await stored()).toEqual(before);
    const renamed = await call("PUT", groupPath, { as: editor, body });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(sequential(renamed), renamed.headers.get("server-timing") ?? "").toBe(2);
    const [asset] = before.assets as { id: number }[];
    const deleted = await call("PUT", groupPath, { as: editor, body: { assets_to_delete: [String(asset!.id)] } });
    expect(deleted.status).toBe(200);
    expect(sequential(deleted)).toBe(2);
    expect((await stored()).assets).toEqual([]);
    expect(await audited(tenant, "PUT", groupPath)).toEqual([200, 200, 400, 403]);
  });
});
