/**
 * bench/incidents: the incident reads at scale, and the aggregation rate of the AssetMonitor.
 *
 *   npm run bench:incidents -- [--incidents 100000] [--alerts 1000000] [--runs 30] [--keep]
 *
 * 1. Applies the migrations to a local D1 in a temporary --persist-to directory (wrangler).
 * 2. Seeds one tenant with the incidents and alerts by multi-row INSERTs straight into that
 *    SQLite file (node:sqlite), plus two small tenants whose recent alerts are to be aggregated.
 * 3. Times the SQL of list, summary and distribution directly on the file (node:sqlite), then
 *    starts the Worker (wrangler dev on that state) and times the same reads through it.
 * 4. Aggregation: POST /incidents/historical makes the Worker rebuild each asset's incidents
 *    from its alerts through its AssetMonitor; alerts per second from the job's own timings,
 *    for one asset and across 100 assets.
 *
 * Every figure is measured in this run.
 */
import { readdirSync, statSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { createDb } from "../../src/db";
import { type IncidentFilters, resolveRange } from "../../src/incidents/filters";
import { distributionQuery, listIncidentsQuery, summaryQueries } from "../../src/incidents/incidents";
import {
  applyMigrations,
  dropStateDir,
  log,
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
    keep: { type: "boolean", default: false },
  },
});
const N_INCIDENTS = Number(args.incidents);
const N_ALERTS = Number(args.alerts);
const RUNS = Number(args.runs);

/** Deterministic PRNG (mulberry32), so every run seeds the same data. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
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
interface Read {
  name: string;
  path: string;
  filters: IncidentFilters;
  sql: (db: ReturnType<typeof createDb>, now: Date) => Array<{ toSQL(): { sql: string; params: unknown[] } }>;
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
        path: "",
        filters: {},
        sql: (db, _n) => [listIncidentsQuery(db, TENANT, undefined, {}, 100)!],
      },
      {
        name: "list (HIGH, text 'orders')",
        path: "?severities=HIGH&text_to_search=orders",
        filters: { severities: ["HIGH"], text_to_search: "orders" },
        sql: (db) => [
          listIncidentsQuery(db, TENANT, undefined, { severities: ["HIGH"], text_to_search: "orders" }, 100)!,
        ],
      },
      {
        name: "summary (last 30 days)",
        path: "/summary",
        filters: {},
        sql: (db, n) => [...summaryQueries(db, TENANT, undefined, {}, resolveRange({}, n))!],
      },
      {
        name: "summary (365 days)",
        path: `/summary?from_time=${year.from_time}&to_time=${year.to_time}`,
        filters: year,
        sql: (db, n) => [...summaryQueries(db, TENANT, undefined, year, resolveRange(year, n))!],
      },
      {
        name: "distribution (last 30 days)",
        path: "/distribution",
        filters: {},
        sql: (db, n) => [distributionQuery(db, TENANT, undefined, {}, resolveRange({}, n))!],
      },
      {
        name: "distribution (365 days)",
        path: `/distribution?from_time=${year.from_time}&to_time=${year.to_time}`,
        filters: year,
        sql: (db, n) => [distributionQuery(db, TENANT, undefined, year, resolveRange(year, n))!],
      },
    ];

    log(`direct SQL on the SQLite file, ${RUNS} runs each`);
    const direct = new Map<string, { p50: number; p95: number }>();
    for (const read of reads) {
      const statements = read
        .sql(drizzleDb, new Date())
        .map((q) => q.toSQL())
        .map(({ sql, params }) => ({ stmt: sqlite.prepare(sql), params }));
      direct.set(
        read.name,
        await timeIt(RUNS, () => {
          for (const { stmt, params } of statements) stmt.all(...(params as never[]));
        }),
      );
    }
    sqlite.close();

    log("starting the Worker (wrangler dev)");
    worker = await startWorker(persist, { verbose: true });
    const base = worker.base;
    log(`Worker on ${base}`);
    const headers = { "X-SVC-Key": worker.adminKey };
    const get = async (path: string) => {
      const res = await fetch(`${base}${path}`, { headers });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };

    log(`reads through the Worker, ${RUNS} runs each`);
    const through = new Map<string, { p50: number; p95: number }>();
    for (const read of reads) {
      through.set(read.name, await timeIt(RUNS, () => get(`/api/backend/${TENANT}/incidents${read.path}`)));
    }

    log("aggregation through the AssetMonitor (POST /incidents/historical)");
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
    const oneRun = await aggregate("bench-one");
    const manyRun = await aggregate("bench-many");
    const oneAgain = await aggregate("bench-one");

    const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1)).padStart(8);
    const lines = [
      "",
      `bench/incidents — ${incidentCount.toLocaleString("en")} incidents, ${alertCount.toLocaleString("en")} alerts in one tenant; ` +
        `${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), node ${process.versions.node}, ${RUNS} runs per read`,
      "",
      `${"read".padEnd(30)} ${"Worker p50".padStart(10)} ${"p95".padStart(8)}   ${"SQL p50".padStart(8)} ${"p95".padStart(8)}  (ms)`,
      ...reads.map((r) => {
        const w = through.get(r.name)!;
        const d = direct.get(r.name)!;
        return `${r.name.padEnd(30)} ${fmt(w.p50).padStart(10)} ${fmt(w.p95)}   ${fmt(d.p50)} ${fmt(d.p95)}`;
      }),
      "",
      "aggregation (rebuild from alerts, job by job, through each asset's AssetMonitor):",
      `  one asset:   ${oneRun.alerts} alerts -> ${oneRun.incidents} incidents in ${oneRun.seconds.toFixed(1)} s = ` +
        `${Math.round(oneRun.alerts / oneRun.seconds)} alerts/s (${oneRun.status})`,
      `  100 assets:  ${manyRun.alerts} alerts -> ${manyRun.incidents} incidents in ${manyRun.seconds.toFixed(1)} s = ` +
        `${Math.round(manyRun.alerts / manyRun.seconds)} alerts/s (${manyRun.status}, ${manyRun.assets_total} assets, 4 at a time)`,
      `  replay of the one-asset rebuild: ${oneAgain.alerts} alerts, ${oneAgain.incidents} incidents, ${oneAgain.seconds.toFixed(1)} s`,
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
