/**
 * Issue 40, point 3: a write is one sequential D1 round trip (one `db.batch`), counted by the
 * request's metered D1 (src/db/metered.ts, the Server-Timing header), never timed. The access check,
 * the write's own conditions and its audit row go in that batch; the answers stay what they were
 * (a refused caller changes nothing, a clash is a 409, each is audited).
 *
 * The write routes that are one round trip so far are listed in ONE_ROUND_TRIP; each is called by
 * every kind of caller that may (a project admin with a token, a tenant admin, a tenant key, the
 * platform administrator's key), on a fresh isolate cache of memberships as on a warm one.
 */
import { describe, expect, it } from "vitest";
import { admin, type Credential, call } from "../support/api";
import { createAsset } from "../support/assets";
import { createConnection, VALID_CONNECTIONS } from "../support/connections";
import { createProject, projectMember } from "../support/projects";
import { receiver } from "../support/receivers";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const sequential = (res: { headers: Headers }) =>
  Number(/desc="\d+ round trips, (\d+) sequential"/.exec(res.headers.get("server-timing") ?? "")?.[1]);

interface World {
  tenant: string;
  projectId: number;
}

async function world(): Promise<World> {
  const tenant = await createTenant();
  return { tenant, projectId: await createProject(tenant) };
}

/** A user's token: a member of the world's tenant, with `role` in its project when given. */
async function memberOf(w: World, role?: string): Promise<Credential> {
  const email = `${unique("user")}@example.com`;
  await tenantMember(w.tenant, email, "TENANT_MEMBER");
  if (role) await projectMember(w.tenant, w.projectId, email, role);
  return userToken(email);
}

/** The write routes that are one sequential round trip, each with a body that succeeds. */
const ONE_ROUND_TRIP: { name: string; method: string; path: (w: World) => string; body: () => unknown }[] = [
  {
    name: "PUT project",
    method: "PUT",
    path: (w) => `/api/backend/${w.tenant}/configuration/projects/${w.projectId}`,
    body: () => ({ name: unique("renamed"), description: "one batch" }),
  },
];

/** The callers that may write a project: its admin, a tenant admin, a tenant key, the platform administrator. */
async function callers(w: World): Promise<[string, Credential][]> {
  const projectAdmin = `${unique("padmin")}@example.com`;
  await tenantMember(w.tenant, projectAdmin, "TENANT_MEMBER");
  await projectMember(w.tenant, w.projectId, projectAdmin, "PROJECT_ADMIN");
  const tenantAdmin = `${unique("tadmin")}@example.com`;
  await tenantMember(w.tenant, tenantAdmin, "TENANT_ADMIN");
  return [
    ["project admin", await userToken(projectAdmin)],
    ["tenant admin", await userToken(tenantAdmin)],
    ["tenant key", await tenantKey(w.tenant)],
    ["platform administrator", admin],
  ];
}

describe("writes in one sequential D1 round trip", () => {
  for (const route of ONE_ROUND_TRIP) {
    it(`${route.name}: one round trip for every caller that may, the write and its audit row done`, async () => {
      const w = await world();
      for (const [who, as] of await callers(w)) {
        // An API key is read from D1 on its first use in the isolate (then cached): authentication,
        // not the write. A read of the same resource authenticates it first.
        expect((await call("GET", route.path(w), { as })).status).toBe(200);
        // Twice: once without, once with the caller's membership in the isolate's cache.
        for (const attempt of [1, 2]) {
          const body = route.body() as Record<string, unknown>;
          const res = await call(route.method, route.path(w), { as, body });
          expect(res.status, `${who}, attempt ${attempt}: ${JSON.stringify(res.body)}`).toBe(200);
          expect(res.body).toMatchObject(body);
          expect(sequential(res), `${who}, attempt ${attempt}: ${res.headers.get("server-timing")}`).toBe(1);
        }
      }
      // Each write is in the audit log once, as a success.
      const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
      expect(log.status).toBe(200);
      const writes = log.body.filter(
        (e: { method: string; path: string }) => e.method === route.method && e.path === route.path(w),
      );
      expect(writes.map((e: { status: number }) => e.status)).toEqual(Array(8).fill(200));
    });
  }

  it("PUT project: a refused caller changes nothing and is audited; a clash is a 409; a stranger a 404", async () => {
    const w = await world();
    const path = `/api/backend/${w.tenant}/configuration/projects/${w.projectId}`;
    const before = await call("GET", path, { as: admin });
    const viewer = `${unique("viewer")}@example.com`;
    await tenantMember(w.tenant, viewer, "TENANT_MEMBER");
    await projectMember(w.tenant, w.projectId, viewer, "PROJECT_VIEWER");
    const refused = await call("PUT", path, { as: await userToken(viewer), body: { description: "not mine" } });
    expect(refused.status).toBe(403);
    // Not a member of the project: it is not theirs to see.
    const member = `${unique("member")}@example.com`;
    await tenantMember(w.tenant, member, "TENANT_MEMBER");
    const hidden = await call("PUT", path, { as: await userToken(member), body: { description: "not mine" } });
    expect(hidden.status).toBe(404);
    // Not in the tenant at all, and a key of another tenant.
    const stranger = await call("PUT", path, {
      as: await userToken(`${unique("stranger")}@example.com`),
      body: { description: "x" },
    });
    expect(stranger.status).toBe(404);
    const otherKey = await call("PUT", path, { as: await tenantKey(await createTenant()), body: { description: "x" } });
    expect(otherKey.status).toBe(404);
    // An invalid body from a caller without access is that caller's refusal, not a 400.
    const invalid = await call("PUT", path, { as: await userToken(viewer), body: { name: 5 } });
    expect(invalid.status).toBe(403);
    const other = await createProject(w.tenant);
    const taken = await call("GET", `/api/backend/${w.tenant}/configuration/projects/${other}`, { as: admin });
    const clash = await call("PUT", path, { as: admin, body: { name: taken.body.name, description: "clash" } });
    expect(clash.status).toBe(409);
    expect(clash.body.detail).toBe(`A project named '${taken.body.name}' already exists`);
    const after = await call("GET", path, { as: admin });
    expect(after.body).toEqual(before.body);
    const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
    const puts = log.body.filter((e: { method: string; path: string }) => e.method === "PUT" && e.path === path);
    expect(puts.map((e: { status: number }) => e.status)).toEqual([409, 403, 403]);
  });

  it("DELETE asset: one round trip; a refused caller deletes nothing and is audited; another project's asset a 404", async () => {
    const w = await world();
    const connection = await createConnection(w.tenant, { projectId: w.projectId, type: "S3" });
    const asset = await createAsset(w.tenant, w.projectId, connection.id, { type: "S3" });
    const path = `/api/backend/${w.tenant}/configuration/projects/${w.projectId}/assets/${asset.id}`;
    const viewer = await memberOf(w, "PROJECT_VIEWER");
    expect((await call("DELETE", path, { as: viewer })).status).toBe(403);
    const member = await memberOf(w);
    expect((await call("DELETE", path, { as: member })).status).toBe(404);
    expect((await call("DELETE", path, { as: await tenantKey(await createTenant()) })).status).toBe(404);
    // The same asset through another project of the tenant is not there.
    const other = await createProject(w.tenant);
    const elsewhere = `/api/backend/${w.tenant}/configuration/projects/${other}/assets/${asset.id}`;
    expect((await call("DELETE", elsewhere, { as: admin })).status).toBe(404);
    expect((await call("GET", path, { as: admin })).status).toBe(200);
    const as = await memberOf(w, "PROJECT_EDITOR");
    const deleted = await call("DELETE", path, { as });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Asset ${asset.id} deleted` });
    expect(sequential(deleted), deleted.headers.get("server-timing") ?? "").toBe(1);
    expect((await call("GET", path, { as: admin })).status).toBe(404);
    expect((await call("DELETE", path, { as })).status).toBe(404);
    const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
    const deletes = log.body.filter((e: { method: string; path: string }) => e.method === "DELETE" && e.path === path);
    expect(deletes.map((e: { status: number }) => e.status)).toEqual([200, 403]);
  });

  it("DELETE project: one round trip; a refused caller deletes nothing; a project with assets is a 409", async () => {
    const w = await world();
    const path = `/api/backend/${w.tenant}/configuration/projects/${w.projectId}`;
    const connection = await createConnection(w.tenant, { projectId: w.projectId, type: "S3" });
    const asset = await createAsset(w.tenant, w.projectId, connection.id, { type: "S3" });
    const editor = await memberOf(w, "PROJECT_EDITOR");
    expect((await call("DELETE", path, { as: editor })).status).toBe(403);
    const member = await memberOf(w);
    expect((await call("DELETE", path, { as: member })).status).toBe(404);
    expect((await call("DELETE", path, { as: await tenantKey(await createTenant()) })).status).toBe(404);
    const held = await call("DELETE", path, { as: admin });
    expect(held.status).toBe(409);
    expect(held.body.detail).toBe("The project still has assets or source groups: delete or move them first");
    expect((await call("GET", path, { as: admin })).status).toBe(200);
    expect((await call("DELETE", `${path}/assets/${asset.id}`, { as: admin })).status).toBe(200);
    const as = await memberOf(w, "PROJECT_ADMIN");
    const deleted = await call("DELETE", path, { as });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: `Project ${w.projectId} deleted` });
    expect(sequential(deleted), deleted.headers.get("server-timing") ?? "").toBe(1);
    expect((await call("GET", path, { as: admin })).status).toBe(404);
    expect((await call("DELETE", path, { as: admin })).status).toBe(404);
    const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
    const deletes = log.body.filter((e: { method: string; path: string }) => e.method === "DELETE" && e.path === path);
    expect(deletes.map((e: { status: number }) => e.status)).toEqual([200, 409, 403]);
  });
});

describe("tenant writes in one sequential D1 round trip (Access.tenantInBatch)", () => {
  it("spark-job-config, tenant members, projects, project members: one round trip for a tenant admin's first write; refusals write nothing", async () => {
    const w = await world();
    const base = `/api/backend/${w.tenant}/configuration`;
    const spark = `/configuration/tenants/${w.tenant}/spark-job-config`;
    const tenantAdmin = `${unique("tadmin")}@example.com`;
    await tenantMember(w.tenant, tenantAdmin, "TENANT_ADMIN");
    const newcomer = `${unique("new")}@example.com`;
    const writes: [string, string, unknown, number][] = [
      ["PUT", spark, { spark_properties: { "spark.executor.memory": "8g" } }, 200],
      ["DELETE", spark, undefined, 200],
      ["PUT", `${base}/members/${newcomer}`, { role: "TENANT_MEMBER" }, 201],
      ["PUT", `${base}/members/${newcomer}`, { role: "TENANT_ADMIN" }, 200],
      ["DELETE", `${base}/members/${newcomer}`, undefined, 200],
      ["POST", `${base}/projects`, { name: unique("p") }, 201],
      ["POST", `${base}/projects/${w.projectId}/members`, { email: newcomer, role: "PROJECT_VIEWER" }, 201],
      ["PUT", `${base}/projects/${w.projectId}/members/${newcomer}`, { role: "PROJECT_EDITOR" }, 200],
      ["DELETE", `${base}/projects/${w.projectId}/members/${newcomer}`, undefined, 200],
    ];
    // A fresh token each time: no membership of the caller is in the isolate's cache.
    for (const [method, path, body, status] of writes) {
      const res = await call(method, path, { as: await userToken(tenantAdmin), ...(body ? { body } : {}) });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(status);
      expect(sequential(res), `${method} ${path}: ${res.headers.get("server-timing")}`).toBe(1);
    }
    // A member who is no tenant admin is refused (403) and writes nothing; a stranger is a 404.
    const member = await memberOf(w, "PROJECT_EDITOR");
    const stranger = await userToken(`${unique("stranger")}@example.com`);
    const put = { spark_properties: { "spark.executor.memory": "1g" } };
    expect((await call("PUT", spark, { as: member, body: put })).status).toBe(403);
    expect((await call("PUT", spark, { as: stranger, body: put })).status).toBe(404);
    expect((await call("PUT", spark, { as: await tenantKey(await createTenant()), body: put })).status).toBe(404);
    expect((await call("GET", spark, { as: admin })).body).toEqual({});
    const victim = `${unique("victim")}@example.com`;
    expect(
      (await call("PUT", `${base}/members/${victim}`, { as: member, body: { role: "TENANT_ADMIN" } })).status,
    ).toBe(403);
    expect((await call("DELETE", `${base}/members/${tenantAdmin}`, { as: member })).status).toBe(403);
    const project = { name: unique("p") };
    expect((await call("POST", `${base}/projects`, { as: stranger, body: project })).status).toBe(404);
    const add = { email: victim, role: "PROJECT_ADMIN" };
    expect((await call("POST", `${base}/projects/${w.projectId}/members`, { as: member, body: add })).status).toBe(403);
    const members = await call("GET", `${base}/members`, { as: admin });
    expect(members.body.map((m: { email: string }) => m.email)).not.toContain(victim);
    expect(members.body.map((m: { email: string }) => m.email)).toContain(tenantAdmin);
    const projects = await call("GET", `${base}/projects`, { as: admin });
    expect(projects.body.map((p: { name: string }) => p.name)).not.toContain(project.name);
    // Every write once in the audit log with its answer (the refusals by the middleware, a 404 not at all).
    const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
    const statuses = (path: string, method: string) =>
      log.body
        .filter((e: { method: string; path: string }) => e.method === method && e.path === path)
        .map((e: { status: number }) => e.status);
    expect(statuses(spark, "PUT")).toEqual([403, 200]);
    expect(statuses(`${base}/members/${newcomer}`, "PUT")).toEqual([200, 201]);
    expect(statuses(`${base}/members/${tenantAdmin}`, "DELETE")).toEqual([403]);
  });
});

describe("POST asset in one sequential D1 round trip", () => {
  it("the connection's checks are conditions of the insert; a failed one inserts nothing and is the same 400", async () => {
    const w = await world();
    const base = `/api/backend/${w.tenant}/configuration/projects/${w.projectId}/assets`;
    const s3 = await createConnection(w.tenant, { projectId: w.projectId, type: "S3" });
    const snowflake = await createConnection(w.tenant, { projectId: w.projectId, type: "SNOWFLAKE" });
    const foreign = await createConnection(await createTenant(), { type: "S3" });
    const body = (connection_id: number) => ({
      name: unique("a"),
      type: "S3",
      payload: { path: "in/*.csv", format: "csv" },
      connection_id,
    });
    const editor = await memberOf(w, "PROJECT_EDITOR");
    const created = await call("POST", base, { as: editor, body: body(s3.id) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(sequential(created), created.headers.get("server-timing") ?? "").toBe(1);
    const elsewhere = await call("POST", base, { as: editor, body: body(foreign.id) });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body.errors).toEqual([
      { path: "body.connection_id", message: "no such connection in this project" },
    ]);
    const wrongType = await call("POST", base, { as: editor, body: body(snowflake.id) });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errors).toEqual([
      { path: "body.connection_id", message: "is a SNOWFLAKE connection; the type is S3" },
    ]);
    expect((await call("POST", base, { as: await memberOf(w, "PROJECT_VIEWER"), body: body(s3.id) })).status).toBe(403);
    expect((await call("POST", base, { as: await memberOf(w), body: body(s3.id) })).status).toBe(404);
    const list = await call("GET", base, { as: admin });
    expect(list.body.map((a: { id: unknown }) => a.id)).toEqual([created.body.id]);
  });
});

describe("DELETE source group in one sequential D1 round trip", () => {
  it("deletes the group and its assets for an editor; a viewer deletes nothing; another project's group is a 404 (and lists its names)", async () => {
    const w = await world();
    const base = `/api/backend/v2/${w.tenant}/configuration/projects/${w.projectId}/source_groups`;
    const snowflake = await createConnection(w.tenant, { projectId: w.projectId, type: "SNOWFLAKE" });
    const created = await call("POST", base, {
      as: admin,
      body: {
        name: unique("g"),
        type: "SNOWFLAKE",
        connection_id: snowflake.id,
        payload: { database: "DW", schema: "PUBLIC" },
        assets: [{ name: "orders", table_or_file_name: "ORDERS" }],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBeLessThan(300);
    const path = `${base}/${created.body.group_id}`;
    expect((await call("DELETE", path, { as: await memberOf(w, "PROJECT_VIEWER") })).status).toBe(403);
    const other = await createProject(w.tenant);
    const elsewhere = `/api/backend/v2/${w.tenant}/configuration/projects/${other}/source_groups/${created.body.group_id}`;
    expect((await call("DELETE", elsewhere, { as: admin })).status).toBe(404);
    // Its names (POST …/list): one round trip too; through another project, a 404 that reads nothing.
    expect((await call("POST", `${elsewhere}/list`, { as: admin, body: {} })).status).toBe(404);
    expect((await call("POST", `${path}/list`, { as: await memberOf(w), body: {} })).status).toBe(404);
    const names = await call("POST", `${path}/list`, { as: await memberOf(w, "PROJECT_VIEWER"), body: {} });
    expect(names.status).toBe(200);
    expect(names.body).toEqual(["orders"]);
    expect(sequential(names), names.headers.get("server-timing") ?? "").toBe(1);
    const assets = `/api/backend/${w.tenant}/configuration/projects/${w.projectId}/assets`;
    expect((await call("GET", assets, { as: admin })).body).toHaveLength(1);
    const deleted = await call("DELETE", path, { as: await memberOf(w, "PROJECT_EDITOR") });
    expect(deleted.status).toBe(200);
    expect(sequential(deleted), deleted.headers.get("server-timing") ?? "").toBe(1);
    expect((await call("GET", assets, { as: admin })).body).toEqual([]);
    expect((await call("DELETE", path, { as: admin })).status).toBe(404);
  });
});

describe("creates whose secrets are sealed before the row's id, in one sequential D1 round trip", () => {
  it("POST connection: sealed for a seal id, the id chosen in the INSERT; refusals write nothing; a taken name is a 409", async () => {
    const w = await world();
    const own = `/api/backend/${w.tenant}/configuration/projects/${w.projectId}/connections`;
    const global = `/api/backend/${w.tenant}/configuration/connections`;
    const body = (name = unique("c")) => ({ name, type: "S3", ...VALID_CONNECTIONS.S3 });
    const editor = await memberOf(w, "PROJECT_EDITOR");
    const first = await call("POST", own, { as: editor, body: body() });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(sequential(first), first.headers.get("server-timing") ?? "").toBe(1);
    // A key is read from D1 on its first use in the isolate (authentication, not the write).
    const key = await tenantKey(w.tenant);
    expect((await call("GET", global, { as: key })).status).toBe(200);
    const second = await call("POST", global, { as: key, body: body() });
    expect(second.status).toBe(201);
    expect(sequential(second), second.headers.get("server-timing") ?? "").toBe(1);
    // Ids as before: the next of the table's.
    expect(second.body.id).toBeGreaterThan(first.body.id);
    expect((await call("POST", own, { as: await memberOf(w, "PROJECT_VIEWER"), body: body() })).status).toBe(403);
    expect((await call("POST", own, { as: await memberOf(w), body: body() })).status).toBe(404);
    expect((await call("POST", global, { as: editor, body: body() })).status).toBe(403);
    expect((await call("POST", global, { as: await tenantKey(await createTenant()), body: body() })).status).toBe(404);
    const clash = await call("POST", own, { as: editor, body: body(first.body.name) });
    expect(clash.status).toBe(409);
    expect(clash.body.detail).toBe(`A connection named '${first.body.name}' already exists here`);
    // A refused caller's clash is the refusal.
    expect(
      (await call("POST", own, { as: await memberOf(w, "PROJECT_VIEWER"), body: body(first.body.name) })).status,
    ).toBe(403);
    const list = await call("GET", global, { as: admin });
    expect(list.body.map((c: { id: number }) => c.id)).toEqual([first.body.id, second.body.id]);
    const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
    const posts = (path: string) =>
      log.body
        .filter((e: { method: string; path: string }) => e.method === "POST" && e.path === path)
        .map((e: { status: number }) => e.status);
    expect(posts(own)).toEqual([403, 409, 403, 201]);
    expect(posts(global)).toEqual([403, 201]);
  });

  it("POST notification channel: one round trip; a tenant member is refused and writes nothing", async () => {
    const w = await world();
    const path = `/api/backend/${w.tenant}/configuration/notifications/channels`;
    const url = (await receiver()).url;
    const key = await tenantKey(w.tenant);
    expect((await call("GET", path, { as: key })).status).toBe(200);
    const made = await call("POST", path, {
      as: key,
      body: { name: unique("ch"), type: "WEBHOOK", url },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    expect(made.body.secret).toMatch(/^whsec_/);
    expect(sequential(made), made.headers.get("server-timing") ?? "").toBe(1);
    const member = await memberOf(w, "PROJECT_ADMIN");
    expect((await call("POST", path, { as: member, body: { name: unique("ch"), type: "SLACK", url } })).status).toBe(
      403,
    );
    expect((await call("GET", path, { as: admin })).body.map((c: { id: number }) => c.id)).toEqual([made.body.id]);
  });
});

describe("asset settings and scans in one sequential D1 round trip", () => {
  it("PUT policies: the upsert returns the row it wrote; a viewer changes nothing; another tenant's asset is a 404", async () => {
    const w = await world();
    const connection = await createConnection(w.tenant, { projectId: w.projectId, type: "S3" });
    const asset = await createAsset(w.tenant, w.projectId, connection.id, { type: "S3" });
    const path = `/api/backend/${w.tenant}/configuration/assets/${asset.id}/policies`;
    const put = await call("PUT", path, { as: await memberOf(w, "PROJECT_EDITOR"), body: { auto_close_after: 6 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ auto_close_after: 6, adapt_after: 3, notify: true, overrides: {} });
    expect(sequential(put), put.headers.get("server-timing") ?? "").toBe(1);
    const viewer = await memberOf(w, "PROJECT_VIEWER");
    expect((await call("PUT", path, { as: viewer, body: { auto_close_after: 9 } })).status).toBe(403);
    const foreign = `/api/backend/${await createTenant()}/configuration/assets/${asset.id}/policies`;
    expect((await call("PUT", foreign, { as: admin, body: { auto_close_after: 9 } })).status).toBe(404);
    const again = await call("PUT", path, { as: admin, body: { notify: false } });
    expect(again.body).toMatchObject({ auto_close_after: 6, notify: false });
    expect((await call("GET", path, { as: admin })).body).toMatchObject({ auto_close_after: 6, notify: false });
    const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
    const puts = log.body.filter((e: { method: string; path: string }) => e.method === "PUT" && e.path === path);
    expect(puts.map((e: { status: number }) => e.status)).toEqual([200, 403, 200]);
  });

  it("cancel a queued scan: one round trip; a viewer cancels nothing; through another asset a 404; again a 409", async () => {
    const w = await world();
    const connection = await createConnection(w.tenant, { projectId: w.projectId, type: "S3" });
    const asset = await createAsset(w.tenant, w.projectId, connection.id, { type: "S3" });
    const other = await createAsset(w.tenant, w.projectId, connection.id, { type: "S3" });
    const scans = (id: number) => `/api/backend/${w.tenant}/configuration/assets/${id}/scans`;
    const job = (await call("POST", scans(asset.id), { as: admin })).body.job_id as string;
    const path = `${scans(asset.id)}/${job}/cancel`;
    expect((await call("POST", path, { as: await memberOf(w, "PROJECT_VIEWER") })).status).toBe(403);
    expect((await call("POST", `${scans(other.id)}/${job}/cancel`, { as: admin })).status).toBe(404);
    expect((await call("GET", `${scans(asset.id)}/${job}`, { as: admin })).body.status).toBe("QUEUED");
    const cancelled = await call("POST", path, { as: await memberOf(w, "PROJECT_EDITOR") });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect(cancelled.body).toMatchObject({
      job_id: job,
      status: "CANCELLED",
      error: expect.stringMatching(/^cancelled by /),
    });
    expect(sequential(cancelled), cancelled.headers.get("server-timing") ?? "").toBe(1);
    expect((await call("GET", `${scans(asset.id)}/${job}`, { as: admin })).body).toEqual(cancelled.body);
    const again = await call("POST", path, { as: admin });
    expect(again.status).toBe(409);
    expect(again.body.detail).toBe("The scan is CANCELLED: only a queued or running scan can be cancelled");
    const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
    const posts = log.body.filter((e: { method: string; path: string }) => e.method === "POST" && e.path === path);
    expect(posts.map((e: { status: number }) => e.status)).toEqual([409, 200, 403]);
  });
});

describe("PUT asset: one sequential D1 round trip, two where the Worker checks what is stored", () => {
  it("checks the change against the asset's own connection, read with the access check; refusals change nothing", async () => {
    const w = await world();
    const s3 = await createConnection(w.tenant, { projectId: w.projectId, type: "S3" });
    const asset = await createAsset(w.tenant, w.projectId, s3.id, { type: "S3" });
    const path = `/api/backend/${w.tenant}/configuration/projects/${w.projectId}/assets/${asset.id}`;
    const before = (await call("GET", path, { as: admin })).body;
    const editor = await memberOf(w, "PROJECT_EDITOR");
    const renamed = await call("PUT", path, { as: editor, body: { name: unique("renamed") } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(sequential(renamed), renamed.headers.get("server-timing") ?? "").toBe(1);
    // A type sent alone is checked against the connection the asset keeps (a payload sent with it:
    // one round trip, its checks conditions of the UPDATE).
    const retyped = await call("PUT", path, {
      as: editor,
      body: { type: "SNOWFLAKE", payload: { database: "DW", schema: "PUBLIC", table: "T" } },
    });
    expect(retyped.status).toBe(400);
    expect(retyped.body.errors).toContainEqual({
      path: "body.type",
      message: "must be S3, the type of the connection",
    });
    const foreign = await createConnection(await createTenant(), { type: "S3" });
    const moved = await call("PUT", path, { as: editor, body: { connection_id: foreign.id } });
    expect(moved.status).toBe(400);
    expect(moved.body.errors).toEqual([{ path: "body.connection_id", message: "no such connection in this project" }]);
    // A new connection alone is checked in the Worker against the stored payload, read with the
    // access check: refused there, nothing written but the refusal's audit row.
    expect(sequential(moved)).toBe(2);
    expect((await call("PUT", path, { as: await memberOf(w, "PROJECT_VIEWER"), body: { name: "x" } })).status).toBe(
      403,
    );
    expect((await call("PUT", path, { as: await memberOf(w), body: { name: "x" } })).status).toBe(404);
    const other = await createProject(w.tenant);
    const elsewhere = `/api/backend/${w.tenant}/configuration/projects/${other}/assets/${asset.id}`;
    expect((await call("PUT", elsewhere, { as: admin, body: { name: "x" } })).status).toBe(404);
    expect((await call("GET", path, { as: admin })).body).toEqual({
      ...before,
      name: renamed.body.name,
      updated_at: renamed.body.updated_at,
    });
    const log = await call("GET", `/api/backend/${w.tenant}/audit`, { as: admin });
    const puts = log.body.filter((e: { method: string; path: string }) => e.method === "PUT" && e.path === path);
    expect(puts.map((e: { status: number }) => e.status)).toEqual([403, 400, 400, 200]);
  });
});
