/**
 * bench/api: latency of the API under load, beside a hello-world Worker, a bare read (a Worker
 * that calls the rate limiter and makes one D1 query) and our own /health.
 *
 *   npm run bench:api -- [--duration 6] [--connections 8] [--keep] [--profile] [--interval 200]
 *                        [--only <regex>] [--save <dir>]
 *
 * 1. Starts the service (wrangler dev on a migrated local D1, bench/support) and the peers' Worker
 *    (bench/api/hello: hello-world at `/`, the bare read at `/floor`) with the same wrangler.
 * 2. Seeds one tenant through the API: a project with 20 assets, and 60 users who are tenant
 *    members and project admins, each with a bearer token (the heaviest authentication path:
 *    token, tenant membership, project membership); requests take the users in turn, so no
 *    user's rate budget runs out.
 * 3. Loads each route with wrk (`wrk -t1 -cN -dDs --latency`; `apt-get install wrk`), one after
 *    the other, and reads each route's D1 round trips from one request's Server-Timing header
 *    (src/db/metered.ts): calls in all, and sequential ones (those that waited for no other).
 * 4. Prints p50/p99, req/s, the p50 ratios to /health, to hello-world and to the bare read, and the CPU time that
 *    the Worker's processes (wrangler dev, workerd with its local D1) spent per request during the
 *    run: unlike latency, it hardly moves when other work shares the cores. Beside it, the CPU time
 *    of the busiest of those threads: workerd's runtime thread, which runs the isolate and the local
 *    D1's and rate limiter's Durable Objects, so a route's rate under load follows it. The bare read
 *    is also loaded in halves (the limiter alone, the D1 query alone), and the last line says what
 *    the two calls alone would make of /health in that thread's time: the floor of any read.
 *
 * The load generator shares the machine's cores with workerd: compare ratios from one run.
 * With --profile, the Worker's isolate (and the peers' isolate) is profiled through wrangler dev's inspector during each
 * route's run (bench/api/cpu-profile.ts), and the busiest functions of each route are printed
 * after the table, with the self time of each module of the bundle (our src/ directories, hono,
 * zod, drizzle-orm) and of workerd's own code (the D1 and rate-limiter bindings' JavaScript,
 * native calls, the garbage collector). The sampler slows the Worker: compare profiled runs with
 * profiled runs; `--interval` (µs between samples, 200 by default) trades detail for less
 * slowing. `--only` loads only our routes whose name matches (the peers and /health always run),
 * `--warmup <s>` loads each route that long before its measured run (the isolate's caches filled),
 * `--save` writes each profile there (`<route>.cpuprofile`, for DevTools) with the bundle.
 * The bare read is also run behind a static-assets front (bench/api/hello/front.toml: the peers'
 * Worker with the `[assets]` our Worker had until issue 40, its paths run by the Worker first): every
 * request of a Worker with static assets passes through the assets' router Worker first, on the
 * same runtime thread in wrangler dev. Our Worker has none since (it serves /app/ and /docs itself,
 * src/routes/static-files.ts); the peer behind the front prices that hop. Both peers are printed,
 * with a ratio to each (`×bare`: the peer without the front; `×front`: the peer behind it); each
 * read's own query run bare is also run behind it.
 *
 * `--paired [--rounds 10] [--slice 2]` replaces the table: each read of ours is loaded in short
 * slices (`--slice` seconds of wrk each, the same connections) interleaved with both peers, all
 * three servers warm and running at once, in `--rounds` rounds ordered bare read, ours, peer behind
 * the front, then the reverse (ours always between its two peers, each peer before it in half of
 * the rounds). A slice's ratio to the peer's next to it in the same round (p50, and runtime-thread
 * ms a request) sees the same load on both sides, so the median of those per-round ratios and their
 * spread say what the code costs, not when each row ran.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { busiestThreadMs, groupCpuMs, groupThreadCpuMs } from "../support/proc-cpu";
import {
  applyMigrations,
  BENCH_SECRETS,
  dropStateDir,
  freePort,
  launchWranglerDev,
  log,
  ROOT,
  startWorker,
  tempStateDir,
  type WorkerProcess,
} from "../support/wrangler-dev";
import { Inspector, moduleOf, moduleTimes, selfTimes, totalTimes } from "./cpu-profile";
import { seedTenant } from "./seed";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "6" },
    connections: { type: "string", default: "8" },
    keep: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    interval: { type: "string", default: "200" },
    warmup: { type: "string", default: "0" },
    only: { type: "string" },
    save: { type: "string" },
    paired: { type: "boolean", default: false },
    rounds: { type: "string", default: "10" },
    slice: { type: "string", default: "2" },
  },
});

interface Route {
  name: string;
  url: string;
  method?: "GET" | "PUT";
  headers?: Record<string, string>;
  body?: string;
  /** Bearer tokens to send in turn. */
  tokens?: string[];
}

interface Figures {
  p50: number;
  p99: number;
  rps: number;
  errors: number;
  requests: number;
  roundTrips?: string;
  /** CPU milliseconds of the Worker's processes per request (user + system). */
  cpuMsPerRequest?: number;
  /** CPU milliseconds of the busiest thread of those processes per request (workerd's runtime thread). */
  threadMsPerRequest?: number;
  /** With --profile: the isolate's busiest functions (self time, ms in the run). */
  hot?: { name: string; ms: number }[];
  /** With --profile: the functions with the most inclusive time (ms in the run). */
  callers?: { name: string; ms: number }[];
  /** With --profile: the isolate's busy time per request (ms, inflated by the sampler). */
  isolateMs?: number;
  /** With --profile: self time per module of the bundle or of workerd (ms in the run). */
  modules?: { name: string; ms: number }[];
}

async function api(base: string, method: string, path: string, auth: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** wrk's latency distribution and rate; a Lua script sends the method, headers and body. */
function runWrk(route: Route, dir: string, seconds = args.duration): Figures {
  const script = join(dir, `${route.name.replace(/\W+/g, "-")}.lua`);
  const lines = [`wrk.method = "${route.method ?? "GET"}"`];
  for (const [k, v] of Object.entries(route.headers ?? {})) lines.push(`wrk.headers["${k}"] = "${v}"`);
  if (route.body !== undefined) lines.push(`wrk.body = '${route.body}'`);
  if (route.tokens) {
    // Each request as the next user, round robin.
    lines.push(
      `tokens = { ${route.tokens.map((t) => `"${t}"`).join(", ")} }`,
      "i = 0",
      "request = function()",
      "  i = i + 1",
      `  wrk.headers["authorization"] = "Bearer " .. tokens[(i % #tokens) + 1]`,
      "  return wrk.format()",
      "end",
    );
  }
  writeFileSync(script, `${lines.join("\n")}\n`);
  const r = spawnSync("wrk", ["-t1", `-c${args.connections}`, `-d${seconds}s`, "--latency", "-s", script, route.url], {
    encoding: "utf8",
  });
  if (r.error || r.status !== 0) {
    throw new Error(`wrk failed (${r.error?.message ?? r.stderr}); install it with: apt-get install -y wrk`);
  }
  const ms = (label: string) => {
    const m = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s)`, "m").exec(r.stdout);
    if (!m) throw new Error(`no ${label}% in wrk's output:\n${r.stdout}`);
    const v = Number(m[1]);
    return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
  };
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1] ?? Number.NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  const socket = /Socket errors:.*/.exec(r.stdout)?.[0];
  const requests = Number(/(\d+) requests in/.exec(r.stdout)?.[1] ?? Number.NaN);
  return { p50: ms("50"), p99: ms("99"), rps, errors: non2xx + (socket ? 1 : 0), requests };
}

/** The D1 calls of one request, from its Server-Timing header. */
async function roundTrips(route: Route, attempt = 0): Promise<string | undefined> {
  let res: Response;
  try {
    res = await fetch(route.url, {
      method: route.method ?? "GET",
      headers: { ...route.headers, ...(route.tokens ? { authorization: `Bearer ${route.tokens[0]}` } : {}) },
      ...(route.body === undefined ? {} : { body: route.body }),
    });
  } catch (err) {
    // A kept-alive connection of this process that wrangler dev closed while wrk ran: once more.
    if (attempt > 0) throw err;
    return roundTrips(route, attempt + 1);
  }
  await res.arrayBuffer();
  const timing = res.headers.get("server-timing") ?? "";
  const m = /desc="(\d+) round trips, (\d+) sequential"/.exec(timing);
  return m ? `${m[1]} (${m[2]} sequential)` : undefined;
}

/**
 * Copies the service's local D1 (its SQLite file, named by the database id) into the peers'
 * state, where their APP_DB binding (the same id) finds it: done before the peers' first use of it.
 */
function copyDatabase(from: string, to: string) {
  const dir = (root: string) => join(root, "v3", "d1", "miniflare-D1DatabaseObject");
  mkdirSync(dir(to), { recursive: true });
  for (const file of readdirSync(dir(from))) {
    if (!file.startsWith("metadata") && !existsSync(join(dir(to), file))) {
      copyFileSync(join(dir(from), file), join(dir(to), file));
    }
  }
}

/**
 * The SQL of the D1 call one request to `url` makes, as the service ran it: from the spans wrangler
 * dev's local trace store keeps (`db.query.text` of the request's last D1 span).
 */
async function lastD1Query(persist: string, url: string, token: string): Promise<string> {
  // Twice: the first request of a user also reads its membership (the isolate's cache is empty).
  for (let i = 0; i < 2; i++) await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer();
  const dir = join(persist, "v3", "observability", "miniflare-wobs-trace-store");
  const file = readdirSync(dir).find((f) => f.endsWith(".sqlite") && !f.startsWith("metadata"));
  if (!file) throw new Error(`no trace store in ${dir}`);
  for (let attempt = 0; attempt < 40; attempt++) {
    // The store writes its spans in batches: wait for the request's.
    await new Promise((r) => setTimeout(r, 250));
    const db = new DatabaseSync(join(dir, file), { readOnly: true });
    const row = db
      .prepare("SELECT attributes, start_ms FROM spans WHERE name LIKE 'd1_%' ORDER BY start_ms DESC LIMIT 1")
      .get() as { attributes: Uint8Array } | undefined;
    db.close();
    const text = row && Buffer.from(row.attributes).toString("latin1");
    // The attribute is a JSON string's body after a length prefix, ended by the next key's tag.
    const m = text && /db\.query\.text[\s\S]{1,3}?(select [\s\S]*?)\xc7/.exec(text);
    if (m) return JSON.parse(`"${Buffer.from(m[1]!, "latin1").toString("utf8")}"`) as string;
  }
  throw new Error(`no D1 span for ${url} in the trace store`);
}

/** One slice of a paired run: wrk's p50 and the runtime thread's CPU a request over those seconds. */
interface Slice {
  p50: number;
  requests: number;
  threadMs: number;
  errors: number;
}

function runSlice(route: Route, group: number | undefined, dir: string): Slice {
  const before = groupThreadCpuMs(group);
  const f = runWrk(route, dir, args.slice);
  const threadMs = busiestThreadMs(before, groupThreadCpuMs(group));
  return { p50: f.p50, requests: f.requests, threadMs, errors: f.errors };
}

/** The q-quantile of values (linear between the closest ranks). */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

/** "median [q1–q3] min–max" of per-round ratios. */
function spread(ratios: number[]): string {
  const f = (v: number) => v.toFixed(2);
  return `${f(quantile(ratios, 0.5))} [${f(quantile(ratios, 0.25))}–${f(quantile(ratios, 0.75))}] ${f(Math.min(...ratios))}–${f(Math.max(...ratios))}`;
}

/** Per round: ours over the peer, by p50 and by runtime-thread ms a request. */
function ratiosOf(ours: Slice[], peer: Slice[]) {
  const perRequest = (s: Slice) => s.threadMs / s.requests;
  const pooled = (slices: Slice[]) =>
    slices.reduce((ms, s) => ms + s.threadMs, 0) / slices.reduce((n, s) => n + s.requests, 0);
  return {
    p50: ours.map((s, i) => s.p50 / peer[i]!.p50),
    thread: ours.map((s, i) => perRequest(s) / perRequest(peer[i]!)),
    pooledThread: pooled(ours) / pooled(peer),
    pooledMs: [pooled(ours), pooled(peer)] as const,
  };
}

/**
 * `--paired`: each read interleaved with both peers in short slices, the three servers warm and
 * running at once (see the head of this file); prints per read and per peer the median of the
 * per-round ratios with their quartiles and range, and a verdict against issue 40's 1.25×.
 */
function pairedRuns(
  reads: Route[],
  bare: Route,
  behind: Route,
  groupOf: (route: Route) => number | undefined,
  dir: string,
) {
  const rounds = Number(args.rounds);
  const warmup = Number(args.warmup) > 0 ? args.warmup : "2";
  const target = 1.25;
  const out: string[] = [];
  const started = new Date().toISOString();
  for (const route of reads) {
    log(`paired: ${route.name} (${rounds} rounds of 3 × ${args.slice} s)`);
    for (const r of [bare, route, behind]) runWrk(r, dir, warmup);
    const slices = new Map<Route, Slice[]>([
      [bare, []],
      [route, []],
      [behind, []],
    ]);
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? [bare, route, behind] : [behind, route, bare];
      for (const r of order) slices.get(r)!.push(runSlice(r, groupOf(r), dir));
    }
    const ours = slices.get(route)!;
    const pOurs = (s: Slice[]) =>
      quantile(
        s.map((x) => x.p50),
        0.5,
      ).toFixed(1);
    const errors = [...slices.values()].flat().reduce((n, s) => n + s.errors, 0);
    out.push(
      `\n${route.name}: ${rounds} rounds, ${ours.reduce((n, s) => n + s.requests, 0)} requests of ours, non-2xx ${errors}`,
      `  slice p50s (median of the slices, ms): ours ${pOurs(ours)}, bare read ${pOurs(slices.get(bare)!)}, behind the front ${pOurs(slices.get(behind)!)}`,
    );
    for (const [peerName, peer] of [
      ["the bare read", bare],
      ["the bare read behind the assets front", behind],
    ] as const) {
      const r = ratiosOf(ours, slices.get(peer)!);
      const median = quantile(r.p50, 0.5);
      const within = r.p50.filter((v) => v <= target).length;
      const verdict =
        median <= target
          ? quantile(r.p50, 0.75) <= target
            ? "within 1.25×"
            : "within 1.25× at the median, not in every quarter of the rounds"
          : quantile(r.p50, 0.25) > target
            ? "NOT within 1.25×"
            : "NOT within 1.25× at the median (the lower quartile is)";
      out.push(
        `  vs ${peerName}: p50 ×${spread(r.p50)} (${within}/${rounds} rounds ≤ ${target}); ` +
          `thread ms/req ×${spread(r.thread)}, pooled ×${r.pooledThread.toFixed(2)} (${r.pooledMs[0].toFixed(2)} vs ${r.pooledMs[1].toFixed(2)} ms) → ${verdict}`,
      );
    }
    const f = ratiosOf(slices.get(behind)!, slices.get(bare)!);
    out.push(
      `  the front itself (bare read behind it over the bare read): p50 ×${spread(f.p50)}; thread ms/req ×${spread(f.thread)}, pooled ×${f.pooledThread.toFixed(2)}`,
    );
  }
  console.log(
    `\nbench/api --paired — wrk -t1 -c${args.connections}, slices of ${args.slice} s, ${rounds} rounds a read (bare, ours, front; then front, ours, bare), ${cpus().length} cores, ${started} – ${new Date().toISOString()}`,
  );
  console.log(
    "Ratios are ours over the peer in the same round: median [lower–upper quartile] min–max over the rounds; pooled = all of ours' thread ms a request over all of the peer's.",
  );
  for (const line of out) console.log(line);
  console.log(
    "\nTarget (issue 40): every read ≤ 1.25× the bare read at p50. Verdict by the median of the per-round p50 ratios, with the quartiles beside it.",
  );
}

async function main() {
  const persist = tempStateDir("dq-bench-api-");
  let worker: WorkerProcess | undefined;
  let hello: Awaited<ReturnType<typeof launchWranglerDev>> | undefined;
  let compat: Awaited<ReturnType<typeof launchWranglerDev>> | undefined;
  let front: Awaited<ReturnType<typeof launchWranglerDev>> | undefined;
  try {
    log("migrating a local D1 and starting the service and the peers' Worker (wrangler dev)");
    applyMigrations(persist);
    const inspectorPort = args.profile ? await freePort() : undefined;
    const service = await startWorker(persist, {
      ...(inspectorPort ? { args: ["--inspector-port", String(inspectorPort)] } : {}),
    });
    worker = service;
    const peersInspectorPort = args.profile ? await freePort() : undefined;
    hello = await launchWranglerDev(
      [
        "--config",
        join(ROOT, "bench/api/hello/wrangler.toml"),
        "--persist-to",
        join(persist, "peers"),
        ...(peersInspectorPort ? ["--inspector-port", String(peersInspectorPort)] : []),
      ],
      {
        verbose: false,
        healthPath: "/",
      },
    );
    // The same peers with nodejs_compat, and our middleware around D1 added a layer at a time
    // (bench/api/hello/compat.ts): its own wrangler dev, so its own runtime thread.
    compat = await launchWranglerDev(
      [
        "--config",
        join(ROOT, "bench/api/hello/compat.toml"),
        "--persist-to",
        join(persist, "compat"),
        ...BENCH_SECRETS,
      ],
      { verbose: false, healthPath: "/" },
    );
    // The peers behind our static-assets front (bench/api/hello/front.toml): its own wrangler dev.
    front = await launchWranglerDev(
      ["--config", join(ROOT, "bench/api/hello/front.toml"), "--persist-to", join(persist, "front")],
      { verbose: false, healthPath: "/" },
    );
    const { tenant, projectId, assetId, tokens } = await seedTenant(
      (method, path, headers, body) => api(service.base, method, path, headers, body),
      service.adminKey,
    );
    const base = `${worker.base}/api/backend/${tenant}/configuration`;
    // The peers' /same/<name>: each read's own D1 call (its SQL as the service ran it, read from
    // wrangler dev's local trace store; the values of the bench's first user) on a copy of the
    // seeded database.
    copyDatabase(persist, join(persist, "peers"));
    copyDatabase(persist, join(persist, "compat"));
    copyDatabase(persist, join(persist, "front"));
    const user = "reader0@bench.example";
    const sameCalls: [string, string, unknown[]][] = [
      ["projects", `${base}/projects`, [tenant, JSON.stringify([projectId]), 1001]],
      ["assets", `${base}/projects/${projectId}/assets`, [user, tenant, projectId, 1001]],
      ["asset", `${base}/projects/${projectId}/assets/${assetId}`, [user, tenant, assetId, 1]],
    ];
    for (const [name, url, params] of sameCalls) {
      const sql = await lastD1Query(persist, url, tokens[0]!);
      for (const peers of [hello, front]) {
        await api(peers.base, "POST", `/same/${name}`, {}, { method: "raw", statements: [{ sql, params }] });
      }
    }
    const routes: Route[] = [
      { name: "hello-world Worker", url: `${hello.base}/` },
      { name: "bare read (limiter + 1 D1)", url: `${hello.base}/floor` },
      { name: "hello-world behind assets front", url: `${front.base}/` },
      { name: "bare read behind assets front", url: `${front.base}/floor` },
      { name: "  limiter only", url: `${hello.base}/limiter` },
      { name: "  one D1 query only", url: `${hello.base}/d1` },
      { name: "  bare read in Hono", url: `${hello.base}/hono/${tenant}/floor` },
      { name: "  + nodejs_compat", url: `${compat.base}/hono/${tenant}/floor` },
      { name: "  + AsyncLocalStorage.run", url: `${compat.base}/als/${tenant}/floor` },
      { name: "  + D1 session, bookmark", url: `${compat.base}/session/${tenant}/floor` },
      { name: "  + D1 meter, Server-Timing", url: `${compat.base}/metered/${tenant}/floor` },
      { name: "  + our request-scoped D1", url: `${compat.base}/ours/${tenant}/floor` },
      { name: "  + our authentication", url: `${compat.base}/authn/${tenant}/floor`, tokens },
      { name: "  our app in this peer: /health", url: `${compat.base}/health` },
      { name: "  our app: authn, bare read", url: `${compat.base}/api/ladder/${tenant}/authn`, tokens },
      { name: "  + access check", url: `${compat.base}/api/ladder/${tenant}/access`, tokens },
      { name: "  + checkInput", url: `${compat.base}/api/ladder/${tenant}/input`, tokens },
      { name: "  + validators (authedRoute)", url: `${compat.base}/api/ladder/${tenant}/validators`, tokens },
      { name: "  … GET projects (list)", url: `${compat.base}/api/backend/${tenant}/configuration/projects`, tokens },
      {
        name: "  … GET assets of a project",
        url: `${compat.base}/api/backend/${tenant}/configuration/projects/${projectId}/assets`,
        tokens,
      },
      {
        name: "  … GET one asset",
        url: `${compat.base}/api/backend/${tenant}/configuration/projects/${projectId}/assets/${assetId}`,
        tokens,
      },
      { name: "GET /health", url: `${worker.base}/health` },
      { name: "GET projects (list)", url: `${base}/projects`, tokens },
      { name: "  its query, bare", url: `${hello.base}/same/projects` },
      { name: "  its query, behind assets front", url: `${front.base}/same/projects` },
      { name: "GET assets of a project (20)", url: `${base}/projects/${projectId}/assets`, tokens },
      { name: "  its query, bare ", url: `${hello.base}/same/assets` },
      { name: "  its query, behind assets front ", url: `${front.base}/same/assets` },
      { name: "GET one asset", url: `${base}/projects/${projectId}/assets/${assetId}`, tokens },
      { name: "  its query, bare  ", url: `${hello.base}/same/asset` },
      { name: "  its query, behind assets front  ", url: `${front.base}/same/asset` },
      { name: "GET incidents summary", url: `${worker.base}/api/backend/${tenant}/incidents/summary`, tokens },
      {
        name: "PUT project (write)",
        url: `${base}/projects/${projectId}`,
        method: "PUT",
        headers: { "content-type": "application/json" },
        tokens,
        body: JSON.stringify({ description: "bench" }),
      },
    ];
    const only = args.only === undefined ? undefined : new RegExp(args.only, "i");
    const measured = routes.filter(
      (r) => !only || !r.url.startsWith(worker!.base) || r.name === "GET /health" || only.test(r.name),
    );
    const inspector = inspectorPort ? await Inspector.connect(inspectorPort, Number(args.interval)) : undefined;
    const peersInspector = peersInspectorPort
      ? await Inspector.connect(peersInspectorPort, Number(args.interval))
      : undefined;
    const bundlePath = join(persist, "worker-bundle", "index.js");
    const module = inspector ? moduleOf(readFileSync(bundlePath, "utf8")) : undefined;
    // The peers' Worker is one small file: all of its JavaScript is "(bundle head)".
    const peersModule = moduleOf("");
    if (args.save) {
      mkdirSync(args.save, { recursive: true });
      if (inspector) copyFileSync(bundlePath, join(args.save, "index.js"));
    }
    const groupOf = (route: Route) =>
      route.url.startsWith(worker!.base)
        ? worker!.processGroup
        : route.url.startsWith(compat!.base)
          ? compat!.processGroup
          : route.url.startsWith(front!.base)
            ? front!.processGroup
            : hello!.processGroup;
    if (args.paired) {
      const byName = (name: string) => routes.find((r) => r.name === name)!;
      const reads = measured.filter((r) => r.name.startsWith("GET ") && r.name !== "GET /health");
      pairedRuns(
        reads,
        byName("bare read (limiter + 1 D1)"),
        byName("bare read behind assets front"),
        groupOf,
        persist,
      );
      inspector?.close();
      peersInspector?.close();
      return;
    }
    const results = new Map<string, Figures>();
    for (const route of measured) {
      log(`wrk ${route.name}`);
      const ours = route.url.startsWith(worker.base);
      const group = groupOf(route);
      if (Number(args.warmup) > 0) runWrk(route, persist, args.warmup);
      const profiler = ours ? inspector : route.url.startsWith(hello.base) ? peersInspector : undefined;
      await profiler?.start();
      const cpuBefore = groupCpuMs(group);
      const threadsBefore = groupThreadCpuMs(group);
      const figures = runWrk(route, persist);
      figures.cpuMsPerRequest = (groupCpuMs(group) - cpuBefore) / figures.requests;
      figures.threadMsPerRequest = busiestThreadMs(threadsBefore, groupThreadCpuMs(group)) / figures.requests;
      if (profiler) {
        const profile = await profiler.stop();
        const { busyMs, rows } = selfTimes(profile);
        figures.hot = rows.slice(0, 12);
        figures.callers = totalTimes(profile).slice(0, 25);
        figures.isolateMs = busyMs / figures.requests;
        figures.modules = moduleTimes(profile, ours ? module! : peersModule).slice(0, 16);
        if (args.save) {
          writeFileSync(
            join(args.save, `${route.name.trim().replace(/\W+/g, "-")}.cpuprofile`),
            JSON.stringify(profile),
          );
        }
      }
      // Only our routes say what they cost in D1 (the peers send no Server-Timing).
      if (ours) figures.roundTrips = await roundTrips(route);
      results.set(route.name, figures);
    }
    inspector?.close();
    peersInspector?.close();
    const health = results.get("GET /health")!.p50;
    const helloP50 = results.get("hello-world Worker")!.p50;
    const floorP50 = results.get("bare read (limiter + 1 D1)")!.p50;
    const frontP50 = results.get("bare read behind assets front")!.p50;
    const pad = (s: string, n: number) => s.padEnd(n);
    const num = (v: number, digits = 1) => v.toFixed(digits).padStart(8);
    console.log(
      `\nbench/api — wrk -t1 -c${args.connections} -d${args.duration}s, ${cpus().length} cores, ${new Date().toISOString()}`,
    );
    console.log(
      `${pad("route", 32)}${"p50 ms".padStart(8)}${"p99 ms".padStart(8)}${"req/s".padStart(8)}${"×health".padStart(9)}${"×hello".padStart(8)}${"×bare".padStart(8)}${"×front".padStart(8)}  D1 calls (sequential)  non-2xx  CPU ms/req  thread ms/req${inspector ? "  isolate ms/req" : ""}`,
    );
    for (const [name, f] of results) {
      const cpu = `  ${(f.cpuMsPerRequest ?? Number.NaN).toFixed(2).padStart(10)}${(f.threadMsPerRequest ?? Number.NaN).toFixed(2).padStart(15)}${f.isolateMs === undefined ? "" : f.isolateMs.toFixed(2).padStart(16)}`;
      console.log(
        `${pad(name, 32)}${num(f.p50)}${num(f.p99)}${num(f.rps, 0)}${num(f.p50 / health, 2).padStart(9)}${num(f.p50 / helloP50, 2)}${num(f.p50 / floorP50, 2)}${num(f.p50 / frontP50, 2)}  ${pad(f.roundTrips ?? "-", 22)} ${String(f.errors).padStart(7)}${cpu}`,
      );
    }
    for (const [name, f] of results) {
      if (!f.hot) continue;
      console.log(`\n${name}: busiest functions of the isolate (self time, ms per request)`);
      for (const h of f.hot) console.log(`  ${(h.ms / f.requests).toFixed(3).padStart(7)}  ${h.name}`);
      console.log(`${name}: inclusive time (ms per request)`);
      for (const h of f.callers ?? []) console.log(`  ${(h.ms / f.requests).toFixed(3).padStart(7)}  ${h.name}`);
      console.log(`${name}: self time by module (ms per request)`);
      for (const h of f.modules ?? []) console.log(`  ${(h.ms / f.requests).toFixed(3).padStart(7)}  ${h.name}`);
    }
    console.log(
      "\nTarget (issue 40): every read ≤ 1.25× the bare read at p50, every write 1 sequential D1 round trip (the D1 calls column).",
    );
    const reads = [...results].filter(([name]) => name.startsWith("GET ") && name !== "GET /health");
    const worst = Math.max(...reads.map(([, f]) => f.p50 / floorP50));
    const worstFront = Math.max(...reads.map(([, f]) => f.p50 / frontP50));
    const threadOf = (name: string) => results.get(name)!.threadMsPerRequest!;
    const worstThread = Math.max(
      ...reads.map(([, f]) => f.threadMsPerRequest! / threadOf("bare read (limiter + 1 D1)")),
    );
    const worstThreadFront = Math.max(
      ...reads.map(([, f]) => f.threadMsPerRequest! / threadOf("bare read behind assets front")),
    );
    console.log(
      `Reads here: ${reads.length} routes, the slowest ${worst.toFixed(2)}× the bare read at p50 ` +
        `(${worstThread.toFixed(2)}× by thread ms), ${worstFront.toFixed(2)}× the bare read behind the same assets front ` +
        `(${worstThreadFront.toFixed(2)}× by thread ms).`,
    );
    const names = [...results.keys()];
    for (const [i, name] of names.entries()) {
      const next = names[i + 1];
      if (!name.startsWith("GET ") || !next?.startsWith("  its query, bare")) continue;
      const ours = results.get(name)!;
      const bare = results.get(next)!;
      const behind = names[i + 2]?.startsWith("  its query, behind") ? results.get(names[i + 2]!) : undefined;
      console.log(
        `${name}: ${(ours.p50 / bare.p50).toFixed(2)}× its own query run bare (limiter + the same D1 call) at p50, ` +
          `${(ours.threadMsPerRequest! - bare.threadMsPerRequest!).toFixed(2)} ms more of the runtime thread a request` +
          (behind
            ? `; ${(ours.p50 / behind.p50).toFixed(2)}× (${(ours.threadMsPerRequest! - behind.threadMsPerRequest!).toFixed(2)} ms) the same behind the assets front.`
            : "."),
      );
    }
    console.log(
      `The bare read, which does only what any authenticated read must (the rate limiter, then one D1 query), is ${(floorP50 / health).toFixed(2)}× /health here.`,
    );
    const thread = (name: string) => results.get(name)?.threadMsPerRequest ?? Number.NaN;
    const callsMs = thread("bare read (limiter + 1 D1)") - thread("hello-world Worker");
    const healthMs = thread("GET /health");
    console.log(
      `Runtime thread: the two calls cost ${callsMs.toFixed(2)} ms a request (bare read less hello-world), /health ${healthMs.toFixed(2)} ms; ` +
        `a read of ours that did nothing else would take ${((healthMs + callsMs) / healthMs).toFixed(2)}× /health's thread time.`,
    );
  } finally {
    hello?.stop();
    compat?.stop();
    front?.stop();
    worker?.stop();
    dropStateDir(persist, args.keep);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
