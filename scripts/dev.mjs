#!/usr/bin/env node
// Sets up and starts the service locally: .dev.vars from the example if missing, local D1
// migrated, then `wrangler dev`. Run through scripts/node22.mjs (npm run dev), which provides
// a Node recent enough for wrangler. Extra arguments go to `wrangler dev` (e.g. --port 9000).
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

const args = process.argv.slice(2);
const portArg = args.indexOf("--port");
const port = portArg >= 0 ? args[portArg + 1] : (process.env.PORT ?? "8787");

// No usage metrics: wrangler would try to reach Cloudflare, which a machine without internet cannot.
const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };

function run(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { stdio: "inherit", env: { ...env, CI: "true" } });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("created .dev.vars from .dev.vars.example (local secrets; never commit it)");
}

console.log("applying migrations to the local D1 database (.wrangler/state)");
run("wrangler", ["d1", "migrations", "apply", "DB", "--local"]);
// The second tenant shard of the top level of wrangler.toml (docs/decisions/0013-tenant-shards.md).
run("wrangler", ["d1", "migrations", "apply", "DB_SHARD_1", "--local"]);

console.log(`\nstarting the service: http://127.0.0.1:${port}  (API reference: /docs, OpenAPI: /openapi.json)\n`);
const dev = spawnSync(
  "wrangler",
  [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    port,
    "--test-scheduled",
    ...args.filter((_, i) => i !== portArg && i !== portArg + 1),
  ],
  {
    stdio: "inherit",
  },
);
process.exit(dev.status ?? 0);
