/** Tenants: created through the platform administrator's API, with keys and members. */

import { admin, type Credential, call } from "./api";
import { expectStatus, unique } from "./unique";

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

/** Sets a user's tenant role. */
export async function tenantMember(tenant: string, email: string, role: "TENANT_ADMIN" | "TENANT_MEMBER") {
  const res = await call("PUT", `/api/backend/${tenant}/configuration/members/${email}`, { as: admin, body: { role } });
  if (res.status !== 200 && res.status !== 201) expectStatus(res, 201, "set tenant member");
}
