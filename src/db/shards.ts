/**
 * Tenant shards (docs/decisions/0013-tenant-shards.md): a tenant's rows live in one of several D1
 * databases, `DB` (shard 0, which also holds the directory) or `DB_SHARD_n` (shard n), as the
 * directory (`tenant_shards` in `DB`) says. Every path that reads or writes a tenant's rows asks
 * here for its database: requests (src/app.ts), queue consumers, cron, the AssetMonitor.
 *
 * The directory is read once per tenant per isolate and kept SHARD_CACHE_MS: a request whose
 * tenant is cached pays no extra round trip. A stale entry is harmless: a moving tenant's source
 * shard refuses its writes (a fence, migration 0015: `tenant_moving`, which drops the entry), and
 * the move purges the source only once every entry made before its flip has expired.
 */
/** Width of one shard's id range: 2^40 ids per table, 8,191 ranges below 2^53 (JSON-safe integers). */
export const LEASE_SIZE = 2 ** 40;

/** How long an isolate trusts what it read of the directory. */
export const SHARD_CACHE_MS = 10_000;

/** The bindings a shard lookup needs: the directory's `DB` and the extra shards. */
export interface ShardEnv {
  DB: D1Database;
  [shard: `DB_SHARD_${number}`]: D1Database | undefined;
  NEW_TENANT_SHARD?: string | undefined;
}

const SHARD_BINDING = /^DB_SHARD_([1-9][0-9]*)$/;

const bindingsOf = new WeakMap<object, D1Database[]>();

/** Every shard's database, indexed by shard number (0: `DB`); a number without a binding is a hole. */
export function shardDatabases(env: ShardEnv): D1Database[] {
  let found = bindingsOf.get(env);
  if (!found) {
    found = [env.DB];
    for (const [name, value] of Object.entries(env)) {
      const m = SHARD_BINDING.exec(name);
      if (m && value) found[Number(m[1])] = value as D1Database;
    }
    bindingsOf.set(env, found);
  }
  return found;
}

/** The shard numbers bound in this deployment, in order. */
export function shardNumbers(env: ShardEnv): number[] {
  return shardDatabases(env).flatMap((d1, n) => (d1 ? [n] : []));
}

/** The database of shard `n`; throws for a shard this deployment does not bind. */
export function shardDatabase(env: ShardEnv, n: number): D1Database {
  const d1 = shardDatabases(env)[n];
  if (!d1) throw new Error(`No D1 binding for shard ${n} (DB_SHARD_${n} in wrangler.toml)`);
  return d1;
}

/** The shard new tenants go to: NEW_TENANT_SHARD when it names a bound shard, else 0. */
export function newTenantShard(env: ShardEnv): number {
  const n = Number(env.NEW_TENANT_SHARD ?? "0");
  return Number.isInteger(n) && n > 0 && shardDatabases(env)[n] ? n : 0;
}

/** Where a tenant lives: its shard, and whether the directory names it (else: where it would be made). */
export interface TenantHome {
  shard: number;
  placed: boolean;
}

/** How many tenants an isolate keeps in its cache; past it, the oldest entry goes first. */
export const SHARD_CACHE_MAX = 10_000;

/**
 * What an isolate read of the directory, for SHARD_CACHE_MS, and at most `max` tenants. The
 * tenant comes from the request's path before authentication (authentication needs the tenant's
 * shard), so a caller naming random tenants must not grow it without end: a new entry past `max`
 * evicts the oldest (a Map iterates in insertion order; a refreshed entry moves to the end).
 */
export class HomeCache<T> {
  readonly #entries = new Map<string, { value: Promise<T>; until: number }>();

  constructor(
    private readonly max = SHARD_CACHE_MAX,
    private readonly ttlMs = SHARD_CACHE_MS,
  ) {}

  /** The cached value while fresh, else `load()`'s (a failed load is not kept). */
  get(key: string, load: () => Promise<T>, now = Date.now()): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit && hit.until > now) return hit.value;
    if (hit) this.#entries.delete(key);
    else if (this.#entries.size >= this.max) this.#entries.delete(this.#entries.keys().next().value!);
    const value = load();
    const entry = { value, until: now + this.ttlMs };
    this.#entries.set(key, entry);
    value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    return value;
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }

  get size(): number {
    return this.#entries.size;
  }
}

const homes = new HomeCache<TenantHome>();

/**
 * The tenant's shard, from the isolate's cache while it is fresh, else from the directory (one
 * query in `DB`): the directory's row; a tenant `DB` holds without a row is a tenant made before
 * shards (shard 0); any other tenant is not made yet, and would be made on newTenantShard.
 */
export function tenantHome(env: ShardEnv, tenantId: string, now = Date.now()): Promise<TenantHome> {
  return homes.get(tenantId, () => readHome(env, tenantId), now);
}

async function readHome(env: ShardEnv, tenantId: string): Promise<TenantHome> {
  const row = await env.DB.prepare(
    "SELECT (SELECT shard FROM tenant_shards WHERE tenant_id = ?1) AS placed, EXISTS (SELECT 1 FROM tenants WHERE id = ?1) AS here",
  )
    .bind(tenantId)
    .first<{ placed: number | null; here: number }>();
  if (row?.placed !== null && row?.placed !== undefined) return { shard: row.placed, placed: true };
  if (row?.here) return { shard: 0, placed: false };
  return { shard: newTenantShard(env), placed: false };
}

/** The tenant's shard number (see tenantHome). */
export async function tenantShard(env: ShardEnv, tenantId: string): Promise<number> {
  return (await tenantHome(env, tenantId)).shard;
}

/** The D1 database holding the tenant's rows. */
export async function tenantDatabase(env: ShardEnv, tenantId: string): Promise<D1Database> {
  return shardDatabase(env, await tenantShard(env, tenantId));
}

/** Forgets what the isolate read of the tenant's shard: the next lookup reads the directory. */
export function forgetTenantShard(tenantId: string): void {
  homes.forget(tenantId);
}

/** The message of a write a fenced shard refused (migration 0015's triggers). */
export const TENANT_MOVING = "tenant_moving";

/** Whether `err` is a shard's refusal of a write to a tenant that is moving or has moved away. */
export function isTenantMoving(err: unknown): boolean {
  return String(err).includes(TENANT_MOVING) || String((err as { cause?: unknown })?.cause).includes(TENANT_MOVING);
}
