/**
 * Lints the OpenAPI document as clients get it: starts the Worker (`wrangler dev` on a temporary
 * state directory, as the benchmarks do), reads /openapi.json, writes it to .cache/openapi.json and
 * runs `redocly lint` with the recommended rules and the exceptions of redocly.yaml; then generates
 * the typed client's types (clients/ts/schema.d.ts, openapi-typescript) from the same document and
 * fails when the committed file differs (`-- --write` updates it). Run through scripts/node22.mjs:
 * `npm run lint:openapi`.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyMigrations, dropStateDir, log, ROOT, startWorker, tempStateDir } from "../bench/support/wrangler-dev";

const state = tempStateDir("dq-openapi-");
applyMigrations(state);
const worker = await startWorker(state);
let status = 1;
try {
  const res = await fetch(`${worker.base}/openapi.json`);
  if (!res.ok) throw new Error(`GET /openapi.json answered ${res.status}`);
  const file = join(ROOT, ".cache", "openapi.json");
  mkdirSync(join(ROOT, ".cache"), { recursive: true });
  writeFileSync(file, `${JSON.stringify(await res.json(), null, 2)}\n`);
  log(`wrote ${file}`);
  const lint = spawnSync("redocly", ["lint", file, "--config", join(ROOT, "redocly.yaml")], {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
  });
  status = lint.status ?? 1;
  const types = join(ROOT, "clients", "ts", "schema.d.ts");
  const fresh = join(ROOT, ".cache", "schema.d.ts");
  // Fields with a default stay optional in requests (the server fills them in).
  const gen = spawnSync("openapi-typescript", [file, "-o", fresh, "--default-non-nullable", "false"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (gen.status !== 0) throw new Error("openapi-typescript failed");
  const generated = readFileSync(fresh, "utf8");
  if (process.argv.includes("--write")) {
    writeFileSync(types, generated);
    log(`wrote ${types}`);
  } else if (!existsSync(types) || readFileSync(types, "utf8") !== generated) {
    console.error("clients/ts/schema.d.ts is stale: run `npm run lint:openapi -- --write` and commit it");
    status = 1;
  }
} finally {
  worker.stop();
  dropStateDir(state, false);
}
process.exit(status);
