/**
 * bench/incidents: the incident reads at scale, and the aggregation rate of the AssetMonitor.
 *
 *   npm run bench:incidents -- [--incidents 100000] [--alerts 1000000] [--runs 30] [--keep]
 *
 * 1. Applies the migrations to a local D1 in a temporary --persist-to directory (wrangler).
 * 2. Seeds one tenant with the incidents and alerts by multi-row INSERTs straight into that
 *    SQLite file (node:sqlite), plus two small tenants whose recent alerts are to be aggregated.
 * 3. Times the SQL of list, summary and distribution directly on the file (node:sqlite): the
 *    summary and distribution both from the incidents table alone (the code before the daily
 *    rollups, kept as the reference) and as the endpoints read them now (rollups + edge days);
 *    then starts the Worker (wrangler dev on that state) and times the reads through it.
 * 4. Live aggregation: CSV batches uploaded to 100 assets of another tenant (POST …/batch_data,
 *    the entry point of every uploaded scan: R2 → scan-jobs queue → profiler → AssetMonitor →
 *    D1), each batch with empty values in many columns so that every scan raises dozens of
 *    alerts and opens as many incidents; alerts per second from the first upload to the last
 *    job finished, round by round.
 *    Beside it, its peer (bench/incidents/plumbing): the same uploads, rounds and concurrency to a
 *    Worker that only stores each upload in R2, queues its job and has the consumer read it back
 *    and mark it done in D1; ours ÷ its rate is comparable across machines.
 * 5. Rebuild aggregation (--rebuild): POST /incidents/historical makes the Worker rebuild each
 *    asset's incidents from its alerts through its AssetMonitor; alerts per second from the
 *    job's own timings, for one asset and across 100 assets.
 *
 * Every figure is measured in this run.
 */

import { readdirSync, statSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { createDb } from "../../src/db";
import { type IncidentFilters, resolveRange } from "../../src/incidents/filters";
import {
  distributionQuery,
  listIncidentsQuery,
  summaryQueries,
  summaryRollupQueries,
} from "../../src/incidents/incidents";
import { dayCountsQueries } from "../../src/incidents/rollups";
import { prng } from "../../test/support/random";
import { Inspector, selfTimes, totalTimes } from "../api/cpu-profile";
import { DqService, pool } from "../detection/service";
import { liveCsv } from "../support/live-batch";
import { groupCpuMs } from "../support/proc-cpu";
import {
  applyMigrations,
  dropStateDir,
  freePort,
  launchWranglerDev,
  log,
  ROOT,
  startWorker,
  tempStateDir,
  type WorkerProcess,
} from "../support/wrangler-dev";

const DAY = 86_400_000;
const TENANT = "bench";
const POLICIES = [
  ["row_count_anomaly", "Row count anomaly", "completeness"],
  ["completeness", "Completeness", "completeness"],
  ["uniqueness", "Uniqueness", "consistency"],
  ["schema_change", "Schema change", "consistency"],
  ["freshness", "Freshness", "timeliness"],
  ["value_range", "Value range", "accuracy"],
  ["distribution_drift", "Distribution drift", "accuracy"],
  ["pattern_drift", "Pattern drift", "accuracy"],
  ["cardinality_drift", "Cardinality drift", "consistency"],
  ["type_mismatch", "Type mismatch", "accuracy"],
] as const;
const LEVELS = ["LOW", "MEDIUM", "HIGH"] as const;
const TYPES = ["S3", "SNOWFLAKE", "BIGQUERY", "GENERIC_JDBC"] as const;
const ATTRIBUTES = Array.from({ length: 20 }, (_, i) => `column_${i}`);

const { values: args } = parseArgs({
  options: {
    incidents: { type: "string", default: "100000" },
    alerts: { type: "string", default: "1000000" },
    runs: { type: "string", default: "30" },
    "one-asset-alerts": { type: "string", default: "2000" },
    "many-asset-alerts": { type: "string", default: "100" },
    "live-assets": { type: "string", default: "100" },
    "live-columns": { type: "string", default: "36" },
    "live-rows": { type: "string", default: "200" },
    "live-rounds": { type: "string", default: "3" },
    rebuild: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});
const N_INCIDENTS = Number(args.incidents);
const N_ALERTS = Number(args.alerts);
const RUNS = Number(args.runs);

const rand = prng(42);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

function findSqlite(dir: string): string {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && entry.name.endsWith(".sqlite") && path.includes("D1DatabaseObject")) return path;
  }
  throw new Error(`no D1 SQLite file under ${dir}`);
}

/** Inserts rows through one prepared multi-row INSERT per `perStatement` rows (SQLite allows 32766 parameters). */
function bulkInsert(db: DatabaseSync, table: string, columns: string[], rows: Iterable<unknown[]>, perStatement = 500) {
  const placeholders = (n: number) =>
    Array.from({ length: n }, () => `(${columns.map(() => "?").join(",")})`).join(",");
  const full = db.prepare(`INSERT INTO ${table} (${columns.join(",")}) VALUES ${placeholders(perStatement)}`);
  let batch: unknown[] = [];
  let count = 0;
  const flush = () => {
    const n = batch.length / columns.length;
    if (n === 0) return;
    const stmt =
      n === perStatement ? full : db.prepare(`INSERT INTO ${table} (${columns.join(",")}) VALUES ${placeholders(n)}`);
    stmt.run(...(batch as never[]));
    batch = [];
  };
  for (const row of rows) {
    batch.push(...row);
    count += 1;
    if (count % perStatement === 0) flush();
  }
  flush();
  return count;
}

interface SeededAsset {
  tenant: string;
  id: number;
  name: string;
  projectId: number;
  connectionId: number;
  type: string;
}

/** A tenant with projects, one connection per project and `assets` assets spread over them. */
function seedTenant(db: DatabaseSync, tenant: string, projectCount: number, assetCount: number): SeededAsset[] {
  const now = new Date().toISOString();
  db.prepare(
    "INSERT INTO tenants (id, name, data_ttl, free_upload_limit, created_at, updated_at) VALUES (?, ?, 90, 53687091200, ?, ?)",
  ).run(tenant, `Bench ${tenant}`, now, now);
  const projects: Array<{ id: number; connectionId: number; type: string }> = [];
  for (let p = 0; p < projectCount; p++) {
    const { lastInsertRowid: projectId } = db
      .prepare(
        "INSERT INTO projects (tenant_id, name, created_by, created_at, updated_at) VALUES (?, ?, 'bench', ?, ?)",
      )
      .run(tenant, `project ${p}`, now, now);
    const type = TYPES[p % TYPES.length]!;
    const { lastInsertRowid: connectionId } = db
      .prepare(
        `INSERT INTO connections (tenant_id, project_id, name, type, payload, credential_type, credential_secret,
           created_by, created_at, updated_at) VALUES (?, ?, ?, ?, '{}', 'SIMPLE', '{}', 'bench', ?, ?)`,
      )
      .run(tenant, projectId, `conn ${p}`, type, now, now);
    projects.push({ id: Number(projectId), connectionId: Number(connectionId), type });
  }
  const assets: SeededAsset[] = [];
  for (let i = 0; i < assetCount; i++) {
    const project = projects[i % projects.length]!;
    const name = `${pick(["orders", "customers", "payments", "events", "sessions"])}_${i}`;
    const { lastInsertRowid } = db
      .prepare(
        `INSERT INTO assets (tenant_id, project_id, connection_id, name, type, options, payload, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, '{}', '{}', 'bench', ?, ?)`,
      )
      .run(tenant, project.id, project.connectionId, name, project.type, now, now);
    assets.push({
      tenant,
      id: Number(lastInsertRowid),
      name,
      projectId: project.id,
      connectionId: project.connectionId,
      type: project.type,
    });
  }
  return assets;
}

const ALERT_COLUMNS = [
  "tenant_id",
  "asset_id",
  "project_id",
  "connection_id",
  "job_id",
  "type",
  "policy_name",
  "attribute",
  "priority",
  "description",
  "source_name",
  "source_type",
  "is_notification_enabled",
  "metric",
  "metric_value",
  "metric_time",
  "create_time",
  "save_time",
  "details",
];

/** `perAsset` alerts for each asset: one per scan job, scans spread over `spanDays` up to now. */
function* alertRows(assets: SeededAsset[], perAsset: number, spanDays: number, now: number) {
  for (const a of assets) {
    for (let k = 0; k < perAsset; k++) {
      const [policy, policyName, dimension] = pick(POLICIES);
      const attribute = pick(ATTRIBUTES);
      const time = new Date(now - spanDays * DAY + ((k + 0.5) / perAsset) * spanDays * DAY).toISOString();
      const value = (rand() * 100).toFixed(3);
      yield [
        a.tenant,
        a.id,
        a.projectId,
        a.connectionId,
        `job-${a.id}-${k}`,
        policy,
        policyName,
        attribute,
        pick(LEVELS),
        `${policyName} of ${attribute} is ${value}`,
        a.name,
        a.type,
        1,
        `attr:${attribute}:${policy}`,
        value,
        time,
        time,
        time,
        JSON.stringify({ observed: Number(value), expected: { low: 0, high: 10 }, dimension }),
      ];
    }
  }
}

function* incidentRows(assets: SeededAsset[], count: number, now: number) {
  // One OPEN incident per (asset, policy, attribute) at most: the first time a key comes up
  // among the newest 5 % it is OPEN, the others CLOSED.
  const openKeys = new Set<string>();
  for (let i = 0; i < count; i++) {
    const a = pick(assets);
    const [policy, policyName, tag] = pick(POLICIES);
    const attribute = pick(ATTRIBUTES);
    const openedMs = now - 365 * DAY + (i / count) * 365 * DAY;
    const opened = new Date(openedMs).toISOString();
    const key = `${a.id}:${policy}:${attribute}`;
    const open = i >= count * 0.95 && !openKeys.has(key);
    if (open) openKeys.add(key);
    const closed = open ? null : new Date(openedMs + (1 + rand() * 96) * 3_600_000).toISOString();
    const firstResponse = rand() < 0.4 ? new Date(openedMs + rand() * 12 * 3_600_000).toISOString() : null;
    yield [
      a.tenant,
      a.id,
      a.projectId,
      a.connectionId,
      a.type,
      a.name,
      policy,
      policyName,
      attribute,
      open ? "OPEN" : "CLOSED",
      pick(LEVELS),
      pick(LEVELS),
      tag,
      1 + Math.floor(rand() * 10),
      opened,
      closed ?? opened,
      closed,
      closed ? pick(["FIXED", "AUTO_RESOLVED", "EXPECTED", "NO_ACTION_NEEDED"]) : null,
      firstResponse,
      opened,
    ];
  }
}

const INCIDENT_COLUMNS = [
  "tenant_id",
  "asset_id",
  "project_id",
  "connection_id",
  "connection_type",
  "source_name",
  "policy",
  "policy_name",
  "attribute",
  "state",
  "severity",
  "impact",
  "tag",
  "alert_count",
  "opened_at",
  "last_alert_at",
  "closed_at",
  "close_reason",
  "first_response_at",
  "updated_at",
];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function timeIt(runs: number, fn: () => unknown | Promise<unknown>) {
  for (let i = 0; i < 3; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

/** A read of the benchmark: its query string through the Worker, its SQL on the file. */
type Queries = Array<{ toSQL(): { sql: string; params: unknown[] } }>;
interface Read {
  name: string;
  path: string;
  filters: IncidentFilters;
  /** The statements the endpoint runs now. */
  sql: (db: ReturnType<typeof createDb>, now: Date) => Queries;
  /** The statements it ran before the daily rollups (the incidents table alone), if they differ. */
  before?: (db: ReturnType<typeof createDb>, now: Date) => Queries;
}

/** The summary's statements as the endpoint runs them now (rollups and edge days). */
function summaryNow(db: ReturnType<typeof createDb>, filters: IncidentFilters, now: Date): Queries {
  const q = summaryRollupQueries(db, TENANT, undefined, filters, resolveRange(filters, now))!;
  return [q.open, ...q.current, ...q.previous];
}

interface LiveRound {
  scans: number;
  alerts: number;
  incidents: number;
  seconds: number;
  /** CPU seconds of the Worker's runtime during the round (uploads, queue, scans, polling included). */
  cpu: number;
  waitP50: number;
  runP50: number;
  failed: number;
  stalled: number;
}

/**
 * User + system CPU seconds of every process in a group so far: the Worker's runtime (workerd,
 * with D1, the Durable Objects and the queues) and wrangler. A shared, loaded machine stretches
 * wall time; CPU time per alert is what the code costs.
 */
const groupCpuSeconds = (pgid: number | undefined) => groupCpuMs(pgid) / 1000;

/** Every incident the tenant has had (the summary over all time). */
async function incidentTotal(base: string, adminKey: string, tenant: string): Promise<number> {
  const range = `from_time=2000-01-01T00:00:00.000Z&to_time=${new Date(Date.now() + DAY).toISOString()}`;
  const res = await fetch(`${base}/api/backend/${tenant}/incidents/summary?${range}`, {
    headers: { "X-SVC-Key": adminKey },
  });
  if (!res.ok) throw new Error(`summary: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { total: number }).total;
}

/**
 * The live path, as a customer's uploads drive it: a tenant with 10 projects and `live-assets`
 * S3 assets; each round uploads one batch to every asset at once (16 requests in flight), then
 * waits for every job. The round's time runs from the first upload to the last job's
 * finished_at (the Worker's clock, on this machine); its alerts are the jobs' own.
 */
async function liveAggregation(
  base: string,
  adminKey: string,
  pgid: number | undefined,
  inspector: Inspector | undefined,
) {
  const assetCount = Number(args["live-assets"]);
  const columns = Number(args["live-columns"]);
  const rows = Number(args["live-rows"]);
  const service = await DqService.bootstrap(base, adminKey, "bench-live");
  const projects: Array<{ project: number; connection: number }> = [];
  for (let p = 0; p < 10; p++) {
    const project = await service.createProject(`live ${p}`);
    projects.push({ project, connection: await service.createConnection(project, `live uploads ${p}`) });
  }
  const assetIds: number[] = [];
  await pool(
    Array.from({ length: assetCount }, (_, i) => i),
    8,
    async (i) => {
      const { project, connection } = projects[i % projects.length]!;
      assetIds[i] = await service.createAsset(project, connection, `live_${i}`);
    },
  );
  const rounds: LiveRound[] = [];
  const profiles: Awaited<ReturnType<Inspector["stop"]>>[] = [];
  for (let round = 1; round <= Number(args["live-rounds"]); round++) {
    const csvs = assetIds.map((_, i) => liveCsv(round, i, columns, rows));
    // The profile covers what the CPU figure does: uploads to the last job's end, polling included.
    if (inspector) await inspector.start();
    const start = Date.now();
    const cpuStart = groupCpuSeconds(pgid);
    const jobs: Array<{ asset: number; job: string }> = [];
    await pool(
      assetIds.map((id, i) => ({ id, i })),
      16,
      async ({ id, i }) => {
        jobs.push({ asset: id, job: await service.upload(id, csvs[i]!) });
      },
    );
    // One job polled at a time, in upload order: a hundred pollers would load the Worker more than the scans do.
    const done: Array<{ asset: number; job: string; status: Awaited<ReturnType<DqService["waitForJob"]>> }> = [];
    for (const { asset, job } of jobs) done.push({ asset, job, status: await service.waitForJob(asset, job) });
    const finished = done.map((d) => (d.status as { finished_at?: string | null }).finished_at);
    const end = Math.max(...finished.map((f) => (f ? Date.parse(f) : Date.now())));
    const cpu = groupCpuSeconds(pgid) - cpuStart;
    if (inspector) profiles.push(await inspector.stop());
    let alerts = 0;
    await pool(done, 16, async ({ asset, job }) => {
      const raised = await service.alerts(asset, job);
      alerts += raised.length;
    });
    const waits = done
      .map((d) => (d.status.started_at ? (Date.parse(d.status.started_at) - start) / 1000 : Number.NaN))
      .filter((x) => !Number.isNaN(x))
      .sort((a, b) => a - b);
    const runs = done
      .map((d, i) =>
        d.status.started_at && finished[i]
          ? (Date.parse(finished[i]!) - Date.parse(d.status.started_at)) / 1000
          : Number.NaN,
      )
      .filter((x) => !Number.isNaN(x))
      .sort((a, b) => a - b);
    const incidents = await incidentTotal(base, adminKey, service.tenant);
    rounds.push({
      scans: done.length,
      alerts,
      incidents: incidents - rounds.reduce((t, r) => t + r.incidents, 0),
      seconds: (end - start) / 1000,
      cpu,
      waitP50: waits.length ? percentile(waits, 50) : Number.NaN,
      runP50: runs.length ? percentile(runs, 50) : Number.NaN,
      failed: done.filter((d) => d.status.status === "FAILED").length,
      stalled: done.filter((d) => d.status.stalled).length,
    });
    log(`  round ${round}: ${alerts} alerts in ${((end - start) / 1000).toFixed(1)} s`);
  }
  return { assets: assetCount, columns, rows, rounds, profiles };
}

/** A round of the plumbing peer: its scans, wall seconds and the CPU seconds of its processes. */
interface PeerRound {
  scans: number;
  seconds: number;
  cpu: number;
  failed: number;
}

/**
 * The live path's peer (bench/incidents/plumbing): the same uploads, in the same rounds and
 * concurrency, to a Worker that only stores each in R2, records and queues its job, and has the
 * consumer read it back and mark it done; run by its own wrangler dev once ours is idle. Its rate is
 * what this machine's local runtime gives the plumbing alone, so ours ÷ it is comparable across
 * machines where the absolute alerts/s are not.
 */
async function plumbingPeer(persist: string, assetCount: number, columns: number, rows: number, roundCount: number) {
  const peer = await launchWranglerDev(
    ["--config", join(ROOT, "bench/incidents/plumbing/wrangler.toml"), "--persist-to", join(persist, "plumbing")],
    { verbose: false, healthPath: "/health" },
  );
  try {
    const rounds: PeerRound[] = [];
    for (let round = 1; round <= roundCount; round++) {
      const csvs = Array.from({ length: assetCount }, (_, i) => liveCsv(round, i, columns, rows));
      const start = Date.now();
      const cpuStart = groupCpuSeconds(peer.processGroup);
      const jobs: string[] = [];
      await pool(
        csvs.map((csv, i) => ({ csv, i })),
        16,
        async ({ csv, i }) => {
          const res = await fetch(`${peer.base}/assets/${i}/batch_data`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ csv }),
          });
          if (res.status !== 202) throw new Error(`plumbing peer upload: ${res.status} ${await res.text()}`);
          jobs.push(((await res.json()) as { job_id: string }).job_id);
        },
      );
      // Polled as ours: one job at a time in upload order, backing off from 100 ms to 1 s.
      const finished: number[] = [];
      let failed = 0;
      for (const id of jobs) {
        for (let delay = 100, waited = 0; ; delay = Math.min(1000, delay * 1.5)) {
          const job = (await (await fetch(`${peer.base}/jobs/${id}`)).json()) as {
            status: string;
            finished_at: string;
          };
          if (job.status === "SUCCEEDED") {
            finished.push(Date.parse(job.finished_at));
            break;
          }
          if (waited > 60_000) {
            failed++;
            break;
          }
          await new Promise((r) => setTimeout(r, delay));
          waited += delay;
        }
      }
      rounds.push({
        scans: jobs.length - failed,
        seconds: finished.length > 0 ? (Math.max(...finished) - start) / 1000 : Number.NaN,
        cpu: groupCpuSeconds(peer.processGroup) - cpuStart,
        failed,
      });
    }
    return rounds;
  } finally {
    peer.stop();
  }
}

/**
 * Where the live rounds' CPU went in the Worker's isolate (--profile, one profile per round over
 * the window of its CPU figure): the busiest functions by self time and by inclusive time, in ms per
 * scan over all rounds; the profiles are written beside, for DevTools.
 */
function profileLines(profiles: Awaited<ReturnType<Inspector["stop"]>>[], scans: number): string[] {
  const files = profiles.map((profile, i) => {
    const file = join(tmpdir(), `bench-incidents-live-${Date.now()}-round${i + 1}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    return file;
  });
  const sum = (rows: { name: string; ms: number }[][]) => {
    const ms = new Map<string, number>();
    for (const r of rows.flat()) ms.set(r.name, (ms.get(r.name) ?? 0) + r.ms);
    return [...ms].map(([name, v]) => ({ name, ms: v })).sort((a, b) => b.ms - a.ms);
  };
  const self = profiles.map(selfTimes);
  const busyMs = self.reduce((t, s) => t + s.busyMs, 0);
  const row = ({ name, ms }: { name: string; ms: number }) => `    ${(ms / scans).toFixed(2).padStart(7)}  ${name}`;
  return [
    `  the isolate's CPU profile of the live rounds: ${(busyMs / scans).toFixed(1)} ms busy per scan (${files.join(", ")})`,
    "  self time, ms per scan:",
    ...sum(self.map((s) => s.rows))
      .slice(0, 25)
      .map(row),
    "  inclusive time, ms per scan:",
    ...sum(profiles.map(totalTimes)).slice(0, 40).map(row),
  ];
}

async function main() {
  const persist = tempStateDir("dq-bench-incidents-");
  let worker: WorkerProcess | undefined;
  try {
    log(`applying migrations into ${persist}`);
    applyMigrations(persist);
    const file = findSqlite(persist);

    const now = Date.now();
    const sqlite = new DatabaseSync(file);
    sqlite.exec("PRAGMA synchronous = OFF");
    const t0 = performance.now();
    sqlite.exec("BEGIN");
    const assets = seedTenant(sqlite, TENANT, 20, 100);
    const alertCount = bulkInsert(
      sqlite,
      "alerts",
      ALERT_COLUMNS,
      alertRows(assets, Math.ceil(N_ALERTS / assets.length), 365, now),
    );
    const incidentCount = bulkInsert(sqlite, "incidents", INCIDENT_COLUMNS, incidentRows(assets, N_INCIDENTS, now));
    // Aggregation tenants: alerts of the last 30 days that no incident refers to yet.
    const one = seedTenant(sqlite, "bench-one", 1, 1);
    const oneAlerts = bulkInsert(
      sqlite,
      "alerts",
      ALERT_COLUMNS,
      alertRows(one, Number(args["one-asset-alerts"]), 29, now),
    );
    const many = seedTenant(sqlite, "bench-many", 10, 100);
    const manyAlerts = bulkInsert(
      sqlite,
      "alerts",
      ALERT_COLUMNS,
      alertRows(many, Number(args["many-asset-alerts"]), 29, now),
    );
    sqlite.exec("COMMIT");
    sqlite.exec("ANALYZE");
    const seedSeconds = (performance.now() - t0) / 1000;
    log(
      `seeded ${incidentCount} incidents and ${alertCount} alerts in tenant ${TENANT} (+${oneAlerts} / ${manyAlerts} ` +
        `to aggregate) in ${seedSeconds.toFixed(1)} s; file ${(statSync(file).size / 1e6).toFixed(0)} MB`,
    );

    const year = { from_time: new Date(now - 365 * DAY).toISOString(), to_time: new Date(now).toISOString() };
    const drizzleDb = createDb({} as D1Database);
    const reads: Read[] = [
      {
        name: "list (first page of 100)",
        // Without a limit a list answers every row (the interface's rule): ask for the page it names.
        path: "?limit=100",
        filters: {},
        sql: (db, _n) => [listIncidentsQuery(db, TENANT, undefined, {}, 100)!],
      },
      {
        name: "list (HIGH, text 'orders')",
        path: "?severities=HIGH&text_to_search=orders&limit=100",
        filters: { severities: ["HIGH"], text_to_search: "orders" },
        sql: (db) => [
          listIncidentsQuery(db, TENANT, undefined, { severities: ["HIGH"], text_to_search: "orders" }, 100)!,
        ],
      },
      {
        name: "summary (last 30 days)",
        path: "/summary",
        filters: {},
        sql: (db, n) => summaryNow(db, {}, n),
        before: (db, n) => [...summaryQueries(db, TENANT, undefined, {}, resolveRange({}, n))!],
      },
      {
        name: "summary (365 days)",
        path: `/summary?from_time=${year.from_time}&to_time=${year.to_time}`,
        filters: year,
        sql: (db, n) => summaryNow(db, year, n),
        before: (db, n) => [...summaryQueries(db, TENANT, undefined, year, resolveRange(year, n))!],
      },
      {
        name: "summary (365 d, one project)",
        path: `/summary?from_time=${year.from_time}&to_time=${year.to_time}&project_ids=${assets[0]!.projectId}`,
        filters: { ...year, project_ids: [assets[0]!.projectId] },
        sql: (db, n) => summaryNow(db, { ...year, project_ids: [assets[0]!.projectId] }, n),
        before: (db, n) => {
          const f = { ...year, project_ids: [assets[0]!.projectId] };
          return [...summaryQueries(db, TENANT, undefined, f, resolveRange(f, n))!];
        },
      },
      {
        name: "distribution (last 30 days)",
        path: "/distribution",
        filters: {},
        sql: (db, n) => dayCountsQueries(db, TENANT, undefined, {}, resolveRange({}, n)),
        before: (db, n) => [distributionQuery(db, TENANT, undefined, {}, resolveRange({}, n))!],
      },
      {
        name: "distribution (365 days)",
        path: `/distribution?from_time=${year.from_time}&to_time=${year.to_time}`,
        filters: year,
        sql: (db, n) => dayCountsQueries(db, TENANT, undefined, year, resolveRange(year, n)),
        before: (db, n) => [distributionQuery(db, TENANT, undefined, year, resolveRange(year, n))!],
      },
    ];

    log(`direct SQL on the SQLite file, ${RUNS} runs each`);
    const timeSql = (queries: Queries) => {
      const statements = queries
        .map((q) => q.toSQL())
        .map(({ sql, params }) => ({ stmt: sqlite.prepare(sql), params }));
      return timeIt(RUNS, () => {
        for (const { stmt, params } of statements) stmt.all(...(params as never[]));
      });
    };
    const direct = new Map<string, { p50: number; p95: number }>();
    const directBefore = new Map<string, { p50: number; p95: number }>();
    for (const read of reads) {
      direct.set(read.name, await timeSql(read.sql(drizzleDb, new Date())));
      if (read.before) directBefore.set(read.name, await timeSql(read.before(drizzleDb, new Date())));
    }
    const rollupRows = sqlite
      .prepare(
        `select (select count(*) from incident_rollups where tenant_id = ?1) as keyed,
                (select count(*) from incident_day_rollups where tenant_id = ?1) as daily,
                (select count(*) from incident_tag_rollups where tenant_id = ?1) as tagged`,
      )
      .get(TENANT) as { keyed: number; daily: number; tagged: number };
    sqlite.close();

    log("starting the Worker (wrangler dev)");
    const inspectorPort = args.profile ? await freePort() : undefined;
    worker = await startWorker(persist, {
      verbose: true,
      ...(inspectorPort ? { args: ["--inspector-port", String(inspectorPort)] } : {}),
    });
    const base = worker.base;
    log(`Worker on ${base}`);
    const headers = { "X-SVC-Key": worker.adminKey };
    // The milliseconds each request waited on D1, from its Server-Timing header (src/db/metered.ts).
    let d1Waits: number[] = [];
    const get = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      const body = await res.json();
      const d1 = /d1;dur=(\d+)/.exec(res.headers.get("server-timing") ?? "");
      if (d1) d1Waits.push(Number(d1[1]));
      return body;
    };

    log(`reads through the Worker, ${RUNS} runs each`);
    const through = new Map<string, { p50: number; p95: number; d1: number }>();
    for (const read of reads) {
      d1Waits = [];
      const times = await timeIt(RUNS, () => get(`/api/backend/${TENANT}/incidents${read.path}`));
      // The runs' own waits (timeIt warms up with 3 calls first).
      const waits = d1Waits.slice(3).sort((a, b) => a - b);
      through.set(read.name, { ...times, d1: percentile(waits, 50) });
    }

    log(`live aggregation: ${args["live-rounds"]} rounds of uploads to ${args["live-assets"]} assets`);
    const inspector = inspectorPort ? await Inspector.connect(inspectorPort) : undefined;
    const live = await liveAggregation(base, worker.adminKey, worker.processGroup, inspector);
    inspector?.close();
    log("the live path's peer: the same uploads through the plumbing alone (bench/incidents/plumbing)");
    const peer = await plumbingPeer(persist, live.assets, live.columns, live.rows, live.rounds.length);

    log(
      args.rebuild
        ? "aggregation through the AssetMonitor (POST /incidents/historical)"
        : "rebuild skipped (--rebuild)",
    );
    const aggregate = async (tenant: string) => {
      const start = performance.now();
      const res = await fetch(`${base}/api/backend/${tenant}/incidents/historical`, { method: "POST", headers });
      const { status_url } = (await res.json()) as { status_url: string };
      for (;;) {
        const job = (await get(status_url)) as {
          status: string;
          alerts: number;
          incidents: number;
          assets_total: number;
          started_at: string;
          finished_at: string | null;
          errors: unknown[];
        };
        if (job.status !== "RUNNING") {
          const seconds = (Date.parse(job.finished_at!) - Date.parse(job.started_at)) / 1000;
          return { ...job, seconds, wall: (performance.now() - start) / 1000 };
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const rebuild = args.rebuild
      ? { one: await aggregate("bench-one"), many: await aggregate("bench-many"), again: await aggregate("bench-one") }
      : undefined;

    const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1)).padStart(8);
    const targets: Record<string, string> = {
      "summary (365 days)": "<= 30",
      "distribution (365 days)": "<= 30",
    };
    const liveSeconds = live.rounds.reduce((t, r) => t + r.seconds, 0);
    const liveAlerts = live.rounds.reduce((t, r) => t + r.alerts, 0);
    const liveCpu = live.rounds.reduce((t, r) => t + r.cpu, 0);
    const lines = [
      "",
      `bench/incidents — ${incidentCount.toLocaleString("en")} incidents, ${alertCount.toLocaleString("en")} alerts in one tenant; ` +
        `${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), node ${process.versions.node}, ${RUNS} runs per read`,
      `rollup rows of the tenant: ${rollupRows.keyed.toLocaleString("en")} per key and day, ${rollupRows.daily.toLocaleString("en")} per day and level, ` +
        `${rollupRows.tagged.toLocaleString("en")} per day and tag`,
      "",
      `${"read".padEnd(30)} ${"Worker p50".padStart(10)} ${"p95".padStart(8)} ${"D1 wait p50".padStart(11)} ${"target".padStart(7)}   ${"SQL p50".padStart(8)} ${"p95".padStart(8)}   ${"before: SQL p50".padStart(15)} ${"p95".padStart(8)}  (ms)`,
      ...reads.map((r) => {
        const w = through.get(r.name)!;
        const d = direct.get(r.name)!;
        const b = directBefore.get(r.name);
        const before = b ? `${fmt(b.p50).padStart(15)} ${fmt(b.p95)}` : `${"(same)".padStart(15)}`;
        return `${r.name.padEnd(30)} ${fmt(w.p50).padStart(10)} ${fmt(w.p95)} ${fmt(w.d1).padStart(11)} ${(targets[r.name] ?? "").padStart(7)}   ${fmt(d.p50)} ${fmt(d.p95)}   ${before}`;
      }),
      "  (D1 wait: what the Worker waited on D1 in the request, Server-Timing; Worker p50 less it is the request's own cost)",
      "  (before: the same read from the incidents table alone, as the endpoints ran it before the daily rollups)",
      "",
      `live aggregation (uploads → scan-jobs queue → profiler → AssetMonitor → D1), ${live.assets} assets, ` +
        `${live.columns} columns × ${live.rows} rows per batch, target >= 1,000 alerts/s:`,
      ...live.rounds.map(
        (r, i) =>
          `  round ${i + 1}: ${r.scans} scans, ${r.alerts} alerts, ${r.incidents} incidents opened in ${r.seconds.toFixed(1)} s = ` +
          `${Math.round(r.alerts / r.seconds)} alerts/s; ${r.cpu.toFixed(1)} CPU s = ${Math.round(r.alerts / r.cpu)} alerts per CPU s; per scan: queue wait p50 ${r.waitP50.toFixed(2)} s, ` +
          `run p50 ${r.runP50.toFixed(2)} s (${r.failed} failed, ${r.stalled} stalled)`,
      ),
      `  all rounds: ${liveAlerts} alerts in ${liveSeconds.toFixed(1)} s = ${Math.round(liveAlerts / liveSeconds)} alerts/s; ` +
        `${liveCpu.toFixed(1)} CPU s of the Worker's runtime = ${Math.round(liveAlerts / liveCpu)} alerts per CPU second`,
      "  peer, the plumbing alone (the same uploads → R2 → queue → a consumer that reads each back → D1; bench/incidents/plumbing):",
      ...peer.map(
        (r, i) =>
          `  peer round ${i + 1}: ${r.scans} scans in ${r.seconds.toFixed(1)} s = ${(r.scans / r.seconds).toFixed(1)} scans/s; ` +
          `${r.cpu.toFixed(1)} CPU s${r.failed ? ` (${r.failed} not finished)` : ""}`,
      ),
      (() => {
        const liveScans = live.rounds.reduce((t, r) => t + r.scans, 0);
        const peerScans = peer.reduce((t, r) => t + r.scans, 0);
        const peerSeconds = peer.reduce((t, r) => t + r.seconds, 0);
        const peerCpu = peer.reduce((t, r) => t + r.cpu, 0);
        return (
          `  ours ${(liveScans / liveSeconds).toFixed(1)} scans/s against the peer's ${(peerScans / peerSeconds).toFixed(1)}: ` +
          `${(liveScans / liveSeconds / (peerScans / peerSeconds)).toFixed(2)}× its rate; CPU per scan ${((1000 * liveCpu) / liveScans).toFixed(1)} ms ` +
          `against ${((1000 * peerCpu) / peerScans).toFixed(1)} ms (${(liveCpu / liveScans / (peerCpu / peerScans)).toFixed(1)}×)`
        );
      })(),
      ...(live.profiles.length
        ? profileLines(
            live.profiles,
            live.rounds.reduce((t, r) => t + r.scans, 0),
          )
        : []),
      ...(rebuild
        ? [
            "",
            "aggregation (rebuild from alerts, job by job, through each asset's AssetMonitor):",
            `  one asset:   ${rebuild.one.alerts} alerts -> ${rebuild.one.incidents} incidents in ${rebuild.one.seconds.toFixed(1)} s = ` +
              `${Math.round(rebuild.one.alerts / rebuild.one.seconds)} alerts/s (${rebuild.one.status})`,
            `  100 assets:  ${rebuild.many.alerts} alerts -> ${rebuild.many.incidents} incidents in ${rebuild.many.seconds.toFixed(1)} s = ` +
              `${Math.round(rebuild.many.alerts / rebuild.many.seconds)} alerts/s (${rebuild.many.status}, ${rebuild.many.assets_total} assets, 4 at a time)`,
            `  replay of the one-asset rebuild: ${rebuild.again.alerts} alerts, ${rebuild.again.incidents} incidents, ${rebuild.again.seconds.toFixed(1)} s`,
          ]
        : []),
      `seeding: ${seedSeconds.toFixed(1)} s`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    worker?.stop();
    dropStateDir(persist, args.keep);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
