import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The directory of tenant shards (docs/decisions/0013-tenant-shards.md): which D1 database holds a
 * tenant's rows. Kept in `DB` (shard 0) only. A tenant without a row is on shard 0 when `DB` holds
 * its tenant row (every tenant made before shards existed), else on the shard new tenants go to
 * (NEW_TENANT_SHARD), where its first PUT records it.
 */
export const tenantShards = sqliteTable("tenant_shards", {
  tenantId: text("tenant_id").primaryKey(),
  /** 0: the `DB` binding; n: `DB_SHARD_n`. */
  shard: integer("shard").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const MOVE_STEPS = ["fence", "copy", "flip", "settle", "purge", "done"] as const;
export type MoveStep = (typeof MOVE_STEPS)[number];

/**
 * A tenant's move from one shard to another (src/tenancy/shard-move.ts), one row per tenant while
 * it moves and after: the step it is at and where the copy or purge stopped, so each step resumes.
 * Kept in `DB` (shard 0) only.
 */
export const tenantMoves = sqliteTable("tenant_moves", {
  tenantId: text("tenant_id").primaryKey(),
  fromShard: integer("from_shard").notNull(),
  toShard: integer("to_shard").notNull(),
  step: text("step", { enum: MOVE_STEPS }).notNull(),
  /** The table (in copy order) the copy or purge is at, and the last key it handled there. */
  tableIndex: integer("table_index").notNull().default(0),
  afterKey: text("after_key"),
  /** Rows copied so far (every table). */
  copied: integer("copied").notNull().default(0),
  /** When the directory named the target: the source's rows are purged only once no cache can still name the source. */
  flippedAt: text("flipped_at"),
  startedAt: text("started_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/**
 * A tenant whose rows this database must not change (on every shard): while its rows are copied
 * away, and after it has left (a writer whose cache still names this shard is refused, told to
 * retry). Enforced by triggers on every table of tenant rows (migration 0015): an insert, update
 * or delete of a row of a tenant with a `fenced` row here fails with `tenant_moving`. `open`:
 * set and reset inside each of the move's own batches (its copy into the target, its purge of the
 * source), whose writes it lets through.
 */
export const tenantFences = sqliteTable("tenant_fences", {
  tenantId: text("tenant_id").primaryKey(),
  state: text("state", { enum: ["fenced", "open"] }).notNull(),
  since: text("since").notNull(),
});

/**
 * The id range each shard allocates from (src/tenancy/shard-leases.ts): ids of AUTOINCREMENT tables
 * on shard n start above `base`, and ranges are LEASE_SIZE wide and never overlap, so a tenant's rows
 * keep their ids wherever they move. Shard 0 (`DB`) has base 0 without a row. Kept in `DB` only.
 */
export const shardLeases = sqliteTable("shard_leases", {
  shard: integer("shard").primaryKey({ autoIncrement: false }),
  base: integer("base").notNull(),
  updatedAt: text("updated_at").notNull(),
});
