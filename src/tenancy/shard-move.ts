/**
 * The move of a tenant from one shard to another (decision 0013), online, in resumable and
 * idempotent steps recorded in `tenant_moves` (in `DB`), advanced by the minute cron
 * (advanceMoves) like the history move (src/retention/history-move.ts):
 *
 * 1. fence: the source (and the target) refuse every write of the tenant's rows (tenant_fences,
 *    migration 0015's triggers): `409 tenant_moving` to the API, a retry to the queues.
 * 2. copy: each table's rows of the tenant, parents first, in pages by rowid, into the target
 *    with their ids (INSERT OR IGNORE: a page copied twice changes nothing). The rollups are not
 *    copied: the incidents' triggers build them in the target.
 * 3. flip: the target takes a new id range if the copy brought it ids above its own; the directory
 *    names the target; the target's fence is lifted.
 * 4. settle: until every isolate's cache of the directory made before the flip has expired
 *    (reads with a stale cache still read the source, complete until then).
 * 5. purge: the source's rows of the tenant, children first, in pages; the source's fence stays,
 *    so a writer whose cache still names the source is refused rather than lost.
 */

import type { MoveStep } from "../db/schema";
import { forgetTenantShard, SHARD_CACHE_MS, type ShardEnv, shardDatabase, tenantShard } from "../db/shards";
import { ConflictError, InvalidInputError } from "../lib/errors";
import { nowIso } from "../lib/time";
import { DERIVED_TABLES, TENANT_TABLES } from "./shard-tables";
import { ensureLease, leaseOvertaken, renewLease } from "./shards";

/** Rows one copy or purge step handles (one read and one batch). */
export const MOVE_PAGE_ROWS = 100;
/** How long after the flip the source is purged: past every cache of the directory made before it. */
export const SETTLE_MS = 3 * SHARD_CACHE_MS;

export interface MoveRow {
  tenantId: string;
  fromShard: number;
  toShard: number;
  step: MoveStep;
  tableIndex: number;
  afterKey: string | null;
  copied: number;
  flippedAt: string | null;
}

const MOVE_COLUMNS =
  "tenant_id AS tenantId, from_shard AS fromShard, to_shard AS toShard, step, table_index AS tableIndex, after_key AS afterKey, copied, flipped_at AS flippedAt";

/**
 * Starts moving a tenant to shard `to` (what `npm run shards -- move` asks): a new move at its
 * first step. A tenant already there, or already moving, is a conflict; a shard not bound, invalid.
 */
export async function startMove(env: ShardEnv, tenantId: string, to: number): Promise<MoveRow> {
  try {
    shardDatabase(env, to);
  } catch {
    throw new InvalidInputError([{ field: "to_shard", message: `no D1 binding for shard ${to}` }]);
  }
  forgetTenantShard(tenantId);
  const from = await tenantShard(env, tenantId);
  const exists = await shardDatabase(env, from).prepare("SELECT 1 FROM tenants WHERE id = ?").bind(tenantId).first();
  if (!exists) throw new InvalidInputError([{ field: "tenant", message: "no such tenant" }]);
  if (from === to) throw new ConflictError(`The tenant is on shard ${to} already`);
  const now = nowIso();
  const row = await env.DB.prepare(
    `INSERT INTO tenant_moves (tenant_id, from_shard, to_shard, step, table_index, after_key, copied, flipped_at, started_at, updated_at)
     VALUES (?1, ?2, ?3, 'fence', 0, NULL, 0, NULL, ?4, ?4)
     ON CONFLICT (tenant_id) DO UPDATE SET from_shard = ?2, to_shard = ?3, step = 'fence', table_index = 0,
       after_key = NULL, copied = 0, flipped_at = NULL, started_at = ?4, updated_at = ?4
     WHERE tenant_moves.step = 'done'
     RETURNING ${MOVE_COLUMNS}`,
  )
    .bind(tenantId, from, to, now)
    .first<MoveRow>();
  if (!row) throw new ConflictError("The tenant is moving already");
  return row;
}

/** The tenant's move as recorded; undefined when it never moved. */
export async function moveOf(env: ShardEnv, tenantId: string): Promise<MoveRow | undefined> {
  const row = await env.DB.prepare(`SELECT ${MOVE_COLUMNS} FROM tenant_moves WHERE tenant_id = ?`)
    .bind(tenantId)
    .first<MoveRow>();
  return row ?? undefined;
}

export interface MoveLimits {
  /** Steps (pages) one call runs at most. */
  steps?: number;
  rows?: number;
  settleMs?: number;
  now?: () => number;
}

/** Advances every unfinished move (the minute cron); returns the moves it advanced. */
export async function advanceMoves(env: ShardEnv, limits: MoveLimits = {}): Promise<MoveRow[]> {
  const { results } = await env.DB.prepare(
    `SELECT ${MOVE_COLUMNS} FROM tenant_moves WHERE step <> 'done'`,
  ).all<MoveRow>();
  const advanced: MoveRow[] = [];
  for (const move of results) advanced.push(await advanceMove(env, move, limits));
  return advanced;
}

/** Runs the move's steps from where it stands, up to `limits.steps` pages; returns where it stands then. */
export async function advanceMove(env: ShardEnv, start: MoveRow, limits: MoveLimits = {}): Promise<MoveRow> {
  const rows = limits.rows ?? MOVE_PAGE_ROWS;
  const now = limits.now ?? Date.now;
  let budget = limits.steps ?? 500;
  let move = start;
  const source = shardDatabase(env, move.fromShard);
  const target = shardDatabase(env, move.toShard);
  const fenceOf = (state: "fenced" | "open") =>
    `INSERT INTO tenant_fences (tenant_id, state, since) VALUES (?1, '${state}', ?2)
     ON CONFLICT (tenant_id) DO UPDATE SET state = '${state}'`;
  while (move.step !== "done" && budget-- > 0) {
    if (move.step === "fence") {
      await ensureLease(env, move.toShard);
      const at = nowIso();
      await target.prepare(fenceOf("fenced")).bind(move.tenantId, at).run();
      await source.prepare(fenceOf("fenced")).bind(move.tenantId, at).run();
      move = await record(env, move, { step: "copy", tableIndex: 0, afterKey: null });
    } else if (move.step === "copy") {
      const table = TENANT_TABLES[move.tableIndex];
      if (!table) {
        move = await record(env, move, { step: "flip" });
        continue;
      }
      if (DERIVED_TABLES.has(table.name)) {
        move = await record(env, move, { tableIndex: move.tableIndex + 1, afterKey: null });
        continue;
      }
      const after = Number(move.afterKey ?? 0);
      const cols = table.columns.map((c) => `"${c}"`).join(", ");
      const results = await source
        .prepare(
          `SELECT rowid AS "__rowid", ${cols} FROM "${table.name}" WHERE "${table.tenantColumn}" = ? AND rowid > ? ORDER BY rowid LIMIT ?`,
        )
        .bind(move.tenantId, after, rows)
        .raw<unknown[]>();
      if (results.length === 0) {
        move = await record(env, move, { tableIndex: move.tableIndex + 1, afterKey: null });
        continue;
      }
      const placeholders = table.columns.map(() => "?").join(", ");
      const insert = `INSERT OR IGNORE INTO "${table.name}" (${cols}) VALUES (${placeholders})`;
      const at = nowIso();
      await target.batch([
        target.prepare(fenceOf("open")).bind(move.tenantId, at),
        ...results.map((r) => target.prepare(insert).bind(...r.slice(1))),
        target.prepare(fenceOf("fenced")).bind(move.tenantId, at),
      ]);
      const last = results[results.length - 1]![0] as number;
      move = await record(env, move, { afterKey: String(last), copied: move.copied + results.length });
    } else if (move.step === "flip") {
      if (await leaseOvertaken(env, move.toShard)) await renewLease(env, move.toShard);
      const at = nowIso();
      await env.DB.batch([
        env.DB.prepare(
          `INSERT INTO tenant_shards (tenant_id, shard, updated_at) VALUES (?1, ?2, ?3)
           ON CONFLICT (tenant_id) DO UPDATE SET shard = ?2, updated_at = ?3`,
        ).bind(move.tenantId, move.toShard, at),
      ]);
      await target.prepare("DELETE FROM tenant_fences WHERE tenant_id = ?").bind(move.tenantId).run();
      forgetTenantShard(move.tenantId);
      move = await record(env, move, { step: "settle", flippedAt: new Date(now()).toISOString() });
    } else if (move.step === "settle") {
      const settleMs = limits.settleMs ?? SETTLE_MS;
      if (now() < Date.parse(move.flippedAt!) + settleMs) break;
      move = await record(env, move, { step: "purge", tableIndex: TENANT_TABLES.length - 1, afterKey: null });
    } else if (move.step === "purge") {
      const table = TENANT_TABLES[move.tableIndex];
      if (!table) {
        move = await record(env, move, { step: "done" });
        continue;
      }
      const at = nowIso();
      const [, deleted] = await source.batch([
        source.prepare(fenceOf("open")).bind(move.tenantId, at),
        source
          .prepare(
            `DELETE FROM "${table.name}" WHERE rowid IN (SELECT rowid FROM "${table.name}" WHERE "${table.tenantColumn}" = ? LIMIT ?)`,
          )
          .bind(move.tenantId, rows),
        source.prepare(fenceOf("fenced")).bind(move.tenantId, at),
      ]);
      if ((deleted?.meta.changes ?? 0) < rows) move = await record(env, move, { tableIndex: move.tableIndex - 1 });
    }
  }
  return move;
}

/** Records the move's progress (in `DB`): what a later call resumes from. */
async function record(env: ShardEnv, move: MoveRow, change: Partial<MoveRow>): Promise<MoveRow> {
  const next = { ...move, ...change };
  await env.DB.prepare(
    `UPDATE tenant_moves SET step = ?, table_index = ?, after_key = ?, copied = ?, flipped_at = ?, updated_at = ? WHERE tenant_id = ?`,
  )
    .bind(next.step, next.tableIndex, next.afterKey, next.copied, next.flippedAt, nowIso(), next.tenantId)
    .run();
  return next;
}
