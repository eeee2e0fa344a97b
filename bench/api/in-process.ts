/**
 * bench/api/in-process.ts: the CPU our own code spends per request, without wrangler dev.
 *
 *   npm run bench:api:in-process                 # 3,000 requests per route, 2 rounds
 *   npm run bench:api:in-process -- --requests 10000 --profile
 *   npm run bench:api:in-process -- --profile --only "one asset"   # those routes only
 *
 * bench/api/run.ts measures requests through `wrangler dev`, where the local D1 and the rate
 * limiter are Durable Objects of the same workerd and a request crosses several processes: its CPU
 * per request is mostly that machinery, and moves with the machine's load. Here the Worker's app
 * (src/app.ts, bundled by esbuild as wrangler bundles it) answers `app.fetch` in this Node process,
 * over a D1 of node:sqlite in the same process (bench/api/sqlite-d1.ts) and a rate limiter that
 * always admits: what is measured is our code — routing, authentication, validation, drizzle,
 * the views — plus SQLite itself. The same tenant as bench/api (20 assets, 60 project admins with
 * bearer tokens, each request as the next user), the same routes. Printed per route: CPU µs per
 * request (user + system of this process, after a warm-up round), the ratio to /health, and the
 * SQL statements one request ran. With --profile, the busiest functions of the last round.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { ROOT } from "../support/wrangler-dev";
import { selfTimes, totalTimes } from "./cpu-profile";
import { seedTenant, USERS } from "./seed";
import { SqliteD1 } from "./sqlite-d1";

const { values: args } = parseArgs({
  options: {
    requests: { type: "string", default: "3000" },
    rounds: { type: "string", default: "2" },
    profile: { type: "boolean", default: false },
    only: { type: "string" },
  },
});
const REQUESTS = Number(args.requests);
const ROUNDS = Math.max(1, Number(args.rounds));

/**
 * The app bundled for Node: `cloudflare:workers` and `cloudflare:sockets` (the AssetMonitor's base
 * class, the env outbound calls read, the SQL connectors' TCP) are replaced by inert modules; no
 * route measured here uses them.
 */
async function bundleApp(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const workers = join(dir, "cloudflare-workers.mjs");
  const sockets = join(dir, "cloudflare-sockets.mjs");
  writeFileSync(
    workers,
    "export const env = {};\nexport class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } }\n",
  );
  writeFileSync(sockets, 'export function connect() { throw new Error("no sockets in bench/api/in-process"); }\n');
  const entry = join(ROOT, "src", "app.ts");
  const outfile = join(dir, "app.mjs");
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    outfile,
    logLevel: "error",
    alias: { "cloudflare:workers": workers, "cloudflare:sockets": sockets },
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  return outfile;
}

const d1 = new SqliteD1();
for (const file of readdirSync(join(ROOT, "migrations"))
  .filter((f) => f.endsWith(".sql"))
  .sort()) {
  await d1.exec(readFileSync(join(ROOT, "migrations", file), "utf8"));
}
const admits = { limit: async () => ({ success: true }) };
const env = {
  DB: d1,
  RATE_LIMIT: admits,
  RATE_LIMIT_STRICT: admits,
  ADMIN_API_KEY: "bench-admin-key-0123456789abcdef",
  TOKEN_SIGNING_SECRET: "bench-token-signing-secret-0123456789abcdef",
  ENCRYPTION_KEYS: "k1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
  SERVICE_TOKEN_ISSUER: "dq-monitor",
  SERVICE_TOKEN_AUDIENCE: "dq-monitor-api",
  SERVICE_TOKEN_TTL_SECONDS: "900",
  OIDC_ISSUER: "",
  OIDC_AUDIENCE: "",
  OIDC_JWKS_URL: "",
  OIDC_ALGORITHMS: "RS256",
  ADMIN_EMAIL: "",
  ALLOW_PRIVATE_TARGETS: "true",
};
const ctx = { waitUntil: (p: Promise<unknown>) => void p.catch(() => {}), passThroughOnException() {}, props: {} };

const { createApp } = (await import(
  pathToFileURL(await bundleApp(join(ROOT, "bench", ".data", "in-process"))).href
)) as {
  createApp: () => { fetch: (req: Request, env: unknown, ctx: unknown) => Promise<Response> };
};
const app = createApp();

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown) {
  const init: RequestInit = { method, headers: { "content-type": "application/json", ...headers } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await app.fetch(new Request(`http://bench.local${path}`, init), env, ctx);
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const { tenant, projectId, assetId, tokens } = await seedTenant(call, env.ADMIN_API_KEY);
const base = `/api/backend/${tenant}/configuration`;

const routes: { name: string; method: "GET" | "PUT"; path: string; body?: unknown }[] = [
  { name: "GET /health", method: "GET", path: "/health" },
  { name: "GET projects (list)", method: "GET", path: `${base}/projects` },
  { name: "GET assets of a project (20)", method: "GET", path: `${base}/projects/${projectId}/assets` },
  { name: "GET one asset", method: "GET", path: `${base}/projects/${projectId}/assets/${assetId}` },
  { name: "GET incidents summary", method: "GET", path: `/api/backend/${tenant}/incidents/summary?days=30` },
  { name: "PUT project (write)", method: "PUT", path: `${base}/projects/${projectId}`, body: { name: "analytics" } },
];

const only = args.only === undefined ? undefined : new RegExp(args.only, "i");
const measured = routes.filter((r) => !only || only.test(r.name));

interface Row {
  cpuUs: number;
  statements: number;
}
const figures = new Map<string, Row>();
let profile: Parameters<typeof selfTimes>[0] | undefined;
const session = new Session();
session.connect();
for (let round = 0; round < ROUNDS; round++) {
  const last = round === ROUNDS - 1;
  if (last && args.profile) {
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  for (const route of measured) {
    const before = d1.statements;
    const t0 = process.cpuUsage();
    for (let i = 0; i < REQUESTS; i++) {
      await call(route.method, route.path, { authorization: `Bearer ${tokens[i % USERS]}` }, route.body);
    }
    const used = process.cpuUsage(t0);
    figures.set(route.name, {
      cpuUs: (used.user + used.system) / REQUESTS,
      statements: (d1.statements - before) / REQUESTS,
    });
  }
  if (last && args.profile) profile = ((await session.post("Profiler.stop")) as { profile: typeof profile }).profile;
}

const health = figures.get("GET /health")?.cpuUs ?? Number.NaN;
console.log(
  `\nbench/api/in-process — our app in Node ${process.versions.node}, D1 on node:sqlite in process, ${REQUESTS} requests per route, round ${ROUNDS} of ${ROUNDS}`,
);
console.log(
  `${"route".padEnd(30)} ${"CPU µs/req".padStart(11)} ${"×health".padStart(8)} ${"SQL statements/req".padStart(19)}`,
);
for (const [name, row] of figures) {
  console.log(
    `${name.padEnd(30)} ${row.cpuUs.toFixed(0).padStart(11)} ${(row.cpuUs / health).toFixed(2).padStart(8)} ${row.statements.toFixed(2).padStart(19)}`,
  );
}
if (profile) {
  const total = measured.length * REQUESTS;
  const { rows } = selfTimes(profile);
  console.log(`\nbusiest functions, all routes of the last round (self time, µs per request):`);
  for (const r of rows.slice(0, 25)) console.log(`  ${((r.ms * 1000) / total).toFixed(1).padStart(7)}  ${r.name}`);
  console.log(`\nmost inclusive time (µs per request):`);
  for (const r of totalTimes(profile).slice(0, 25))
    console.log(`  ${((r.ms * 1000) / total).toFixed(1).padStart(7)}  ${r.name}`);
}
