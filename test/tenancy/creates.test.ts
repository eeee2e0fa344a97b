/**
 * Every create answered 2xx is stored, and a rejected request stores nothing (issue 42, point 5),
 * under concurrent requests: projects and members created in parallel with creates that must be
 * refused, then the lists compared with the answers. And the two ways an answer and the lists
 * could part: a project created by someone whose membership was removed meanwhile (another
 * isolate's access cache, or a race with the removal), and a list served from memberships older
 * than what the client has seen.
 */

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type ApiResponse, admin, type Credential, call } from "../support/api";
import { createProject, projectMember } from "../support/projects";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const base = (tenant: string) => `/api/backend/${tenant}/configuration`;

/** Every page of a list, as a client reads it. */
async function all<T>(path: string, as: Credential = admin, headers: Record<string, string> = {}): Promise<T[]> {
  const res = await call("GET", path, { as, headers });
  expect(res.status, path).toBe(200);
  return res.body;
}

const statuses = (responses: ApiResponse[]) => responses.map((r) => r.status);

describe("creates in parallel with refused ones", () => {
  it("store exactly what was answered 2xx: projects, tenant members and project members", {
    timeout: 120_000,
  }, async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const stranger = await tenantKey(other);
    const projectId = await createProject(tenant);
    const users = Array.from({ length: 4 }, () => `${unique("u")}@example.com`);
    for (const u of users) await tenantMember(tenant, u, "TENANT_MEMBER");
    const tokens = await Promise.all(users.map(userToken));
    const taken = unique("taken");
    const before = {
      projects: await all<{ id: number }>(`${base(tenant)}/projects`),
      members: await all<{ email: string }>(`${base(tenant)}/members`),
    };

    const projectCreates: Promise<ApiResponse & { name?: string; creator?: string }>[] = [];
    const memberPuts: Promise<ApiResponse & { email: string }>[] = [];
    const memberAdds: Promise<ApiResponse & { email: string }>[] = [];
    const refused: Promise<ApiResponse>[] = [];
    for (let i = 0; i < 12; i++) {
      const name = i % 4 === 0 ? taken : unique("p");
      const creator = i % 2 === 0 ? undefined : users[i % users.length]!;
      const as = creator ? tokens[i % tokens.length] : admin;
      projectCreates.push(
        call("POST", `${base(tenant)}/projects`, { as, body: { name } }).then((r) => ({ ...r, name, creator })),
      );
      const email = `${unique("m")}@example.com`;
      memberPuts.push(
        call("PUT", `${base(tenant)}/members/${email}`, { as: admin, body: { role: "TENANT_MEMBER" } }).then((r) => ({
          ...r,
          email,
        })),
      );
      // Half new to the tenant (they join it), half already in it; every fourth a duplicate add.
      const added = i % 4 === 3 ? users[0]! : i % 2 === 0 ? `${unique("pm")}@example.com` : users[(i + 1) % 4]!;
      memberAdds.push(
        call("POST", `${base(tenant)}/projects/${projectId}/members`, {
          as: admin,
          body: { email: added, role: "PROJECT_VIEWER" },
        }).then((r) => ({ ...r, email: added })),
      );
      // Refused: a stranger, a bad body, a bad role, an unknown project, a duplicate of the tenant.
      refused.push(
        call("POST", `${base(tenant)}/projects`, { as: stranger, body: { name: unique("x") } }),
        call("POST", `${base(tenant)}/projects`, { as: admin, body: { name: "" } }),
        call("PUT", `${base(tenant)}/members/${unique("r")}@example.com`, { as: admin, body: { role: "BOSS" } }),
        call("POST", `${base(tenant)}/projects/999999999/members`, {
          as: admin,
          body: { email: `${unique("r")}@example.com`, role: "PROJECT_VIEWER" },
        }),
        call("POST", `${base(tenant)}/projects`, { as: tokens[0], body: { name: unique("p"), id: 7 } }),
      );
    }
    const [creates, puts, adds, refusals] = await Promise.all([
      Promise.all(projectCreates),
      Promise.all(memberPuts),
      Promise.all(memberAdds),
      Promise.all(refused),
    ]);
    for (const r of [...creates, ...puts, ...adds, ...refusals])
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
    expect(statuses(refusals).every((s) => s >= 400)).toBe(true);
    // One create of the taken name won.
    expect(creates.filter((r) => r.name === taken && r.status === 201)).toHaveLength(1);

    const created = creates.filter((r) => r.status === 201);
    const projects = await all<{ id: number; name: string }>(`${base(tenant)}/projects`);
    expect(projects.map((p) => p.id).sort((a, b) => a - b)).toEqual(
      [...before.projects.map((p) => p.id), ...created.map((r) => r.body.id as number)].sort((a, b) => a - b),
    );
    // Each user's project has its creator as PROJECT_ADMIN, and only the projects answered 2xx exist.
    for (const r of created.filter((c) => c.creator)) {
      const members = await all<{ email: string; role: string }>(`${base(tenant)}/projects/${r.body.id}/members`);
      expect(members).toEqual([expect.objectContaining({ email: r.creator, role: "PROJECT_ADMIN" })]);
    }

    const joined = new Set([
      ...before.members.map((m) => m.email),
      ...puts.filter((r) => r.status === 201).map((r) => r.email),
      ...adds.filter((r) => r.status === 201).map((r) => r.email),
    ]);
    const members = await all<{ email: string }>(`${base(tenant)}/members`);
    expect(members.map((m) => m.email).sort()).toEqual([...joined].sort());
    const projectMembers = await all<{ email: string }>(`${base(tenant)}/projects/${projectId}/members`);
    expect(projectMembers.map((m) => m.email).sort()).toEqual(
      [...new Set(adds.filter((r) => r.status === 201).map((r) => r.email))].sort(),
    );
    expect(adds.filter((r) => r.status === 409).every((r) => r.body.code === "conflict")).toBe(true);
    // Nobody is a member of a project without being a member of the tenant.
    const orphans = await env.DB.prepare(
      `select pm.user_email from project_members pm left join tenant_members tm
         on tm.tenant_id = pm.tenant_id and tm.user_email = pm.user_email
       where pm.tenant_id = ? and tm.user_email is null`,
    )
      .bind(tenant)
      .all();
    expect(orphans.results).toEqual([]);
    expect(await all(`${base(other)}/projects`)).toEqual([]);
  });
});

describe("a create by someone no longer in the tenant", () => {
  it("is refused and stores nothing, even when this isolate still holds their membership", async () => {
    const tenant = await createTenant();
    const email = `${unique("leaving")}@example.com`;
    await tenantMember(tenant, email, "TENANT_MEMBER");
    const as = await userToken(email);
    // Their membership is read, and kept in this isolate's access cache for 30 s.
    expect(await all(`${base(tenant)}/projects`, as)).toEqual([]);
    // Removed by another isolate (whose removal this isolate does not hear of), or just now.
    await env.DB.prepare("delete from tenant_members where tenant_id = ? and user_email = ?").bind(tenant, email).run();
    const name = unique("p");
    const res = await call("POST", `${base(tenant)}/projects`, { as, body: { name } });
    expect(res.status).toBe(404);
    expect(await all(`${base(tenant)}/projects`)).toEqual([]);
    const stray = await env.DB.prepare("select count(*) as n from project_members where user_email = ?")
      .bind(email)
      .first<{ n: number }>();
    expect(stray!.n).toBe(0);
    // Added again, they create as before.
    await tenantMember(tenant, email, "TENANT_MEMBER");
    expect((await call("POST", `${base(tenant)}/projects`, { as, body: { name } })).status).toBe(201);
  });
});

describe("a list after the client's own writes", () => {
  it("shows what the client has seen (its bookmark), not the memberships this isolate cached before", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const email = `${unique("reader")}@example.com`;
    await tenantMember(tenant, email, "TENANT_MEMBER");
    const as = await userToken(email);
    expect(await all(`${base(tenant)}/projects`, as)).toEqual([]);
    // Another isolate makes them a member of the project (this isolate's cache does not hear of
    // it) and hands out the bookmark of that write.
    const session = env.DB.withSession("first-primary");
    await session
      .prepare(
        "insert into project_members (tenant_id, project_id, user_email, role, created_at) values (?, ?, ?, 'PROJECT_VIEWER', ?)",
      )
      .bind(tenant, projectId, email, new Date().toISOString())
      .run();
    const bookmark = session.getBookmark()!;
    const seen = await all<{ id: number }>(`${base(tenant)}/projects`, as, { "X-Session-Bookmark": bookmark });
    expect(seen.map((p) => p.id)).toEqual([projectId]);
    // And the project itself.
    const one = await call("GET", `${base(tenant)}/projects/${projectId}`, {
      as,
      headers: { "X-Session-Bookmark": bookmark },
    });
    expect(one.status).toBe(200);
  });

  it("a project member added through the API sees the project in a list at once", async () => {
    const tenant = await createTenant();
    const email = `${unique("new")}@example.com`;
    await tenantMember(tenant, email, "TENANT_MEMBER");
    const as = await userToken(email);
    expect(await all(`${base(tenant)}/projects`, as)).toEqual([]);
    const projectId = await createProject(tenant);
    await projectMember(tenant, projectId, email, "PROJECT_VIEWER");
    expect((await all<{ id: number }>(`${base(tenant)}/projects`, as)).map((p) => p.id)).toEqual([projectId]);
  });
});

describe("a request whose id is not written as an id", () => {
  it("is a 400 and changes nothing, though a number parser would read it as a real id", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const aliases = [`${projectId}.`, `+${projectId}`, ` ${projectId}`, `0${projectId}`, `${projectId}e0`];
    if (projectId === 1) aliases.push("0x1", "1.0");
    for (const alias of aliases) {
      const res = await call("DELETE", `${base(tenant)}/projects/${encodeURIComponent(alias)}`, { as: admin });
      expect(res.status, alias).toBe(400);
      expect(res.body.errors[0].path, alias).toBe("path.projectId");
    }
    expect((await all<{ id: number }>(`${base(tenant)}/projects`)).map((p) => p.id)).toEqual([projectId]);
  });
});
