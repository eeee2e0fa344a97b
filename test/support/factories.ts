import { SignJWT } from "jose";
import { ADMIN_KEY, admin, type Credential, call, TOKEN_SECRET } from "./api";

let seq = 0;
/** A name unique within the test run, so files and tests never collide in shared storage. */
export function unique(prefix: string): string {
  seq += 1;
  return `${prefix}-${Date.now().toString(36)}${seq.toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

function expectStatus(res: { status: number; body: unknown }, status: number, what: string) {
  if (res.status !== status)
    throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

/** Creates a tenant through the admin API; returns its id. */
export async function createTenant(overrides: Record<string, unknown> = {}): Promise<string> {
  const id = unique("t");
  const res = await call("PUT", `/backend/private/configuration/tenants/${id}`, {
    as: admin,
    body: { name: `Tenant ${id}`, ...overrides },
  });
  expectStatus(res, 201, "create tenant");
  return id;
}

/** Creates a tenant-scoped key (tenant-admin rights); returns it as a credential. */
export async function tenantKey(tenant: string): Promise<Credential & { key: string }> {
  const res = await call("POST", `/auth/${tenant}/apiKeys`, { as: admin, body: { name: unique("key") } });
  expectStatus(res, 201, "create tenant key");
  return { key: res.body.key };
}

/** A service token for a user, minted by the platform administrator. */
export async function userToken(email: string): Promise<Credential & { token: string }> {
  const res = await call("POST", "/auth/token", { as: { key: ADMIN_KEY }, body: { user: email } });
  expectStatus(res, 200, "mint user token");
  return { token: res.body.access_token };
}

/** Sets a user's tenant role. */
export async function tenantMember(tenant: string, email: string, role: "TENANT_ADMIN" | "TENANT_MEMBER") {
  const res = await call("PUT", `/api/backend/${tenant}/configuration/members/${email}`, { as: admin, body: { role } });
  if (res.status !== 200 && res.status !== 201) expectStatus(res, 201, "set tenant member");
}

/** Creates a project; returns its id. */
export async function createProject(tenant: string, as: Credential = admin): Promise<number> {
  const res = await call("POST", `/api/backend/${tenant}/configuration/projects`, {
    as,
    body: { name: unique("project") },
  });
  expectStatus(res, 201, "create project");
  return res.body.id;
}

/** Adds a user to a project with a role (the user joins the tenant as TENANT_MEMBER). */
export async function projectMember(tenant: string, projectId: number, email: string, role: string) {
  const res = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/members`, {
    as: admin,
    body: { email, role },
  });
  expectStatus(res, 201, "add project member");
}

/** A JWT signed like the service's, with claims and expiry of the test's choosing. */
export async function forgeToken(
  claims: Record<string, unknown>,
  opts: { secret?: string; expiresIn?: string | number; issuer?: string; audience?: string; alg?: string } = {},
): Promise<string> {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: opts.alg ?? "HS256" })
    .setIssuer(opts.issuer ?? "dq-monitor")
    .setAudience(opts.audience ?? "dq-monitor-api")
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn ?? "5m");
  return jwt.sign(new TextEncoder().encode(opts.secret ?? TOKEN_SECRET));
}
