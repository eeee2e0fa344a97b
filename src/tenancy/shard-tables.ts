/**
 * The tables of a tenant's rows, as a move copies and purges them (src/tenancy/shard-move.ts) and
 * the fence triggers guard them (migration 0015): every table of the schema with a tenant column
 * (`tenant_id`; the `tenants` row by its `id`) but the shards' own bookkeeping, parents before
 * the tables whose foreign keys name them.
 */
import { is } from "drizzle-orm";
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { schema } from "../db";

/** The shards' own tables: kept per database, never a tenant's rows. */
const BOOKKEEPING = new Set(["tenant_shards", "tenant_moves", "tenant_fences", "shard_leases"]);

/**
 * Tables the database keeps from another's rows (triggers on incidents, migrations 0009 and 0011):
 * a copy of the incidents rebuilds them, so the move copies none of their rows (it purges them).
 */
export const DERIVED_TABLES = new Set(["incident_rollups", "incident_day_rollups", "incident_tag_rollups"]);

export interface TenantTable {
  name: string;
  /** The column naming the tenant. */
  tenantColumn: string;
  columns: string[];
}

function tenantTables(): TenantTable[] {
  const configs = Object.values(schema as Record<string, unknown>)
    .filter((t): t is SQLiteTable => is(t, SQLiteTable))
    .map((t) => getTableConfig(t))
    .filter((c) => !BOOKKEEPING.has(c.name));
  const byName = new Map(configs.map((c) => [c.name, c]));
  const ordered: TenantTable[] = [];
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const config = byName.get(name)!;
    for (const fk of config.foreignKeys) {
      const parent = getTableConfig(fk.reference().foreignTable).name;
      if (parent !== name && byName.has(parent)) visit(parent);
    }
    const columns = config.columns.map((c) => c.name);
    const tenantColumn = name === "tenants" ? "id" : columns.includes("tenant_id") ? "tenant_id" : undefined;
    if (!tenantColumn) throw new Error(`table ${name} has no tenant column: it cannot be kept per shard`);
    ordered.push({ name, tenantColumn, columns });
  };
  for (const name of [...byName.keys()].sort()) visit(name);
  return ordered;
}

/** Every tenant table, parents first. */
export const TENANT_TABLES: readonly TenantTable[] = tenantTables();
