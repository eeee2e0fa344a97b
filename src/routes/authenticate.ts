import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { Access } from "../auth/access";
import { findKeyById, findKeyBySecret, keyPrincipal, touchKey } from "../auth/keys";
import type { Principal } from "../auth/principal";
import { spendPrincipalRequest } from "../auth/rate-limit";
import { verifyBearer } from "../auth/tokens";
import { createDb, type Db } from "../db";
import type { ApiKeyRow } from "../db/schema";
import { shardDatabases, tenantDatabase } from "../db/shards";
import type { Env } from "../env";
import { timingSafeEqual } from "../lib/crypto";
import { UnauthenticatedError } from "../lib/errors";

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves the caller from X-SVC-Key or a bearer token; undefined when no credential is sent. */
export async function resolvePrincipal(
  env: Env,
  db: Db | readonly Db[],
  headers: { get(name: string): string | undefined },
  waitUntil: (p: Promise<unknown>) => void,
): Promise<Principal | undefined> {
  const key = headers.get("x-svc-key");
  if (key !== undefined) {
    if (env.ADMIN_API_KEY && timingSafeEqual(key, env.ADMIN_API_KEY)) return adminPrincipal(env);
    const row = await findKeyBySecret(db, key);
    if (!row) throw new UnauthenticatedError("Invalid API key");
    waitUntil(
      keyHome(env, row)
        .then((home) => touchKey(home, row))
        .catch((e) => console.error("touchKey failed", String(e))),
    );
    return keyPrincipal(row, adminPrincipal(env).email);
  }
  // The upload endpoint documents "Authentication: Bearer"; it is accepted everywhere alike.
  const auth = headers.get("authorization") ?? headers.get("authentication");
  if (auth === undefined) return undefined;
  const m = BEARER.exec(auth);
  if (!m) throw new UnauthenticatedError("Authorization must be 'Bearer <token>'");
  const verified = await verifyBearer(env, m[1]!);
  if (verified.principal.kind === "admin") return adminPrincipal(env);
  if (verified.keyId) {
    // A token exchanged for an API key dies with the key.
    const row = await findKeyById(db, verified.keyId);
    if (!row) throw new UnauthenticatedError("The API key behind this token was revoked");
    if (verified.principal.kind === "tenant_key") return keyPrincipal(row, adminPrincipal(env).email);
  }
  return verified.principal;
}

/** Where a key is kept: a tenant's key with the tenant's rows (its shard), a user's key in `DB`. */
async function keyHome(env: Env, row: ApiKeyRow): Promise<Db> {
  return createDb(row.tenantId ? await tenantDatabase(env, row.tenantId) : env.DB);
}

/**
 * The databases a credential's key is looked up in (findKeyBySecret): the request's own, then
 * every other shard's, asked at once. One database when the deployment has one shard.
 */
export function keyDatabases(c: Context<AppEnv>): Db[] {
  const own = c.var.home?.shard ?? 0;
  return [c.var.db, ...shardDatabases(c.env).flatMap((d1, n) => (d1 && n !== own ? [createDb(d1)] : []))];
}

/** The platform administrator, with the configured ADMIN_EMAIL when there is one. */
export function adminPrincipal(env: Pick<Env, "ADMIN_EMAIL">): Principal {
  const email = env.ADMIN_EMAIL?.trim().toLowerCase();
  return email ? { kind: "admin", email } : { kind: "admin" };
}

/** Requires a credential; sets `principal` and the request's `access` checker. */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const principal = await resolvePrincipal(c.env, keyDatabases(c), { get: (n) => c.req.header(n) }, (p) =>
    c.executionCtx.waitUntil(p),
  );
  if (!principal) {
    c.header("WWW-Authenticate", 'Bearer realm="dq-monitor"');
    throw new UnauthenticatedError("Send an API key in X-SVC-Key or a token in Authorization: Bearer");
  }
  await spendPrincipalRequest(c.env, "standard", principal);
  c.set("principal", principal);
  c.set("access", new Access(c.get("db"), principal, c.get("bookmarks")));
  await next();
});
