/**
 * bench/capacity: how many tenants of a workload one D1 database holds, by its size (10 GB) and by
 * its single thread, from a sample of real scans through the local service (sample.ts), and what
 * the Durable Objects hold beside it.
 *
 *   npm run bench:capacity                        # the reference workload, this tree
 *   npm run bench:capacity -- --base HEAD~3       # that commit's code measured beside this tree's
 *   npm run bench:capacity -- --assets 50 --scans-per-day 1 --alert-rate 0.05 --ttl 30 --tenants 100
 *   npm run bench:capacity -- --shards 3           # the tenants 3 D1 shards hold (default 2)
 *
 * Everything per scan is measured on the code that runs (bytes of the SQLite files, statements
 * counted at the D1 binding, their cost replayed); the workload's flags only multiply.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { applyMigrations, dropStateDir, log, ROOT, tempStateDir } from "../support/wrangler-dev";
import { type Capacity, capacityOf, D1_MAX_BYTES, type Figures, figuresOf, type Workload } from "./model";
import { measureSample, type SampleOptions } from "./sample";

const { values: args } = parseArgs({
  options: {
    tenants: { type: "string", default: "10" },
    assets: { type: "string", default: "200" },
    "scans-per-day": { type: "string", default: "24" },
    "alert-rate": { type: "string", default: "0.02" },
    ttl: { type: "string", default: "90" },
    "sample-assets": { type: "string", default: "10" },
    warmup: { type: "string", default: "5" },
    clean: { type: "string", default: "8" },
    follow: { type: "string", default: "4" },
    measures: { type: "string", default: "8" },
    rows: { type: "string", default: "300" },
    broken: { type: "string", default: "2" },
    replays: { type: "string", default: "3" },
    "probe-calls": { type: "string", default: "500" },
    base: { type: "string" },
    /** D1 shards the tenants are spread over (docs/decisions/0013-tenant-shards.md). */
    shards: { type: "string", default: "2" },
    keep: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
  },
});

function positive(name: string, value: string | undefined, { integer = true, max = Number.POSITIVE_INFINITY } = {}) {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > max || (integer && !Number.isInteger(n))) {
    throw new Error(
      `--${name} must be a positive ${integer ? "integer" : "number"}${max < Infinity ? ` ≤ ${max}` : ""}`,
    );
  }
  return n;
}

/** The goal of issue 38: tenants of the reference workload one deployment holds. */
const TARGET_TENANTS = 1000;
const shards = positive("shards", args.shards);

const workload: Workload = {
  tenants: positive("tenants", args.tenants),
  assets: positive("assets", args.assets),
  scansPerDay: positive("scans-per-day", args["scans-per-day"], { integer: false }),
  alertRate: positive("alert-rate", args["alert-rate"], { integer: false, max: 1 }),
  ttlDays: positive("ttl", args.ttl),
};
const sample: SampleOptions = {
  assets: positive("sample-assets", args["sample-assets"]),
  warmup: positive("warmup", args.warmup),
  clean: positive("clean", args.clean),
  // Three clean scans close an incident (DESIGN §3); one more lets the last writes land.
  follow: positive("follow", args.follow),
  measures: positive("measures", args.measures),
  rows: positive("rows", args.rows),
  broken: Math.min(positive("broken", args.broken), positive("measures", args.measures)),
  ttlDays: workload.ttlDays,
  replays: positive("replays", args.replays),
  probeCalls: positive("probe-calls", args["probe-calls"]),
  verbose: args.verbose,
};

function git(cwd: string, ...command: string[]): string {
  const r = spawnSync("git", command, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${command.join(" ")}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

interface Side {
  label: string;
  figures: Figures;
  capacity: Capacity;
}

/** Measures the tree at `root` in a state directory of its own. */
async function measure(label: string, root: string): Promise<Side> {
  const persist = tempStateDir("dq-bench-capacity-");
  try {
    log(`${label}: migrations, then the sample (${persist})`);
    applyMigrations(persist, root);
    const result = await measureSample(root, persist, sample);
    const figures = figuresOf(result, sample.assets);
    return { label, figures, capacity: capacityOf(figures, workload) };
  } finally {
    dropStateDir(persist, args.keep);
  }
}

/** A checkout of `commit` beside this tree, sharing its node_modules and built public/ (as bench:profile:ab). */
function checkout(commit: string): { root: string; remove: () => void } {
  const root = join(mkdtempSync(join(tmpdir(), "bench-capacity-base-")), "base");
  git(ROOT, "worktree", "add", "--detach", "--quiet", root, commit);
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  if (existsSync(join(ROOT, "public")) && !existsSync(join(root, "public"))) {
    symlinkSync(join(ROOT, "public"), join(root, "public"));
  }
  return {
    root,
    remove: () => {
      git(ROOT, "worktree", "remove", "--force", root);
      rmSync(dirname(root), { recursive: true, force: true });
    },
  };
}

const KB = 1000;
function bytes(n: number): string {
  if (!Number.isFinite(n)) return "—";
  const a = Math.abs(n);
  if (a >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (a >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (a >= 10 * KB) return `${(n / KB).toFixed(1)} KB`;
  return `${Math.round(n)} B`;
}
const num = (n: number, digits = 1) =>
  Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 }) : "—";
const count = (n: number) => (Number.isFinite(n) ? Math.floor(n).toLocaleString("en-US") : "—");

function report(sides: Side[]) {
  const w = workload;
  const c0 = sides[0]!.capacity;
  const width = 24;
  const row = (label: string, cell: (s: Side) => string) =>
    `  ${label.padEnd(58)}${sides.map((s) => cell(s).padStart(width)).join("")}`;
  const lines = [
    "",
    `bench/capacity — ${cpus().length} CPUs, node ${process.versions.node}`,
    `workload: ${w.tenants} tenants × ${w.assets} assets, ${num(w.scansPerDay)} scans a day each ` +
      `(${count(c0.scansPerDayPerTenant)} a day per tenant), ${num(w.alertRate * 100)} % of scans alerting, data_ttl ${w.ttlDays} days`,
    `sample per tree: ${sample.assets} assets, ${sample.warmup} warm-up + ${sample.clean} clean + 1 broken and ${sample.follow} clean rounds; ` +
      `uploads of ${sample.rows} rows × ${sample.measures + 2} columns (${sample.broken} spoiled in a broken one), replayed ${sample.replays}×`,
    "",
    `  ${"".padEnd(58)}${sides.map((s) => s.label.padStart(width)).join("")}`,
    "measured",
    row(
      "D1 bytes per scan (pages; in use in them)",
      (s) => `${bytes(s.figures.d1PerScan)}; ${bytes(s.figures.d1InUsePerScan)}`,
    ),
    row(
      "D1 bytes per alerting scan, extra: its incident's life (pages; in use)",
      (s) => `${bytes(s.figures.d1PerAlertingScan)}; ${bytes(s.figures.d1InUsePerAlertingScan)}`,
    ),
    row(
      "  alerts per alerting scan; D1 bytes per alert",
      (s) => `${num(s.figures.alertsPerAlertingScan)}; ${bytes(s.figures.d1PerAlert)}`,
    ),
    row("  alerts per clean scan (should be ~0)", (s) => num(s.figures.alertsPerCleanScan, 2)),
    row(
      "D1 bytes per asset per day, its first scan's (pages; in use)",
      (s) => `${bytes(s.figures.d1PerAssetDay)}; ${bytes(s.figures.d1InUsePerAssetDay)}`,
    ),
    row("D1 kept per asset after retention (catalog)", (s) => bytes(s.figures.d1KeptPerAsset)),
    row(
      "D1 statements per scan (writes)",
      (s) => `${num(s.figures.statementsPerScan)} (${num(s.figures.writesPerScan)})`,
    ),
    ...originRows(sides, row),
    row("D1 round trips per scan", (s) => num(s.figures.callsPerScan)),
    row(
      "D1 statements per alerting scan, extra (writes)",
      (s) => `${num(s.figures.statementsPerAlertingScan)} (${num(s.figures.writesPerAlertingScan)})`,
    ),
    row(
      "cost of a write statement on the local D1, CPU ms (of a read)",
      (s) => `${num(s.figures.probeWriteCpuMs, 3)} (${num(s.figures.probeReadCpuMs, 3)})`,
    ),
    row(
      "  the same calls in wall ms (of a read)",
      (s) => `${num(s.figures.probeWriteMs, 3)} (${num(s.figures.probeReadMs, 3)})`,
    ),
    row(
      "  the scan's SQL alone, replayed: ms per scan (per statement)",
      (s) => `${num(s.figures.msPerScan, 3)} (${num(s.figures.msPerScan / s.figures.statementsPerScan, 4)})`,
    ),
    row("  the local D1's own meta.duration, ms per scan", (s) => num(s.figures.localDurationPerScan, 3)),
    row("Durable Object bytes per scan", (s) => bytes(s.figures.doPerScan)),
    row("Durable Object bytes per alerting scan, extra", (s) => bytes(s.figures.doPerAlertingScan)),
    row("Durable Object bytes kept per asset after retention", (s) => bytes(s.figures.doKeptPerAsset)),
    row(
      "retention: runs to finish; D1 statements per asset",
      (s) => `${s.figures.retentionRuns}; ${num(s.figures.retentionStatementsPerAsset)}`,
    ),
    "the workload",
    row(`D1 per tenant in steady state (${w.ttlDays} + 1 days: ${count(c0.scansKept)} scans)`, (s) =>
      bytes(s.capacity.d1PerTenant),
    ),
    row(`tenants per D1 by size (${bytes(D1_MAX_BYTES)})`, (s) => count(s.capacity.tenantsBySize)),
    row("  D1 per tenant per year that retention does not remove", (s) => bytes(s.capacity.notRemovedPerYear)),
    row(
      "D1 statements per second per tenant (writes)",
      (s) => `${num(s.capacity.statementsPerSecond, 2)} (${num(s.capacity.writesPerSecond, 2)})`,
    ),
    row("tenants per D1 by write rate, at 1 ms a statement", (s) => count(s.capacity.tenantsAt1ms)),
    row("  D1 statements per second, one at a time at the probe's CPU cost of a write", (s) =>
      count(s.capacity.d1StatementsPerSecond),
    ),
    row("  tenants per D1 by write rate, at that cost (the Worker's side included)", (s) =>
      count(s.capacity.tenantsByWriteRate),
    ),
    row("tenants per D1 (the lesser of size and write rate at 1 ms)", (s) => count(tenantsPerD1(s.capacity))),
    row(`D1 databases for ${w.tenants} tenants`, (s) =>
      count(Math.ceil(w.tenants / Math.floor(tenantsPerD1(s.capacity)))),
    ),
    row(`tenants on ${shards} D1 shards (decision 0013: ${shards} × the tenants per D1)`, (s) =>
      count(shards * Math.floor(tenantsPerD1(s.capacity))),
    ),
    row(`D1 shards for ${count(TARGET_TENANTS)} tenants (the goal)`, (s) =>
      count(Math.ceil(TARGET_TENANTS / Math.floor(tenantsPerD1(s.capacity)))),
    ),
    row("Durable Object per asset in steady state", (s) => bytes(s.capacity.doPerAsset)),
    row("Durable Objects per tenant in steady state", (s) => bytes(s.capacity.doPerTenant)),
    "",
  ];
  for (const s of sides) {
    const f = s.figures;
    lines.push(
      `${s.label}: D1 tables and indexes growing most (bytes in use per scan, extra per alerting scan, share of their growth left after retention)`,
    );
    for (const t of f.tables
      .filter((x) => Math.abs(x.perScan) >= 1 || Math.abs(x.perAlertingScan) >= 50)
      .slice(0, 16)) {
      lines.push(
        `    ${t.table.padEnd(44)} ${bytes(t.perScan).padStart(9)} ${bytes(t.perAlertingScan).padStart(9)} ${(100 * t.kept).toFixed(0).padStart(4)} %`,
      );
    }
    if (f.perAssetDayTables.length > 0) {
      lines.push(
        `  per asset per day (the day's first scan, in use): ${f.perAssetDayTables.map((t) => `${t.table} ${bytes(t.bytes)}`).join("; ")}`,
      );
    }
    if (f.notRemoved.length > 0) {
      lines.push(
        `  not removed by retention (grows without bound): ${f.notRemoved.map((t) => `${t.table} ${bytes(t.perScan)}/scan, ${bytes(t.perAlertingScan)}/alerting scan`).join("; ")}`,
      );
    }
    const warnings = [
      f.failedJobs > 0 ? `${f.failedJobs} scan jobs did not succeed` : "",
      f.benchWrites > 0
        ? `the bench's own requests wrote ${f.benchWrites} statements to D1 during the phases: their bytes count as the scans'`
        : "",
      f.pollShare > 0
        ? `the bench's job polls made Durable Objects or queues issue D1 statements: up to ${num(f.pollShare, 2)} of the statements per scan are theirs`
        : "",
      f.openIncidents > 0
        ? `incidents still open after the alert phase: ${f.openIncidents} (retention keeps an open incident and its asset's alerts)`
        : "",
      f.replayFailures > 0 ? `${f.replayFailures} replayed calls failed (${f.replayError})` : "",
    ].filter(Boolean);
    for (const warning of warnings) lines.push(`  note: ${warning}`);
  }
  lines.push(
    "",
    "Write rate: Cloudflare documents a D1 database as single-threaded, running one query at a time, its",
    "throughput following query duration (1 ms a query: ~1,000 queries/s), and 10 GB as its largest size",
    "(developers.cloudflare.com/d1/platform/limits/). The cost of a statement here: a one-row write called",
    "alone from the Worker to the local D1, one after another, in CPU time of the local runtime (the Worker's",
    "side included; wall time, beside it, adds the local disk's syncs and this machine's other load). Every",
    "statement of a scan, reads and batched ones too, is priced at it. The day's scans are taken as spread evenly.",
  );
  process.stdout.write(`${lines.join("\n")}\n`);
}

/**
 * What one D1 holds: the lesser of its size and its write rate at 1 ms a statement, the D1 limits
 * page's figure for a database that runs one query at a time. The probe's CPU cost is not that
 * thread's: it counts the Worker's side of each call, which runs in the Workers, not the database
 * (the local D1's own meta.duration is 0.04–0.08 ms a statement); it is printed beside as the dear bound.
 */
const tenantsPerD1 = (c: Capacity) => Math.min(c.tenantsBySize, c.tenantsAt1ms);

function originRows(sides: Side[], row: (label: string, cell: (s: Side) => string) => string): string[] {
  const origins = [...new Set(sides.flatMap((s) => s.figures.byOrigin.map((o) => o.origin)))].sort();
  return origins.map((origin) =>
    row(`  from ${origin}`, (s) => {
      const o = s.figures.byOrigin.find((x) => x.origin === origin);
      return o ? `${num(o.perScan)} (${num(o.writesPerScan)})` : "0";
    }),
  );
}

async function main() {
  const head = git(ROOT, "rev-parse", "--short", "HEAD");
  const dirty = git(ROOT, "status", "--porcelain", "--untracked-files=no") !== "";
  const sides: Side[] = [];
  if (args.base) {
    const commit = git(ROOT, "rev-parse", "--short", args.base);
    const base = checkout(commit);
    try {
      sides.push(await measure(`base ${commit}`, base.root));
    } finally {
      base.remove();
    }
  }
  sides.push(await measure(`this tree ${head}${dirty ? "+" : ""}`, ROOT));
  report(sides);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
