import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { insertConnection } from "../support/connections";
import { createProject, projectMember } from "../support/projects";
import { createTenant, tenantKey } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const base = (t: string) => `/api/backend/${t}/configuration`;

describeAuthMatrix(
  "projects",
  async (w) => {
    // A member nobody in the matrix may change.
    const member = `${unique("kept")}@example.com`;
    await projectMember(w.tenant, w.projectId, member, "PROJECT_VIEWER");
    return { member };
  },
  [
    {
      method: "POST",
      path: (w) => `${base(w.tenant)}/projects`,
      body: () => ({ name: unique("p") }),
      role: "TENANT_MEMBER",
    },
    { method: "GET", path: (w) => `${base(w.tenant)}/projects`, role: "TENANT_MEMBER" },
    { method: "GET", path: (w) => `${base(w.tenant)}/projects/${w.projectId}`, role: "PROJECT_VIEWER" },
    {
      method: "PUT",
      path: (w) => `${base(w.tenant)}/projects/${w.projectId}`,
      body: () => ({ description: "x" }),
      role: "PROJECT_ADMIN",
    },
    // Refused callers only: the project survives (the happy path deletes one below).
    { method: "DELETE", path: (w) => `${base(w.tenant)}/projects/${w.projectId}`, role: "PROJECT_ADMIN" },
    { method: "GET", path: (w) => `${base(w.tenant)}/projects/${w.projectId}/members`, role: "PROJECT_VIEWER" },
    {
      method: "POST",
      path: (w) => `${base(w.tenant)}/projects/${w.projectId}/members`,
      body: () => ({ email: `${unique("m")}@example.com`, role: "PROJECT_VIEWER" }),
      role: "PROJECT_ADMIN",
    },
    {
      method: "PUT",
      path: (w, x) => `${base(w.tenant)}/projects/${w.projectId}/members/${x.member}`,
      body: () => ({ role: "PROJECT_EDITOR" }),
      role: "PROJECT_ADMIN",
    },
    {
      method: "DELETE",
      path: (w, x) => `${base(w.tenant)}/projects/${w.projectId}/members/${x.member}`,
      role: "PROJECT_ADMIN",
    },
    { method: "GET", path: (w) => `${base(w.tenant)}/members`, role: "TENANT_ADMIN" },
    {
      method: "PUT",
      path: (w) => `${base(w.tenant)}/members/someone@example.com`,
      body: () => ({ role: "TENANT_MEMBER" }),
      role: "TENANT_ADMIN",
    },
    { method: "DELETE", path: (w, x) => `${base(w.tenant)}/members/${x.member}`, role: "TENANT_ADMIN" },
  ],
);

describe("projects", () => {
  it("creates a project whose creating user becomes its PROJECT_ADMIN", async () => {
    const tenant = await createTenant();
    const email = `${unique("creator")}@example.com`;
    await call("PUT", `${base(tenant)}/members/${email}`, { as: admin, body: { role: "TENANT_MEMBER" } });
    const as = await userToken(email);
    const name = unique("analytics");
    const res = await call("POST", `${base(tenant)}/projects`, { as, body: { name, description: "BI tables" } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name,
      description: "BI tables",
      created_by: email,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
    const members = await call("GET", `${base(tenant)}/projects/${res.body.id}/members`, { as });
    expect(members.body).toEqual([{ email, role: "PROJECT_ADMIN", created_at: expect.any(String) }]);
  });

  it("refuses a duplicate project name with 409 and an invalid body with 400 naming the field", async () => {
    const tenant = await createTenant();
    const name = unique("dup");
    expect((await call("POST", `${base(tenant)}/projects`, { as: admin, body: { name } })).status).toBe(201);
    const dup = await call("POST", `${base(tenant)}/projects`, { as: admin, body: { name } });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("conflict");
    const bad = await call("POST", `${base(tenant)}/projects`, { as: admin, body: { name: "", extra: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_failed");
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(["body.name"]));
    const list = await call("GET", `${base(tenant)}/projects`, { as: admin });
    expect(list.body).toHaveLength(1);
  });

  it("lists only the projects a user is a member of; tenant admins see all", async () => {
    const tenant = await createTenant();
    const a = await createProject(tenant);
    const b = await createProject(tenant);
    const email = `${unique("u")}@example.com`;
    await projectMember(tenant, a, email, "PROJECT_VIEWER");
    const user = await userToken(email);
    const mine = await call("GET", `${base(tenant)}/projects`, { as: user });
    expect(mine.body.map((p: { id: number }) => p.id)).toEqual([a]);
    const all = await call("GET", `${base(tenant)}/projects`, { as: await tenantKey(tenant) });
    expect(all.body.map((p: { id: number }) => p.id)).toEqual([a, b]);
    expect((await call("GET", `${base(tenant)}/projects/${b}`, { as: user })).status).toBe(404);
  });

  it("lists the projects of a user in more than 100 of them (D1 binds at most 100 parameters)", async () => {
    const tenant = await createTenant();
    const email = `${unique("busy")}@example.com`;
    const now = new Date().toISOString();
    const n = JSON.stringify(Array.from({ length: 105 }, (_, i) => i));
    await env.DB.batch([
      env.DB.prepare(
        `insert into projects (tenant_id, name, description, created_by, created_at, updated_at)
         select ?1, 'p-' || value, '', 'test', ?2, ?2 from json_each(?3)`,
      ).bind(tenant, now, n),
      env.DB.prepare(
        "insert into tenant_members (tenant_id, user_email, role, created_at) values (?1, ?2, 'TENANT_MEMBER', ?3)",
      ).bind(tenant, email, now),
      env.DB.prepare(
        `insert into project_members (tenant_id, project_id, user_email, role, created_at)
         select ?1, id, ?2, 'PROJECT_VIEWER', ?3 from projects where tenant_id = ?1`,
      ).bind(tenant, email, now),
    ]);
    const res = await call("GET", `${base(tenant)}/projects?limit=1000`, { as: await userToken(email) });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(105);
  });

  it("without limit lists every project, past the 1,000 rows of one read (issue 10, point 1)", async () => {
    const tenant = await createTenant();
    const now = new Date().toISOString();
    // 1,205 projects, straight into D1 in one statement (through the API this would take minutes).
    await env.DB.prepare(
      `with recursive n(i) as (select 1 union all select i + 1 from n where i < 1205)
       insert into projects (tenant_id, name, description, created_by, created_at, updated_at)
       select ?1, 'bulk-' || i, '', 'test', ?2, ?2 from n`,
    )
      .bind(tenant, now)
      .run();
    const all = await call("GET", `${base(tenant)}/projects`, { as: admin });
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(1205);
    expect(new Set(all.body.map((p: { id: number }) => p.id)).size).toBe(1205);
    expect(all.headers.get("link")).toBeNull();
    const paged = await call("GET", `${base(tenant)}/projects?limit=100`, { as: admin });
    expect(paged.body).toHaveLength(100);
    expect(paged.headers.get("link")).toMatch(/rel="next"/);
    // A cursor without limit: everything after it.
    const cursor = new URLSearchParams(
      paged.headers.get("link")!.slice(1, paged.headers.get("link")!.indexOf(">")).split("?")[1],
    ).get("cursor");
    const rest = await call("GET", `${base(tenant)}/projects?cursor=${cursor}`, { as: admin });
    expect(rest.body).toHaveLength(1105);
  });

  it("pages a list with limit and a Link to the next page", async () => {
    const tenant = await createTenant();
    const ids = [await createProject(tenant), await createProject(tenant), await createProject(tenant)];
    const first = await call("GET", `${base(tenant)}/projects?limit=2`, { as: admin });
    expect(first.body.map((p: { id: number }) => p.id)).toEqual(ids.slice(0, 2));
    const link = first.headers.get("link");
    expect(link).toMatch(/^<\/api\/backend\/.+\/projects\?.*cursor=.+>; rel="next"$/);
    const next = await call("GET", link!.slice(1, link!.indexOf(">")), { as: admin });
    expect(next.body.map((p: { id: number }) => p.id)).toEqual(ids.slice(2));
    expect(next.headers.get("link")).toBeNull();
    const bad = await call("GET", `${base(tenant)}/projects?cursor=garbage`, { as: admin });
    expect(bad.status).toBe(400);
  });

  it("updates only the fields sent, changes and removes members, deletes the project", async () => {
    const tenant = await createTenant();
    const id = await createProject(tenant);
    const before = await call("GET", `${base(tenant)}/projects/${id}`, { as: admin });
    const upd = await call("PUT", `${base(tenant)}/projects/${id}`, { as: admin, body: { description: "new" } });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ name: before.body.name, description: "new" });

    const email = `${unique("m")}@example.com`;
    await projectMember(tenant, id, email, "PROJECT_VIEWER");
    const dup = await call("POST", `${base(tenant)}/projects/${id}/members`, {
      as: admin,
      body: { email, role: "PROJECT_EDITOR" },
    });
    expect(dup.status).toBe(409);
    const changed = await call("PUT", `${base(tenant)}/projects/${id}/members/${email}`, {
      as: admin,
      body: { role: "PROJECT_EDITOR" },
    });
    expect(changed.body).toMatchObject({ email, role: "PROJECT_EDITOR" });
    // The new member joined the tenant as TENANT_MEMBER.
    const tenantMembers = await call("GET", `${base(tenant)}/members`, { as: admin });
    expect(tenantMembers.body).toContainEqual({ email, role: "TENANT_MEMBER", created_at: expect.any(String) });
    expect((await call("DELETE", `${base(tenant)}/projects/${id}/members/${email}`, { as: admin })).status).toBe(200);
    expect((await call("DELETE", `${base(tenant)}/projects/${id}/members/${email}`, { as: admin })).status).toBe(404);

    expect((await call("DELETE", `${base(tenant)}/projects/${id}`, { as: admin })).status).toBe(200);
    expect((await call("GET", `${base(tenant)}/projects/${id}`, { as: admin })).status).toBe(404);
  });

  it("refuses to delete a project that still has assets (409) and deletes it once they are gone", async () => {
    const tenant = await createTenant();
    const id = await createProject(tenant);
    const connection = await insertConnection(tenant, { projectId: id, type: "DELTALAKE" });
    const asset = await createAsset(tenant, id, connection);
    const refused = await call("DELETE", `${base(tenant)}/projects/${id}`, { as: admin });
    expect(refused.status).toBe(409);
    expect((await call("GET", `${base(tenant)}/projects/${id}`, { as: admin })).status).toBe(200);
    expect((await call("DELETE", `${base(tenant)}/projects/${id}/assets/${asset.id}`, { as: admin })).status).toBe(200);
    expect((await call("DELETE", `${base(tenant)}/projects/${id}`, { as: admin })).status).toBe(200);
  });

  it("removing a user from the tenant removes their project memberships and access", async () => {
    const tenant = await createTenant();
    const id = await createProject(tenant);
    const email = `${unique("leaver")}@example.com`;
    await projectMember(tenant, id, email, "PROJECT_EDITOR");
    const as = await userToken(email);
    expect((await call("GET", `${base(tenant)}/projects/${id}`, { as })).status).toBe(200);
    expect((await call("DELETE", `${base(tenant)}/members/${email}`, { as: admin })).status).toBe(200);
    expect((await call("GET", `${base(tenant)}/projects/${id}`, { as })).status).toBe(404);
    expect((await call("GET", `${base(tenant)}/projects/${id}/members`, { as: admin })).body).toEqual([]);
  });
});
