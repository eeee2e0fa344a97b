/**
 * Tenant shards, for the operator (decision 0013; docs/operations.md, "Tenant shards"):
 *
 *   npm run shards -- status [--env <name> | --local]
 *   npm run shards -- move <tenant> <shard> [--env <name> | --local]
 *
 * `move` records the move in the directory's `tenant_moves` (at its first step, `fence`); the
 * Worker's minute cron then runs it (src/tenancy/shard-move.ts: fence, copy, flip, settle, purge),
 * and `status` shows where each move stands and how many tenants each shard holds. Both run
 * `wrangler d1 execute DB` against the environment's `DB` (remote), or the local one (`--local`,
 * what `npm run dev` uses). A move of a tenant already moving changes nothing.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { TENANT_ID_PATTERN } from "../src/routes/params";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { env: { type: "string" }, local: { type: "boolean", default: false } },
});

function d1(sql: string): string {
  const where = values.local ? ["--local"] : ["--remote", ...(values.env ? ["--env", values.env] : [])];
  const r = spawnSync(
    resolve("node_modules", ".bin", "wrangler"),
    ["d1", "execute", "DB", ...where, "--json", "--command", sql],
    { encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
  );
  if (r.status !== 0) throw new Error(`wrangler d1 execute failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

const [command, tenant, shard] = positionals;
if (command === "status") {
  console.log(d1("SELECT tenant_id, from_shard, to_shard, step, copied, flipped_at, updated_at FROM tenant_moves"));
  console.log(
    d1(
      "SELECT 0 AS shard, count(*) AS tenants FROM tenants WHERE id NOT IN (SELECT tenant_id FROM tenant_shards WHERE shard <> 0) UNION ALL SELECT shard, count(*) FROM tenant_shards WHERE shard <> 0 GROUP BY shard",
    ),
  );
} else if (command === "move" && tenant && shard && TENANT_ID_PATTERN.test(tenant) && /^[0-9]+$/.test(shard)) {
  // Both values checked above (a tenant id's letters, a number): safe to write into the statement.
  const now = new Date().toISOString();
  console.log(
    d1(
      `INSERT INTO tenant_moves (tenant_id, from_shard, to_shard, step, table_index, after_key, copied, flipped_at, started_at, updated_at)
       SELECT '${tenant}', coalesce((SELECT shard FROM tenant_shards WHERE tenant_id = '${tenant}'), 0), ${Number(shard)}, 'fence', 0, NULL, 0, NULL, '${now}', '${now}'
       WHERE coalesce((SELECT shard FROM tenant_shards WHERE tenant_id = '${tenant}'), 0) <> ${Number(shard)}
       ON CONFLICT (tenant_id) DO UPDATE SET from_shard = excluded.from_shard, to_shard = excluded.to_shard, step = 'fence',
         table_index = 0, after_key = NULL, copied = 0, flipped_at = NULL, started_at = excluded.started_at, updated_at = excluded.updated_at
       WHERE tenant_moves.step = 'done'`,
    ),
  );
  console.log(`The minute cron moves ${tenant} to shard ${shard}; see \`npm run shards -- status\`.`);
} else {
  console.error("usage: npm run shards -- status | move <tenant> <shard>  [--env <name> | --local]");
  process.exit(2);
}
