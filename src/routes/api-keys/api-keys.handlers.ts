import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import {
  createApiKey,
  deleteApiKey,
  deleteApiKeyStatement,
  getApiKey,
  insertApiKey,
  type KeyOwner,
  listApiKeys,
  newApiKey,
  publicKey,
} from "../../auth/keys";
import { actorName, personEmail } from "../../auth/principal";
import { NotFoundError } from "../../lib/errors";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { deprecationHeaders } from "../openapi";
import { afterKey, listed } from "../pagination";
import type * as routes from "./api-keys.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

// User-scoped keys: any user, for themselves.

const userOwner = (c: { var: AppEnv["Variables"] }): KeyOwner => ({ userEmail: c.var.access.user() });

export const listUserKeys: Handler<"listUserKeys"> = async (c) => {
  const owner = userOwner(c);
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => listApiKeys(c.var.db, owner, limit, afterKey(cursor, "string")),
    (r) => [r.id],
  );
  return c.json({ keys: rows.map(publicKey) }, 200);
};

export const createUserKey: Handler<"createUserKey"> = async (c) => {
  const owner = userOwner(c);
  const { row, secret } = await createApiKey(
    c.var.db,
    owner,
    c.req.valid("json").name,
    actorName(c.var.principal),
    personEmail(c.var.principal),
  );
  return c.json({ ...publicKey(row), key: secret }, 201);
};

export const getUserKey: Handler<"getUserKey"> = async (c) => {
  const row = await getApiKey(c.var.db, userOwner(c), c.req.valid("param").keyId);
  if (!row) throw new NotFoundError("API key");
  return c.json(publicKey(row), 200);
};

export const deleteUserKey: Handler<"deleteUserKey"> = async (c) => {
  const { keyId } = c.req.valid("param");
  if (!(await deleteApiKey(c.var.db, userOwner(c), keyId))) throw new NotFoundError("API key");
  return c.json({ message: `API key ${keyId} revoked` }, 200);
};

// Tenant-scoped keys (deprecated): platform administrator and tenant admins.

async function tenantOwner(c: { var: AppEnv["Variables"]; header(n: string, v: string): void }, tenant: string) {
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  for (const [name, value] of Object.entries(deprecationHeaders("/auth/api_keys"))) c.header(name, value);
  return { tenantId: tenant } satisfies KeyOwner;
}

export const listTenantKeys: Handler<"listTenantKeys"> = async (c) => {
  const owner = await tenantOwner(c, c.req.valid("param").tenant);
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => listApiKeys(c.var.db, owner, limit, afterKey(cursor, "string")),
    (r) => [r.id],
  );
  return c.json({ keys: rows.map(publicKey) }, 200);
};

/** One round trip: the key and its audit row are one batch (the tenant check is the isolate's, src/auth/access-cache.ts). */
export const createTenantKey: Handler<"createTenantKey"> = async (c) => {
  const owner = await tenantOwner(c, c.req.valid("param").tenant);
  const { row, secret } = await newApiKey(
    owner,
    c.req.valid("json").name,
    actorName(c.var.principal),
    personEmail(c.var.principal),
  );
  await c.var.db.batch([insertApiKey(c.var.db, row), auditInBatch(c, 201)]);
  auditedInBatch(c, 201);
  return c.json({ ...publicKey(row), key: secret }, 201);
};

export const getTenantKey: Handler<"getTenantKey"> = async (c) => {
  const { tenant, keyId } = c.req.valid("param");
  const row = await getApiKey(c.var.db, await tenantOwner(c, tenant), keyId);
  if (!row) throw new NotFoundError("API key");
  return c.json(publicKey(row), 200);
};

/** One round trip: the delete and its audit row (written only if a key went) are one batch. */
export const deleteTenantKey: Handler<"deleteTenantKey"> = async (c) => {
  const { tenant, keyId } = c.req.valid("param");
  const owner = await tenantOwner(c, tenant);
  const [gone] = await c.var.db.batch([deleteApiKeyStatement(c.var.db, owner, keyId), auditInBatch(c, 200)]);
  if (gone.length === 0) throw new NotFoundError("API key");
  auditedInBatch(c, 200);
  return c.json({ message: `API key ${keyId} revoked` }, 200);
};
