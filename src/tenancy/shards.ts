/**
 * The directory's writes (docs/decisions/0013-tenant-shards.md): where a new tenant is placed, and
 * the id ranges ("leases") the shards allocate from, so that a tenant's rows keep their ids on
 * whichever shard they move to.
 */
import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { schema } from "../db";
import { LEASE_SIZE, type ShardEnv, shardDatabase } from "../db/shards";
import { nowIso } from "../lib/time";

/** The tables whose integer ids the database allocates (AUTOINCREMENT): those the leases cover. */
export const AUTOINCREMENT_TABLES: readonly string[] = Object.values(schema as Record<string, unknown>)
  .filter((t): t is SQLiteTable => is(t, SQLiteTable))
  .map((t) => getTableConfig(t))
  .filter((config) => config.columns.some((c) => c.primary && (c as { autoIncrement?: boolean }).autoIncrement))
  .map((config) => config.name);

/**
 * Records that the tenant lives on `shard` (a tenant made where the directory names none yet),
 * after giving that shard its id range. A tenant the directory places already keeps its shard.
 */
export async function placeTenant(env: ShardEnv, tenantId: string, shard: number): Promise<void> {
  await ensureLease(env, shard);
  await env.DB.prepare(
    "INSERT INTO tenant_shards (tenant_id, shard, updated_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
  )
    .bind(tenantId, shard, nowIso())
    .run();
}

/** The base of the shard's id range (0 for shard 0 until it takes a new one). */
export async function leaseBase(env: ShardEnv, shard: number): Promise<number> {
  const row = await env.DB.prepare("SELECT base FROM shard_leases WHERE shard = ?")
    .bind(shard)
    .first<{ base: number }>();
  return row?.base ?? 0;
}

/**
 * Gives a shard other than 0 its id range if it has none yet (the next free one), and raises its
 * AUTOINCREMENT sequences to the range's base. Idempotent; cheap once done (one read per isolate).
 */
export async function ensureLease(env: ShardEnv, shard: number): Promise<void> {
  if (shard === 0 || leased.has(shard)) return;
  await env.DB.prepare(
    `INSERT INTO shard_leases (shard, base, updated_at)
     SELECT ?1, max(coalesce(max(base), 0) + ?2, ?1 * ?2), ?3 FROM shard_leases WHERE true
     ON CONFLICT (shard) DO NOTHING`,
  )
    .bind(shard, LEASE_SIZE, nowIso())
    .run();
  await applyLease(env, shard, await leaseBase(env, shard));
  leased.add(shard);
}

/** Shards whose range this isolate has applied (a range only ever rises). */
const leased = new Set<number>();

/**
 * Gives the shard a new id range above every range given so far, and raises its sequences to it:
 * after a move has copied rows whose ids lie above the shard's own range (from a shard with a
 * higher one), the shard would otherwise go on allocating after those, in another shard's range.
 */
export async function renewLease(env: ShardEnv, shard: number): Promise<number> {
  const row = await env.DB.prepare(
    `INSERT INTO shard_leases (shard, base, updated_at)
     SELECT ?1, coalesce(max(base), 0) + ?2, ?3 FROM shard_leases WHERE true
     ON CONFLICT (shard) DO UPDATE SET base = excluded.base, updated_at = excluded.updated_at
     RETURNING base`,
  )
    .bind(shard, LEASE_SIZE, nowIso())
    .first<{ base: number }>();
  await applyLease(env, shard, row!.base);
  return row!.base;
}

/** Raises each AUTOINCREMENT sequence of the shard to at least `base` (the next id is above it). */
async function applyLease(env: ShardEnv, shard: number, base: number): Promise<void> {
  if (base === 0) return;
  const d1 = shardDatabase(env, shard);
  await d1.batch(
    AUTOINCREMENT_TABLES.flatMap((name) => [
      d1
        .prepare(
          "INSERT INTO sqlite_sequence (name, seq) SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)",
        )
        .bind(name, base),
      d1.prepare("UPDATE sqlite_sequence SET seq = ?2 WHERE name = ?1 AND seq < ?2").bind(name, base),
    ]),
  );
}

/**
 * Whether the shard's next ids would leave its range: a table holds an id at or above the shard's
 * sequence that is not its own (rows a move copied in from a higher range).
 */
export async function leaseOvertaken(env: ShardEnv, shard: number): Promise<boolean> {
  const d1 = shardDatabase(env, shard);
  const base = await leaseBase(env, shard);
  const rows = await d1.batch<{ over: number }>(
    AUTOINCREMENT_TABLES.map((name) =>
      d1.prepare(`SELECT coalesce(max(id), 0) >= ?1 + ?2 AS over FROM "${name}"`).bind(base, LEASE_SIZE),
    ),
  );
  return rows.some((r) => r.results[0]?.over === 1);
}
