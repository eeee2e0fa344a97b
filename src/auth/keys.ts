import { and, asc, eq, gt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db";
import { apiKeys } from "../db/schema";
import { sha256Hex } from "../lib/crypto";
import { randomId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { PLATFORM_ADMIN, type Principal } from "./principal";

const KEY_PREFIX = "dqm_";
/** How many characters of a key are kept in clear for recognition ("dqm_" + 8). */
const DISPLAY_PREFIX_LENGTH = 12;
/** last_used_at is written at most this often per key, so reads do not turn into writes. */
const LAST_USED_RESOLUTION_MS = 60_000;

export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** Public view of a key: never the secret nor its digest. */
export function publicKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
  };
}

/**
 * A new key for a tenant or a user, not stored yet (insertApiKey stores it): the row and the
 * secret, which is never stored.
 */
export async function newApiKey(
  owner: KeyOwner,
  name: string,
  createdBy: string,
  createdByEmail?: string,
): Promise<{ row: ApiKeyRow; secret: string }> {
  const secret = `${KEY_PREFIX}${randomId(40)}`;
  const row: ApiKeyRow = {
    id: `key_${randomId(16)}`,
    tenantId: "tenantId" in owner ? owner.tenantId : null,
    userEmail: "userEmail" in owner ? owner.userEmail : null,
    name,
    prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH),
    hash: await sha256Hex(secret),
    createdBy,
    createdByEmail: createdByEmail ?? null,
    createdAt: nowIso(),
    lastUsedAt: null,
  };
  return { row, secret };
}

/** The statement that stores a key of newApiKey, for the caller's batch. */
export const insertApiKey = (db: Db, row: ApiKeyRow) => db.insert(apiKeys).values(row);

/** Creates a key for a tenant or a user; returns the row and the secret, which is never stored. */
export async function createApiKey(
  db: Db,
  owner: KeyOwner,
  name: string,
  createdBy: string,
  createdByEmail?: string,
): Promise<{ row: ApiKeyRow; secret: string }> {
  const key = await newApiKey(owner, name, createdBy, createdByEmail);
  await insertApiKey(db, key.row);
  return key;
}

/**
 * Keys verified lately, kept in the isolate for KEY_CACHE_MS so an authenticated request need not
 * ask D1 who its key is: by digest (X-SVC-Key) and by id (tokens exchanged for a key). A deleted
 * key is forgotten at once by the isolate that deletes it, and stops working everywhere within
 * KEY_CACHE_MS. Unknown keys are never cached (they are not worth memory an attacker could fill).
 */
export const KEY_CACHE_MS = 30_000;
const MAX_CACHED_KEYS = 1000;
const keysByHash = new Map<string, { row: ApiKeyRow; until: number }>();
const keysById = new Map<string, { row: ApiKeyRow; until: number }>();

function remember(row: ApiKeyRow): void {
  const until = Date.now() + KEY_CACHE_MS;
  for (const [cache, id] of [
    [keysByHash, row.hash],
    [keysById, row.id],
  ] as const) {
    if (cache.size >= MAX_CACHED_KEYS) cache.delete(cache.keys().next().value!);
    cache.set(id, { row, until });
  }
}

function recalled(cache: Map<string, { row: ApiKeyRow; until: number }>, id: string): ApiKeyRow | undefined {
  const hit = cache.get(id);
  if (!hit) return undefined;
  if (hit.until > Date.now()) return hit.row;
  cache.delete(id);
  return undefined;
}

/** Forgets a key in this isolate (it was deleted). */
export function forgetKey(id: string): void {
  const hit = keysById.get(id);
  if (hit) keysByHash.delete(hit.row.hash);
  keysById.delete(id);
}

/**
 * The key `where` finds in any of `dbs`, asked at once: a user's key is in `DB`, a tenant's key in
 * the tenant's shard (src/db/shards.ts), and a credential does not say which.
 */
async function findKeyIn(dbs: Db | readonly Db[], where: SQL): Promise<ApiKeyRow | undefined> {
  const rows = await Promise.all((Array.isArray(dbs) ? dbs : [dbs]).map((db) => db.query.apiKeys.findFirst({ where })));
  return rows.find((row) => row !== undefined);
}

/** Finds the key a secret belongs to, by digest, in `dbs` (findKeyIn); undefined for an unknown or malformed secret. */
export async function findKeyBySecret(dbs: Db | readonly Db[], secret: string): Promise<ApiKeyRow | undefined> {
  if (!secret.startsWith(KEY_PREFIX) || secret.length > 128) return undefined;
  const hash = await sha256Hex(secret);
  const cached = recalled(keysByHash, hash);
  if (cached) return cached;
  const row = await findKeyIn(dbs, eq(apiKeys.hash, hash));
  if (row) remember(row);
  return row;
}

/** The key behind a token (by id), from the isolate's cache while it is fresh; undefined once deleted. */
export async function findKeyById(dbs: Db | readonly Db[], id: string): Promise<ApiKeyRow | undefined> {
  const cached = recalled(keysById, id);
  if (cached) return cached;
  const row = await findKeyIn(dbs, eq(apiKeys.id, id));
  if (row) remember(row);
  return row;
}

/**
 * The principal a stored key acts as. A tenant key acts for the person who made it: the e-mail
 * recorded with it, or its maker's name when that is an e-mail (keys made before the e-mail had a
 * column of its own); a key the platform administrator made carries `adminEmail` (ADMIN_EMAIL as
 * configured now), so configuring it later names the maker of earlier keys too.
 */
export function keyPrincipal(row: ApiKeyRow, adminEmail?: string): Principal {
  if (row.tenantId) {
    const madeByAdmin = row.createdBy === PLATFORM_ADMIN;
    const email =
      row.createdByEmail ?? (row.createdBy.includes("@") ? row.createdBy : madeByAdmin ? adminEmail : undefined);
    return {
      kind: "tenant_key",
      tenantId: row.tenantId,
      keyId: row.id,
      ...(email ? { email } : {}),
      ...(madeByAdmin ? { madeByAdmin } : {}),
    };
  }
  return { kind: "user", email: row.userEmail!, keyId: row.id };
}

/** Records the use of a key, at most once per minute per key. */
export async function touchKey(db: Db, row: ApiKeyRow): Promise<void> {
  const now = Date.now();
  if (row.lastUsedAt && now - Date.parse(row.lastUsedAt) < LAST_USED_RESOLUTION_MS) return;
  // The row may be the cached one: the next requests of this isolate skip the write too.
  row.lastUsedAt = new Date(now).toISOString();
  await db
    .update(apiKeys)
    .set({ lastUsedAt: new Date(now).toISOString() })
    .where(
      and(
        eq(apiKeys.id, row.id),
        sql`(${apiKeys.lastUsedAt} IS NULL OR ${apiKeys.lastUsedAt} < ${new Date(now - LAST_USED_RESOLUTION_MS).toISOString()})`,
      ),
    );
}

/** Whose keys: a tenant's (tenant-scoped) or a user's (user-scoped). */
export type KeyOwner = { tenantId: string } | { userEmail: string };

function ownedBy(owner: KeyOwner) {
  return "tenantId" in owner ? eq(apiKeys.tenantId, owner.tenantId) : eq(apiKeys.userEmail, owner.userEmail);
}

/** One page of an owner's keys in id order, `limit + 1` rows so the caller can tell if more follow. */
export function listApiKeys(db: Db, owner: KeyOwner, limit: number, after?: string) {
  return db.query.apiKeys.findMany({
    where: and(ownedBy(owner), after === undefined ? undefined : gt(apiKeys.id, after)),
    orderBy: asc(apiKeys.id),
    limit: limit + 1,
  });
}

export function getApiKey(db: Db, owner: KeyOwner, id: string) {
  return db.query.apiKeys.findFirst({ where: and(ownedBy(owner), eq(apiKeys.id, id)) });
}

/**
 * The statement that deletes an owner's key, for the caller's batch: no id back when the owner has
 * no such key. The key is forgotten in this isolate at once.
 */
export function deleteApiKeyStatement(db: Db, owner: KeyOwner, id: string) {
  forgetKey(id);
  return db
    .delete(apiKeys)
    .where(and(ownedBy(owner), eq(apiKeys.id, id)))
    .returning({ id: apiKeys.id });
}

/** Deletes an owner's key; false when the owner has no such key. */
export async function deleteApiKey(db: Db, owner: KeyOwner, id: string): Promise<boolean> {
  return (await deleteApiKeyStatement(db, owner, id)).length > 0;
}
