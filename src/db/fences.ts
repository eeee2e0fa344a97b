/**
 * A tenant fenced on a database (`tenant_fences`, src/tenancy/shard-move.ts) is moving away or has
 * left: its rows there must not change, and migration 0015's triggers refuse the write. The cron's
 * work across the tenants of a shard (schedules, Spark polls, ticket retries, deliveries,
 * retention) leaves such a tenant out rather than fail on it: one moving tenant must not stop the
 * rest of its shard, nor call out (a Jira ticket, a provider's cancel) for a result it cannot record.
 */
import { type SQL, type SQLWrapper, sql } from "drizzle-orm";

/** Raw SQL condition: the tenant in `column` (e.g. `assets.tenant_id`) has no fence here. */
export const unfencedSql = (column: string): string =>
  `NOT EXISTS (SELECT 1 FROM tenant_fences WHERE tenant_fences.tenant_id = ${column})`;

/** The same condition for drizzle's query builder. */
export const unfenced = (column: SQLWrapper): SQL =>
  sql`not exists (select 1 from tenant_fences where tenant_fences.tenant_id = ${column})`;
