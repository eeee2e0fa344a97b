/**
 * bench/capacity: one tree's code measured on a sample of real scans. Its Worker runs in wrangler
 * dev with every D1 binding metered (entry.ts, meter.ts); a tenant uploads CSV batches through the
 * public API with its own API key, as a customer's pipeline does, and the state's SQLite files are
 * measured between phases (storage.ts):
 *
 *   empty → tenant (tenant, API key, project, connection) → assets (created, never scanned)
 *   → first (the first round: each asset's first scan, and its first of the day)
 *   → warm (`warmup` clean scans per asset in all: first scans, detectors trained)
 *   → clean (`clean` rounds, every asset one clean scan per round)
 *   → alert (one round of broken batches, then `follow` clean rounds, in which the incidents close)
 *   → retained (the cron's retention run, at a time when everything scanned is older than data_ttl)
 *
 * The clean phase gives the cost of a scan; the alert phase, less as many clean scans, the extra cost
 * of an alerting scan, its incident's whole life included. The statements of both phases are kept
 * and replayed on copies of the D1 database taken before them (replay.ts). Last, the local D1's cost
 * of a call is probed from inside the Worker (meter.ts), after the last snapshot.
 */
import { join } from "node:path";
import { DqService, pool } from "../detection/service";
import { groupCpuMs } from "../support/proc-cpu";
import { log, startWorker, type WorkerProcess } from "../support/wrangler-dev";
import { batchCsv } from "./batches";
import { wrapWithMeter } from "./entry";
import { type CapturedStatement, type D1Counts, type MeterReport, zeroCounts } from "./meter";
import { type ReplayResult, replay } from "./replay";
import { type Snapshot, snapshot, stateSignature } from "./storage";

export interface SampleOptions {
  assets: number;
  warmup: number;
  clean: number;
  follow: number;
  measures: number;
  rows: number;
  broken: number;
  ttlDays: number;
  replays: number;
  /** One-statement calls the probe of the local D1 times (each a write, then as many reads). */
  probeCalls: number;
  verbose: boolean;
}

/** What one phase's scans did. */
export interface PhaseResult {
  scans: number;
  /** Scans whose batch was broken. */
  alerting: number;
  alerts: number;
  /** Jobs that did not succeed. */
  failed: number;
  /** Scan-path D1 counts by origin (upload request, queue consumer, Durable Object …). */
  counts: Record<string, D1Counts>;
  /** D1 calls the bench's own reads (job polls) made meanwhile: not part of the scan path. */
  benchReads: number;
  /** Write statements among them: 0, or the phase's bytes hold some of the bench's own. */
  benchWrites: number;
  /** The bench's polls of the phase's jobs. */
  polls: number;
  jobs: Array<{ asset: number; job: string }>;
  replay: ReplayResult;
}

export interface SampleResult {
  snapshots: Record<"empty" | "tenant" | "assets" | "first" | "warm" | "clean" | "alert" | "retained", Snapshot>;
  clean: PhaseResult;
  alert: PhaseResult;
  /**
   * D1 statements the Durable Objects and queues issued per poll of a finished job (the control):
   * 0 when the bench's reads do not reach into what is counted as the scan path.
   */
  pollControl: number;
  /** Incidents still open after the alert phase (retention keeps those and their alerts). */
  openIncidents: number;
  incidents: number;
  retention: { runs: number; counts: Record<string, D1Counts>; changes: number };
  /** The D1 size as D1 itself last reported it (meta.size_after), by binding. */
  sizeAfter: Record<string, number>;
  /** What one call of one statement costs the local D1 (after the last snapshot). */
  probe: ProbeResult;
}

const TENANT = "capacity";
const DAY_MS = 86_400_000;

/**
 * Whether an origin (meter.ts) is part of a scan: the upload request, every queue consumer and
 * every Durable Object. The bench's reads (GET) and the cron are not.
 */
export const isScanPath = (origin: string) =>
  origin.startsWith("queue ") || origin.startsWith("do ") || /^fetch POST .*\/batch_data$/.test(origin);

const originOf = (key: string) => key.slice(key.indexOf(" ") + 1);

/** Sums the counts of the origins `keep` accepts. */
export function total(counts: Record<string, D1Counts>, keep: (origin: string) => boolean = () => true): D1Counts {
  const t = zeroCounts();
  for (const [key, c] of Object.entries(counts)) {
    if (!keep(originOf(key))) continue;
    for (const k of Object.keys(t) as (keyof D1Counts)[]) t[k] += c[k];
  }
  return t;
}

class Meter {
  constructor(private readonly base: string) {}

  async reset(capture: boolean) {
    const res = await fetch(`${this.base}/__bench/d1${capture ? "?capture=1" : ""}`, { method: "POST" });
    if (res.status !== 204) throw new Error(`meter reset: ${res.status}`);
  }

  async read(statements = false): Promise<MeterReport> {
    const res = await fetch(`${this.base}/__bench/d1${statements ? "?statements=1" : ""}`);
    if (!res.ok) throw new Error(`meter: ${res.status}`);
    return (await res.json()) as MeterReport;
  }
}

/**
 * Waits until the Worker is idle: no D1 call and no change to the state's files for two checks in
 * a row, a second apart (a scan's last writes may follow its job's end).
 */
async function settle(meter: Meter, persist: string) {
  let last = "";
  let quiet = 0;
  for (let i = 0; i < 120 && quiet < 2; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const report = await meter.read();
    const now = `${JSON.stringify(total(report.counts))}\n${stateSignature(persist)}`;
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
}

interface Asset {
  id: number;
  /** Uploads so far (each batch's seed). */
  scans: number;
}

/** Measures the tree at `root` (its bundle, wrangler.toml and migrations) in the state at `persist`. */
export async function measureSample(root: string, persist: string, opts: SampleOptions): Promise<SampleResult> {
  let worker: WorkerProcess | undefined;
  try {
    worker = await startWorker(persist, {
      root,
      verbose: opts.verbose,
      wrap: (dir) => wrapWithMeter(dir, join(root, "wrangler.toml")),
    });
    const base = worker.base;
    const meter = new Meter(base);
    const snap = async (name: keyof SampleResult["snapshots"]) => {
      await settle(meter, persist);
      return snapshot(persist, name);
    };
    const snapshots = {} as SampleResult["snapshots"];
    snapshots.empty = await snap("empty");

    const admin = await DqService.bootstrap(base, worker.adminKey, TENANT);
    const keyRes = await fetch(`${base}/auth/${TENANT}/apiKeys`, {
      method: "POST",
      headers: { "X-SVC-Key": worker.adminKey, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "pipeline" }),
    });
    if (keyRes.status !== 201) throw new Error(`tenant API key: ${keyRes.status} ${await keyRes.text()}`);
    const { key } = (await keyRes.json()) as { key: string };
    // The customer: uploads with the tenant's key. The bench's own reads go as the administrator.
    const tenant = new DqService(base, key, TENANT);
    const project = await tenant.createProject("capacity");
    const connection = await tenant.createConnection(project, "landing");
    snapshots.tenant = await snap("tenant");

    const assets: Asset[] = [];
    for (let i = 0; i < opts.assets; i++) {
      assets.push({ id: await tenant.createAsset(project, connection, `table_${i}`), scans: 0 });
    }
    snapshots.assets = await snap("assets");

    /** One round: a batch to every asset (8 uploads in flight), then every job polled to its end. */
    const round = async (broken: boolean) => {
      const jobs: Array<{ asset: Asset; job: string }> = [];
      await pool(assets, 8, async (asset) => {
        const csv = batchCsv(asset.id, asset.scans++, opts.measures, opts.rows, broken ? opts.broken : 0);
        jobs.push({ asset, job: await tenant.upload(asset.id, csv) });
      });
      const done: Array<{ asset: Asset; job: string; status: string }> = [];
      for (const { asset, job } of jobs) done.push({ asset, job, status: await waitForJob(asset.id, job) });
      return done;
    };
    /** Polls a job to its end (backing off from 100 ms to 1 s), counting the polls. */
    let polls = 0;
    const waitForJob = async (asset: number, job: string): Promise<string> => {
      const deadline = Date.now() + 120_000;
      for (let delay = 100; Date.now() < deadline; delay = Math.min(1000, delay * 1.5)) {
        polls++;
        const { status } = await admin.scanJob(asset, job);
        if (status === "SUCCEEDED" || status === "FAILED") return status;
        await new Promise((r) => setTimeout(r, delay));
      }
      return "STALLED";
    };

    log(`  ${opts.warmup} warm-up rounds over ${opts.assets} assets`);
    await round(false);
    snapshots.first = await snap("first");
    for (let i = 1; i < opts.warmup; i++) await round(false);
    snapshots.warm = await snap("warm");

    /**
     * Runs rounds (broken or not) with the statements captured, and snapshots the state at its end:
     * the meter's window and the bytes' window are the same (from the previous snapshot), and hold
     * the scans and the bench's polls only (the alerts are listed at the end: a listing is a POST,
     * which the service records as an audit event).
     */
    const phase = async (plan: boolean[], before: Snapshot, name: "clean" | "alert"): Promise<PhaseResult> => {
      await meter.reset(true);
      polls = 0;
      const jobs: Array<{ asset: Asset; job: string; status: string }> = [];
      for (const broken of plan) jobs.push(...(await round(broken)));
      snapshots[name] = await snap(name);
      const report = await meter.read(true);
      const scanPath: Record<string, D1Counts> = {};
      let benchReads = 0;
      let benchWrites = 0;
      for (const [k, c] of Object.entries(report.counts)) {
        if (isScanPath(originOf(k))) scanPath[k] = c;
        else {
          benchReads += c.calls;
          benchWrites += c.writes;
        }
      }
      const statements: CapturedStatement[] = report.captured.filter((s) => isScanPath(s.origin));
      return {
        scans: jobs.length,
        alerting: plan.filter(Boolean).length * assets.length,
        alerts: 0,
        failed: jobs.filter((j) => j.status !== "SUCCEEDED").length,
        counts: scanPath,
        benchReads,
        benchWrites,
        polls,
        jobs: jobs.map(({ asset, job }) => ({ asset: asset.id, job })),
        replay: replay(before.d1Copies, statements, opts.replays),
      };
    };

    log(`  clean phase: ${opts.clean} rounds`);
    const clean = await phase(
      Array.from({ length: opts.clean }, () => false),
      snapshots.warm,
      "clean",
    );
    log(`  alert phase: a broken batch to every asset, then ${opts.follow} clean rounds`);
    const alert = await phase([true, ...Array.from({ length: opts.follow }, () => false)], snapshots.clean, "alert");
    const incidents = await incidentStates(base, worker.adminKey);
    // The alerts each job raised, now that the phases' bytes are measured (retention removes what the
    // listings record).
    for (const p of [clean, alert]) {
      await pool(p.jobs, 8, async ({ asset, job }) => {
        const raised = await admin.alerts(asset, job);
        p.alerts += raised.length;
      });
    }

    // The control: the bench's polls alone, once per job of the last phase. Whatever D1 statements
    // the Durable Objects issue meanwhile are the polls' doing, and were counted as the scans' above.
    await meter.reset(false);
    for (const { asset, job } of alert.jobs) await admin.scanJob(asset, job);
    await settle(meter, persist);
    const pollControl =
      total((await meter.read()).counts, (o) => o.startsWith("do ") || o.startsWith("queue ")).statements /
      alert.jobs.length;

    // The daily retention run, on a day when every row of the sample is older than data_ttl; run
    // again until a run removes nothing (each run removes a bounded number of rows per table).
    log("  retention: the cron at a time past data_ttl");
    await meter.reset(false);
    const at = Math.floor((Date.now() + (opts.ttlDays + 2) * DAY_MS) / DAY_MS) * DAY_MS;
    let runs = 0;
    let changes = 0;
    for (let before = -1; runs < 20 && changes !== before; ) {
      before = changes;
      // The runtime's own trigger of the scheduled handler (wrangler dev), with the tick's time.
      const res = await fetch(`${base}/cdn-cgi/local/scheduled?cron=${encodeURIComponent("* * * * *")}&time=${at}`);
      if (!res.ok) throw new Error(`scheduled: ${res.status} ${await res.text()}`);
      runs++;
      await settle(meter, persist);
      changes = total((await meter.read()).counts, (o) => o === "scheduled").changes;
    }
    const retained = await meter.read();
    snapshots.retained = await snap("retained");
    const probe = await probeD1(base, worker.processGroup, opts.probeCalls);
    return {
      snapshots,
      clean,
      alert,
      pollControl,
      openIncidents: incidents.open,
      incidents: incidents.all,
      retention: { runs, counts: retained.counts, changes },
      sizeAfter: retained.sizeAfter,
      probe,
    };
  } finally {
    worker?.stop();
  }
}

/** What one call of one statement costs the local D1: wall and CPU milliseconds, a write and a read. */
export interface ProbeResult {
  calls: number;
  writeMs: number;
  readMs: number;
  /** CPU of the runtime's processes (workerd: the Worker, the local D1, everything) per call. */
  writeCpuMs: number;
  readCpuMs: number;
}

/** Probes the local D1 from inside the Worker (meter.ts): `calls` writes, then as many reads. */
async function probeD1(base: string, group: number | undefined, calls: number): Promise<ProbeResult> {
  const step = async (name: string, n = 1) => {
    const cpu = groupCpuMs(group);
    const res = await fetch(`${base}/__bench/d1/probe?step=${name}&n=${n}`, { method: "POST" });
    if (!res.ok) throw new Error(`probe ${name}: ${res.status} ${await res.text()}`);
    const { ms } = (await res.json()) as { ms: number };
    return { ms, cpuMs: (groupCpuMs(group) - cpu) / n };
  };
  await step("setup");
  const write = await step("write", calls);
  const read = await step("read", calls);
  await step("drop");
  return { calls, writeMs: write.ms, readMs: read.ms, writeCpuMs: write.cpuMs, readCpuMs: read.cpuMs };
}

/** The tenant's incidents, and how many are open (the list, as the administrator). */
async function incidentStates(base: string, adminKey: string): Promise<{ all: number; open: number }> {
  let all = 0;
  let open = 0;
  let path: string | undefined = `/api/backend/${TENANT}/incidents?limit=1000`;
  while (path) {
    const res: Response = await fetch(`${base}${path}`, { headers: { "X-SVC-Key": adminKey } });
    if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
    for (const incident of (await res.json()) as Array<{ state: string }>) {
      all++;
      if (incident.state === "OPEN") open++;
    }
    path = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
  }
  return { all, open };
}
