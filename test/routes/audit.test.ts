/**
 * The audit log (issue 12, point 6): every write under a tenant by an authenticated caller —
 * who, which credential, what, when, outcome — readable by the tenant's admins, paged and filtered.
 */

import { describe, expect, it } from "vitest";
import { call } from "../support/api";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const base = (t: string) => `/api/backend/${t}`;

async function tenantWithAdmin() {
  const tenant = await createTenant();
  const email = `${unique("admin")}@example.com`;
  await tenantMember(tenant, email, "TENANT_ADMIN");
  return { tenant, email, as: await userToken(email) };
}

describe("audit log", () => {
  it("records each write with actor, credential, route and outcome, newest first, without bodies", async () => {
    const { tenant, email, as } = await tenantWithAdmin();
    const name = unique("p");
    const created = await call("POST", `${base(tenant)}/configuration/projects`, { as, body: { name } });
    expect(created.status).toBe(201);
    const duplicate = await call("POST", `${base(tenant)}/configuration/projects`, { as, body: { name } });
    expect(duplicate.status).toBe(409);
    const key = await tenantKey(tenant);
    const renamed = await call("PUT", `${base(tenant)}/configuration/projects/${created.body.id}`, {
      as: key,
      body: { name: unique("renamed") },
    });
    expect(renamed.status).toBe(200);
    // Reads are not writes.
    await call("GET", `${base(tenant)}/configuration/projects`, { as });

    const res = await call("GET", `${base(tenant)}/audit`, { as });
    expect(res.status).toBe(200);
    const mine = res.body.filter((e: any) => e.route.includes("/projects"));
    expect(mine.map((e: any) => [e.method, e.status, e.outcome])).toEqual([
      ["PUT", 200, "success"],
      ["POST", 409, "failure"],
      ["POST", 201, "success"],
    ]);
    const [put, conflict, post] = mine;
    expect(post).toMatchObject({
      actor: email,
      credential: "token",
      route: "/api/backend/:tenant/configuration/projects",
      path: `/api/backend/${tenant}/configuration/projects`,
    });
    expect(post.request_id).toMatch(/.+/);
    expect(conflict.actor).toBe(email);
    expect(put.credential).toMatch(/^api-key:key_/);
    expect(JSON.stringify(res.body)).not.toContain(name);
  });

  it("filters by outcome, method and actor, and pages with a Link cursor", async () => {
    const { tenant, email, as } = await tenantWithAdmin();
    const name = unique("p");
    for (let i = 0; i < 3; i++) await call("POST", `${base(tenant)}/configuration/projects`, { as, body: { name } });

    const failures = await call("GET", `${base(tenant)}/audit?outcome=failure`, { as });
    expect(failures.body.map((e: any) => e.status)).toEqual([409, 409]);
    const byActor = await call("GET", `${base(tenant)}/audit?actor=${encodeURIComponent(email)}&method=POST`, { as });
    expect(byActor.body).toHaveLength(3);
    const nobody = await call("GET", `${base(tenant)}/audit?actor=nobody@example.com`, { as });
    expect(nobody.body).toEqual([]);
    const later = await call("GET", `${base(tenant)}/audit?from_time=2999-01-01`, { as });
    expect(later.body).toEqual([]);

    const first = await call("GET", `${base(tenant)}/audit?limit=2&actor=${encodeURIComponent(email)}`, { as });
    expect(first.body).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1];
    expect(next).toBeDefined();
    const second = await call("GET", next!, { as });
    expect(second.body).toHaveLength(1);
    expect(second.body[0].id).toBeLessThan(first.body[1].id);
  });

  it("is for tenant admins: a member is refused, another tenant sees 404, and a probe is not logged", async () => {
    const { tenant, as } = await tenantWithAdmin();
    const memberEmail = `${unique("m")}@example.com`;
    await tenantMember(tenant, memberEmail, "TENANT_MEMBER");
    expect((await call("GET", `${base(tenant)}/audit`, { as: await userToken(memberEmail) })).status).toBe(403);

    const other = await tenantWithAdmin();
    expect((await call("GET", `${base(tenant)}/audit`, { as: other.as })).status).toBe(404);
    // The other tenant's admin writes to this tenant: 404, and this tenant's log does not learn their name.
    const probe = await call("POST", `${base(tenant)}/configuration/projects`, { as: other.as, body: { name: "x" } });
    expect(probe.status).toBe(404);
    const log = await call("GET", `${base(tenant)}/audit`, { as });
    expect(JSON.stringify(log.body)).not.toContain(other.email);
  });

  it("answers 400 for a bad filter", async () => {
    const { tenant, as } = await tenantWithAdmin();
    const res = await call("GET", `${base(tenant)}/audit?outcome=maybe`, { as });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
  });
});
