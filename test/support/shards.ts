/** Tenant shards in tests (src/db/shards.ts): a tenant placed on a given shard, and where its rows are. */

import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import worker from "../../src/index";
import { ADMIN_KEY } from "./api";
import { unique } from "./unique";

/** The tenant's rows in each table of a database that has a tenant column (tenants: by id). */
export async function tenantRows(d1: D1Database, tenant: string): Promise<Record<string, number>> {
  const { results: tables } = await d1
    .prepare(
      "SELECT m.name AS name, (SELECT count(*) FROM pragma_table_info(m.name) WHERE name = 'tenant_id') AS scoped FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE '_cf_%' AND m.name NOT LIKE 'd1_%'",
    )
    .all<{ name: string; scoped: number }>();
  const counts: Record<string, number> = {};
  for (const { name, scoped } of tables) {
    const column = name === "tenants" ? "id" : scoped ? "tenant_id" : undefined;
    if (!column) continue;
    const row = await d1
      .prepare(`SELECT count(*) AS n FROM "${name}" WHERE ${column} = ?`)
      .bind(tenant)
      .first<{ n: number }>();
    if (row!.n > 0) counts[name] = row!.n;
  }
  return counts;
}

/** A tenant made through the Worker with NEW_TENANT_SHARD set to `shard`: where the placement rule puts it. */
export async function tenantOnShard(shard: number): Promise<string> {
  const id = unique("t");
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`https://dq.test/backend/private/configuration/tenants/${id}`, {
      method: "PUT",
      headers: { "X-SVC-Key": ADMIN_KEY, "Content-Type": "application/json" },
      body: JSON.stringify({ name: `Tenant ${id}` }),
    }),
    { ...env, NEW_TENANT_SHARD: String(shard) },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  expect(res.status).toBe(201);
  return id;
}
