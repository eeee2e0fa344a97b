import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { actorName } from "../../src/auth/principal";
import { createDb } from "../../src/db";
import { resolvePrincipal } from "../../src/routes/authenticate";
import { ADMIN_KEY, admin, type Credential, call } from "../support/api";
import { describeAuthMatrix } from "../support/auth-matrix";
import { createProject } from "../support/projects";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { forgeToken, userToken } from "../support/tokens";
import { unique } from "../support/unique";

describeAuthMatrix(
  "tenant-scoped API keys",
  async (w) => {
    const res = await call("POST", `/auth/${w.tenant}/apiKeys`, { as: admin, body: { name: "kept" } });
    return { keyId: res.body.id as string };
  },
  [
    { method: "GET", path: (w) => `/auth/${w.tenant}/apiKeys`, role: "TENANT_ADMIN" },
    { method: "POST", path: (w) => `/auth/${w.tenant}/apiKeys`, body: () => ({ name: "x" }), role: "TENANT_ADMIN" },
    { method: "GET", path: (w, x) => `/auth/${w.tenant}/apiKeys/${x.keyId}`, role: "TENANT_ADMIN" },
    { method: "DELETE", path: (w, x) => `/auth/${w.tenant}/apiKeys/${x.keyId}`, role: "TENANT_ADMIN" },
  ],
);

describeAuthMatrix("user-scoped API keys", [
  { method: "GET", path: () => "/auth/api_keys", role: "USER" },
  { method: "POST", path: () => "/auth/api_keys", body: () => ({ name: "x" }), role: "USER" },
  { method: "GET", path: () => "/auth/api_keys/key_doesnotmatter", role: "USER" },
  { method: "DELETE", path: () => "/auth/api_keys/key_doesnotmatter", role: "USER" },
]);

describe("bootstrap path", () => {
  it("tenant -> tenant key -> authenticated call, on a fresh tenant", async () => {
    const tenant = await createTenant();
    const created = await call("POST", `/auth/${tenant}/apiKeys`, { as: admin, body: { name: "ci" } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^key_/),
      name: "ci",
      key: expect.stringMatching(/^dqm_[0-9A-Za-z]{40}$/),
      prefix: created.body.key.slice(0, 12),
      created_at: expect.any(String),
      last_used_at: null,
    });
    expect(created.headers.get("deprecation")).toMatch(/^@\d+$/);
    expect(created.headers.get("link")).toBe('</auth/api_keys>; rel="successor-version"');

    const as = { key: created.body.key };
    const project = await call("POST", `/api/backend/${tenant}/configuration/projects`, { as, body: { name: "p" } });
    expect(project.status).toBe(201);
    // The administrator made the key and no ADMIN_EMAIL is configured: its name, not the key's id.
    expect(project.body.created_by).toBe("platform-admin");
  });
});

describe("created_by is the e-mail of the person behind the credential (issue 10, point 5)", () => {
  it("a tenant key created by a user records the user's e-mail on what it creates, directly or by token", async () => {
    const tenant = await createTenant();
    const email = `${unique("owner")}@example.com`;
    await tenantMember(tenant, email, "TENANT_ADMIN");
    const created = await call("POST", `/auth/${tenant}/apiKeys`, { as: await userToken(email), body: { name: "ci" } });
    expect(created.status).toBe(201);
    const byKey = await call("POST", `/api/backend/${tenant}/configuration/projects`, {
      as: { key: created.body.key },
      body: { name: unique("p") },
    });
    expect(byKey.body.created_by).toBe(email);
    const token = await call("POST", "/auth/token", { body: { api_key: created.body.key } });
    const byToken = await call("POST", `/api/backend/${tenant}/configuration/projects`, {
      as: { token: token.body.access_token },
      body: { name: unique("p") },
    });
    expect(byToken.body.created_by).toBe(email);
  });

  it("the admin key is its configured ADMIN_EMAIL, and platform-admin without one", async () => {
    const db = createDb(env.DB);
    const headers = { get: (n: string) => (n === "x-svc-key" ? ADMIN_KEY : undefined) };
    const configured = await resolvePrincipal({ ...env, ADMIN_EMAIL: "Ops@Example.com" }, db, headers, () => {});
    expect(actorName(configured!)).toBe("ops@example.com");
    const unset = await resolvePrincipal({ ...env, ADMIN_EMAIL: "" }, db, headers, () => {});
    expect(actorName(unset!)).toBe("platform-admin");
  });
});

/** Calls the app with ADMIN_EMAIL configured as `adminEmail` (the pool's Worker has it empty). */
async function callWithAdminEmail(adminEmail: string, method: string, path: string, as: Credential, body?: unknown) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (as && "key" in as) headers["x-svc-key"] = as.key;
  if (as && "token" in as) headers.authorization = `Bearer ${as.token}`;
  const ctx = createExecutionContext();
  const res = await createApp().request(
    path,
    { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) },
    { ...env, ADMIN_EMAIL: adminEmail },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as any };
}

describe("created_by of what a key made by the platform administrator creates (issue 35, point 7)", () => {
  const configured = "Ops@Example.com";

  it("is ADMIN_EMAIL, on projects, connections and assets, by the key or a token exchanged for it", async () => {
    const tenant = await createTenant();
    const key = await callWithAdminEmail(configured, "POST", `/auth/${tenant}/apiKeys`, admin, { name: "ci" });
    expect(key.status).toBe(201);
    const token = await callWithAdminEmail(configured, "POST", "/auth/token", undefined, { api_key: key.body.key });
    for (const as of [{ key: key.body.key }, { token: token.body.access_token }]) {
      const post = (path: string, body: unknown) =>
        callWithAdminEmail(configured, "POST", `/api/backend/${tenant}/configuration${path}`, as, body);
      const project = await post("/projects", { name: unique("p") });
      expect(project.body.created_by).toBe("ops@example.com");
      const connection = await post(`/projects/${project.body.id}/connections`, {
        name: "lake",
        type: "S3",
        payload: { bucket: "lake" },
        credential: { type: "AWS", payload: { access_key: "AKIAEXAMPLE", secret_key: "secret" } },
      });
      expect(connection.body.created_by).toBe("ops@example.com");
      const asset = await post(`/projects/${project.body.id}/assets`, {
        name: "orders",
        type: "S3",
        connection_id: connection.body.id,
        payload: { path: "orders/*.csv", format: "csv" },
      });
      expect(asset.body.created_by).toBe("ops@example.com");
    }
  });

  it("is ADMIN_EMAIL once configured, for a key made while it was unset; platform-admin before", async () => {
    const tenant = await createTenant();
    const made = await call("POST", `/auth/${tenant}/apiKeys`, { as: admin, body: { name: "early" } });
    const as = { key: made.body.key as string };
    const before = await call("POST", `/api/backend/${tenant}/configuration/projects`, { as, body: { name: "p1" } });
    expect(before.body.created_by).toBe("platform-admin");
    const after = await callWithAdminEmail(configured, "POST", `/api/backend/${tenant}/configuration/projects`, as, {
      name: "p2",
    });
    expect(after.body.created_by).toBe("ops@example.com");
    // The audit log names the same person, and the key as the credential.
    const audit = await call("GET", `/api/backend/${tenant}/audit`, { as: admin });
    const actors = audit.body.map((e: { actor: string; credential: string }) => `${e.actor} ${e.credential}`);
    expect(actors).toEqual(
      expect.arrayContaining([`platform-admin api-key:${made.body.id}`, `ops@example.com api-key:${made.body.id}`]),
    );
  });

  it("a key made by a key the administrator made acts for the administrator too", async () => {
    const tenant = await createTenant();
    const first = await call("POST", `/auth/${tenant}/apiKeys`, { as: admin, body: { name: "first" } });
    const second = await call("POST", `/auth/${tenant}/apiKeys`, {
      as: { key: first.body.key },
      body: { name: "2nd" },
    });
    const project = await callWithAdminEmail(
      configured,
      "POST",
      `/api/backend/${tenant}/configuration/projects`,
      { key: second.body.key },
      { name: "p" },
    );
    expect(project.body.created_by).toBe("ops@example.com");
  });
});

describe("tenant-scoped API keys", () => {
  it("lists and gets keys without secrets, deletes them, and a deleted key stops working", async () => {
    const tenant = await createTenant();
    const key = await tenantKey(tenant);
    const list = await call("GET", `/auth/${tenant}/apiKeys`, { as: key });
    expect(list.status).toBe(200);
    expect(list.body.keys).toHaveLength(1);
    const [item] = list.body.keys;
    expect(Object.keys(item).sort()).toEqual(["created_at", "id", "last_used_at", "name", "prefix"]);
    expect(JSON.stringify(list.body)).not.toContain(key.key);
    const one = await call("GET", `/auth/${tenant}/apiKeys/${item.id}`, { as: admin });
    expect(one.body).toEqual(item);
    expect(JSON.stringify(one.body)).not.toContain(key.key);

    // Stored as a digest only.
    const row = await env.DB.prepare("select * from api_keys where id = ?").bind(item.id).first();
    expect(JSON.stringify(row)).not.toContain(key.key);
    expect(row?.hash).toMatch(/^[0-9a-f]{64}$/);

    const del = await call("DELETE", `/auth/${tenant}/apiKeys/${item.id}`, { as: admin });
    expect(del).toMatchObject({ status: 200, body: { message: expect.any(String) } });
    expect((await call("GET", `/auth/${tenant}/apiKeys`, { as: key })).status).toBe(401);
    expect((await call("DELETE", `/auth/${tenant}/apiKeys/${item.id}`, { as: admin })).status).toBe(404);
  });

  it("records when a key was last used", async () => {
    const tenant = await createTenant();
    const key = await tenantKey(tenant);
    await call("GET", `/auth/${tenant}/apiKeys`, { as: key });
    const list = await call("GET", `/auth/${tenant}/apiKeys`, { as: admin });
    expect(Date.parse(list.body.keys[0].last_used_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("never shows one tenant's key to another tenant", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const created = await call("POST", `/auth/${a}/apiKeys`, { as: admin, body: { name: "a" } });
    expect((await call("GET", `/auth/${b}/apiKeys/${created.body.id}`, { as: admin })).status).toBe(404);
    expect((await call("DELETE", `/auth/${b}/apiKeys/${created.body.id}`, { as: admin })).status).toBe(404);
    expect((await call("GET", `/auth/${a}/apiKeys`, { as: await tenantKey(b) })).status).toBe(404);
  });

  it("validates the body and the tenant id", async () => {
    const tenant = await createTenant();
    const bad = await call("POST", `/auth/${tenant}/apiKeys`, { as: admin, body: { name: "" } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([{ path: "body.name", message: expect.any(String) }]);
    const missing = await call("POST", `/auth/${tenant}/apiKeys`, { as: admin, body: {} });
    expect(missing.body.errors[0].path).toBe("body.name");
    expect((await call("GET", "/auth/Not_A_Tenant/apiKeys", { as: admin })).status).toBe(400);
    expect((await call("GET", "/auth/no-such-tenant/apiKeys", { as: admin })).status).toBe(404);
  });
});

describe("user-scoped API keys", () => {
  it("lets any user create, list, get and revoke their own keys, which act as that user", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const email = `${unique("u")}@example.com`;
    await tenantMember(tenant, email, "TENANT_ADMIN");
    const as = await userToken(email);

    const created = await call("POST", "/auth/api_keys", { as, body: { name: "laptop" } });
    expect(created.status).toBe(201);
    const key = { key: created.body.key as string };
    // The key acts as the user, with the user's roles.
    const project = await call("GET", `/api/backend/${tenant}/configuration/projects/${projectId}`, { as: key });
    expect(project.status).toBe(200);

    const list = await call("GET", "/auth/api_keys", { as: key });
    expect(list.body.keys.map((k: { id: string }) => k.id)).toEqual([created.body.id]);
    expect(JSON.stringify(list.body)).not.toContain(key.key);

    // Another user sees none of them.
    const other = await userToken(`${unique("o")}@example.com`);
    expect((await call("GET", "/auth/api_keys", { as: other })).body.keys).toEqual([]);
    expect((await call("GET", `/auth/api_keys/${created.body.id}`, { as: other })).status).toBe(404);
    expect((await call("DELETE", `/auth/api_keys/${created.body.id}`, { as: other })).status).toBe(404);

    expect((await call("DELETE", `/auth/api_keys/${created.body.id}`, { as })).status).toBe(200);
    expect((await call("GET", "/auth/api_keys", { as: key })).status).toBe(401);
  });

  it("a user without memberships can manage keys but reach no tenant", async () => {
    const tenant = await createTenant();
    const as = await userToken(`${unique("lonely")}@example.com`);
    expect((await call("POST", "/auth/api_keys", { as, body: { name: "k" } })).status).toBe(201);
    expect((await call("GET", `/api/backend/${tenant}/configuration/projects`, { as })).status).toBe(404);
  });
});

describe("POST /auth/token", () => {
  it("exchanges a tenant key for a short-lived JWT that acts as the key", async () => {
    const tenant = await createTenant();
    const key = await tenantKey(tenant);
    const res = await call("POST", "/auth/token", { body: { api_key: key.key } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: "Bearer", expires_in: 900 });
    const claims = decodeJwt(res.body.access_token);
    expect(claims).toMatchObject({ iss: "dq-monitor", aud: "dq-monitor-api", act: "tenant_key", tid: tenant });
    expect(claims.exp! - claims.iat!).toBe(900);
    const as = { token: res.body.access_token };
    expect((await call("GET", `/auth/${tenant}/apiKeys`, { as })).status).toBe(200);
    // Revoking the key revokes its tokens.
    const keys = await call("GET", `/auth/${tenant}/apiKeys`, { as: admin });
    await call("DELETE", `/auth/${tenant}/apiKeys/${keys.body.keys[0].id}`, { as: admin });
    expect((await call("GET", `/auth/${tenant}/apiKeys`, { as })).status).toBe(401);
  });

  it("mints a user's token for the platform administrator only", async () => {
    const email = `${unique("ada")}@example.com`;
    const ok = await call("POST", "/auth/token", { as: admin, body: { user: email.toUpperCase() } });
    expect(ok.status).toBe(200);
    expect(decodeJwt(ok.body.access_token)).toMatchObject({ sub: email, act: "user" });
    expect((await call("POST", "/auth/token", { body: { user: email } })).status).toBe(401);
    const tenant = await createTenant();
    const asTenantKey = await call("POST", "/auth/token", { as: await tenantKey(tenant), body: { user: email } });
    expect(asTenantKey.status).toBe(403);
    const asUser = await call("POST", "/auth/token", { as: { token: ok.body.access_token }, body: { user: email } });
    expect(asUser.status).toBe(403);
  });

  it("refuses unknown keys, bad bodies and both fields at once", async () => {
    expect((await call("POST", "/auth/token", { body: { api_key: "dqm_nope" } })).status).toBe(401);
    expect((await call("POST", "/auth/token", { body: {} })).status).toBe(400);
    expect((await call("POST", "/auth/token", { body: { api_key: "x", user: "a@b.co" } })).status).toBe(400);
    expect((await call("POST", "/auth/token", { body: { user: "not-an-email" } })).status).toBe(400);
    expect((await call("POST", "/auth/token", { raw: "{" })).body.code).toBe("malformed_json");
  });

  it("the admin key yields an admin token", async () => {
    const res = await call("POST", "/auth/token", { body: { api_key: ADMIN_KEY } });
    const tenants = await call("GET", "/backend/private/configuration/tenants", {
      as: { token: res.body.access_token },
    });
    expect(tenants.status).toBe(200);
  });
});

describe("bearer tokens", () => {
  it("refuses tokens with the wrong audience, issuer or missing claims, and says when one expired", async () => {
    const path = "/backend/private/configuration/tenants";
    const claims = { act: "admin", sub: "admin" };
    for (const token of [
      await forgeToken(claims, { audience: "someone-else" }),
      await forgeToken(claims, { issuer: "https://evil.example" }),
      await forgeToken({ sub: "admin" }),
      await forgeToken({ act: "tenant_key", sub: "x" }),
    ]) {
      expect((await call("GET", path, { as: { token } })).status).toBe(401);
    }
    const expired = await forgeToken(claims, { expiresIn: Math.floor(Date.now() / 1000) - 5 });
    const res = await call("GET", path, { as: { token: expired } });
    expect(res.body.code).toBe("token_expired");
    expect((await call("GET", path, { as: { token: await forgeToken(claims) } })).status).toBe(200);
  });

  it("accepts the upload endpoint's Authentication header and refuses a non-Bearer scheme", async () => {
    const token = await forgeToken({ act: "admin", sub: "admin" });
    const path = "/backend/private/configuration/tenants";
    expect((await call("GET", path, { headers: { Authentication: `Bearer ${token}` } })).status).toBe(200);
    const basic = await call("GET", path, { headers: { Authorization: "Basic YWRtaW46YWRtaW4=" } });
    expect(basic.status).toBe(401);
    expect((await call("GET", path)).headers.get("www-authenticate")).toContain("Bearer");
  });
});
