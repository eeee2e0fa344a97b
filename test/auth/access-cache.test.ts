import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ACCESS_CACHE_MS } from "../../src/auth/access-cache";
import { admin, call } from "../support/api";
import { createProject, projectMember } from "../support/projects";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { forgeToken, userToken } from "../support/tokens";
import { unique } from "../support/unique";

afterEach(() => {
  vi.useRealTimers();
});

const projectsOf = (tenant: string) => `/api/backend/${tenant}/configuration/projects`;

/** A tenant with a project, and a user who is a PROJECT_VIEWER of it, with a token. */
async function viewer() {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const email = `${unique("viewer")}@example.com`;
  await projectMember(tenant, projectId, email, "PROJECT_VIEWER");
  return { tenant, projectId, email, as: await userToken(email) };
}

describe("memberships cached in the isolate", () => {
  it("a member removed through the API loses access at once", async () => {
    const { tenant, projectId, email, as } = await viewer();
    const project = `${projectsOf(tenant)}/${projectId}`;
    expect((await call("GET", project, { as })).status).toBe(200);
    expect((await call("DELETE", `${project}/members/${email}`, { as: admin })).status).toBe(200);
    expect((await call("GET", project, { as })).status).toBe(404);
    const list = await call("GET", projectsOf(tenant), { as });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
    expect((await call("DELETE", `/api/backend/${tenant}/configuration/members/${email}`, { as: admin })).status).toBe(
      200,
    );
    expect((await call("GET", projectsOf(tenant), { as })).status).toBe(404);
  });

  it("a tenant admin demoted through the API loses the role at once", async () => {
    const tenant = await createTenant();
    const email = `${unique("admin")}@example.com`;
    await tenantMember(tenant, email, "TENANT_ADMIN");
    const as = await userToken(email);
    const members = `/api/backend/${tenant}/configuration/members`;
    expect((await call("GET", members, { as })).status).toBe(200);
    await tenantMember(tenant, email, "TENANT_MEMBER");
    expect((await call("GET", members, { as })).status).toBe(403);
  });

  it("a member added is seen at once (a caller found to be no member is not cached)", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const email = `${unique("late")}@example.com`;
    const as = await userToken(email);
    expect((await call("GET", projectsOf(tenant), { as })).status).toBe(404);
    await projectMember(tenant, projectId, email, "PROJECT_VIEWER");
    const list = await call("GET", projectsOf(tenant), { as });
    expect(list.status).toBe(200);
    expect(list.body.map((p: { id: number }) => p.id)).toEqual([projectId]);
  });

  it("a membership removed elsewhere (another isolate) stops working within ACCESS_CACHE_MS", async () => {
    const { tenant, projectId, email, as } = await viewer();
    const project = `${projectsOf(tenant)}/${projectId}`;
    expect((await call("GET", project, { as })).status).toBe(200);
    // Removed behind this isolate's back, as another isolate's DELETE would: the cached standing holds…
    await env.DB.prepare("delete from project_members where tenant_id = ? and user_email = ?")
      .bind(tenant, email)
      .run();
    await env.DB.prepare("delete from tenant_members where tenant_id = ? and user_email = ?").bind(tenant, email).run();
    // …but the project's own membership is read with the project, fresh: that project is gone for the caller.
    expect((await call("GET", project, { as })).status).toBe(404);
    expect((await call("GET", projectsOf(tenant), { as })).status).toBe(200);
    // Once the entry's time is over, the tenant is gone for the caller too.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + ACCESS_CACHE_MS + 1);
    expect((await call("GET", projectsOf(tenant), { as })).status).toBe(404);
  });

  it("another tenant's resources stay a 404 for a cached caller", async () => {
    const { projectId, as } = await viewer();
    const other = await createTenant();
    expect((await call("GET", projectsOf(other), { as })).status).toBe(404);
    expect((await call("GET", `${projectsOf(other)}/${projectId}`, { as })).status).toBe(404);
    const key = await tenantKey(other);
    expect((await call("GET", `${projectsOf(other)}/${projectId}`, { as: key })).status).toBe(404);
  });
});

describe("verified tokens cached in the isolate", () => {
  it("a cached token is refused once it expires", async () => {
    const tenant = await createTenant();
    const email = `${unique("brief")}@example.com`;
    await tenantMember(tenant, email, "TENANT_MEMBER");
    const token = await forgeToken({ act: "user", sub: email }, { expiresIn: "20s" });
    expect((await call("GET", projectsOf(tenant), { as: { token } })).status).toBe(200);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 21_000);
    const res = await call("GET", projectsOf(tenant), { as: { token } });
    expect(res.status).toBe(401);
    expect(res.body.detail).toBe("The token has expired");
  });

  it("a token whose API key is deleted through the API stops working at once", async () => {
    const tenant = await createTenant();
    const key = await tenantKey(tenant);
    const minted = await call("POST", "/auth/token", { body: { api_key: key.key } });
    expect(minted.status).toBe(200);
    const as = { token: minted.body.access_token as string };
    expect((await call("GET", projectsOf(tenant), { as })).status).toBe(200);
    const keys = await call("GET", `/auth/${tenant}/apiKeys`, { as: admin });
    for (const k of keys.body.keys) {
      expect((await call("DELETE", `/auth/${tenant}/apiKeys/${k.id}`, { as: admin })).status).toBe(200);
    }
    expect((await call("GET", projectsOf(tenant), { as })).status).toBe(401);
  });
});
