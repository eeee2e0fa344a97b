/**
 * bench/detection: detection quality of the service on real data with injected errors, next to a
 * Deequ-style peer, through the real pipeline (upload → queue → profiler → AssetMonitor → alerts).
 * Usage (see bench/README.md):
 *
 *   npm run bench:detection -- [--quick] [--keep] [--types missing,typo] [--tables flights]
 *                              [--windows 4] [--reps 2] [--concurrency 16] [--verbose] [--history-only]
 *
 * 1. Data (data.ts): vega-datasets flights (daily batches) and birdstrikes (yearly batches).
 * 2. Plan (scenarios.ts, corruptions.ts): per table, windows of 8 clean batches + a 9th; one
 *    scenario per corruption type × target × fraction (the 9th batch corrupted), one control per
 *    window (the clean 9th); one "history" asset per table that gets every batch in order.
 * 3. Peer (deequ.ts): constraints suggested from each window's 8 training batches, checked on
 *    each scenario's and control's 9th batch.
 * 4. Ours (service.ts): wrangler dev on a temporary state directory; a fresh asset per scenario
 *    and control; one round per batch index (all assets, bounded concurrency), each upload's job
 *    waited for and its alerts read; the history assets run alongside, one batch after another;
 *    then the history assets' incidents, to tell new alerts from repeated ones. Each table's
 *    history runs twice: untouched, and triaged (triage.ts: every open incident closed after each
 *    scan with the reason a person would choose), to count alerts with and without triage and the
 *    alerts that repeat a closed condition. --history-only runs the histories alone.
 * 5. Report (report.ts) on stdout, every figure from this run; the full per-scenario results in
 *    bench/.data/detection-results.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  applyMigrations,
  dropStateDir,
  log,
  startWorker,
  tempStateDir,
  type WorkerProcess,
} from "../support/wrangler-dev";
import { CORRUPTION_IDS, CORRUPTIONS, corrupt, FRACTIONS } from "./corruptions";
import { loadBirdstrikes, loadFlights, type Table, toCsv } from "./data";
import { type Constraint, DeequPeer, type Violation } from "./deequ";
import { classifyHistory, type HistoryBatch } from "./history";
import { historySection, printReport, type ScenarioResult, triageSection } from "./report";
import { planTable, type Scenario, TRAINING_BATCHES, targetColumns, windowsOf } from "./scenarios";
import { type Alert, DqService, pool, type ScanRecord } from "./service";
import { alertIncidentKey, type TriageClose, triage } from "./triage";

const OUT = join(dirname(fileURLToPath(import.meta.url)), "..", ".data", "detection-results.json");
const TABLES: Record<string, () => Promise<Table>> = { flights: loadFlights, birdstrikes: loadBirdstrikes };

const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    types: { type: "string" },
    tables: { type: "string", default: Object.keys(TABLES).join(",") },
    windows: { type: "string" },
    reps: { type: "string" },
    concurrency: { type: "string", default: "16" },
    verbose: { type: "boolean", default: false },
    "history-only": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log(
    "usage: npm run bench:detection -- [--quick] [--keep] [--types a,b] [--tables flights,birdstrikes] " +
      "[--windows 4] [--reps 2] [--concurrency 16] [--verbose] [--history-only]",
  );
  process.exit(0);
}
const list = (text: string | undefined) => (text ?? "").split(",").flatMap((s) => (s.trim() ? [s.trim()] : []));
const TYPES = args.types ? list(args.types) : CORRUPTION_IDS;
for (const t of TYPES) if (!CORRUPTION_IDS.includes(t)) throw new Error(`--types: no corruption ${t}`);
const TABLE_NAMES = list(args.tables);
for (const t of TABLE_NAMES) if (!TABLES[t]) throw new Error(`--tables: no table ${t}`);
const FRACTIONS_USED: readonly number[] = args.quick ? [0.01, 0.1] : FRACTIONS;
const WINDOWS = Number(args.windows ?? (args.quick ? 2 : 4));
const REPS = Number(args.reps ?? (args.quick ? 1 : 2));
const CONCURRENCY = Number(args.concurrency);
for (const [name, n] of Object.entries({ windows: WINDOWS, reps: REPS, concurrency: CONCURRENCY })) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
}
/** --quick: the history assets get only their first batches. */
const HISTORY_LIMIT = args.quick ? 30 : Number.POSITIVE_INFINITY;

/** A scenario or control with its asset and, as the run goes, its scans and the peer's verdict. */
interface Run {
  scenario: Scenario;
  table: Table;
  assetId?: number;
  /** CSV of the 9th batch (corrupted, or clean for a control). */
  testCsv: string;
  testRows: number;
  scans: ScanRecord[];
  peer: Violation[];
}

/** Uploads of one batch before giving up on a queue that does not deliver its job. */
const UPLOAD_TRIES = 3;

/**
 * Uploads a batch, waits for its scan, reads its alerts. An upload whose job the queue never
 * delivers is made again (the lost job is recorded). A job that hangs while RUNNING is recorded
 * as HUNG and not retried: it may have reached the AssetMonitor already, and a second upload of
 * the batch would be judged against it. Any other failure is recorded, not thrown.
 */
async function scan(service: DqService, assetId: number, batch: string, csv: string): Promise<ScanRecord> {
  const lostJobs: string[] = [];
  const lost = () => (lostJobs.length ? { lostJobs } : {});
  let job = "";
  try {
    for (let tries = 1; ; tries++) {
      job = await service.upload(assetId, csv);
      const done = await service.waitForJob(assetId, job);
      if (done.stalled === "undelivered" && tries < UPLOAD_TRIES) {
        lostJobs.push(job);
        continue;
      }
      if (done.stalled) {
        const error = done.stalled === "hung" ? "RUNNING and not finished after 90 s" : "never delivered by the queue";
        return { batch, job, status: done.stalled.toUpperCase(), error, alerts: [], ...lost() };
      }
      const alerts = done.status === "SUCCEEDED" ? await service.alerts(assetId, job) : [];
      return { batch, job, status: done.status, ...(done.error ? { error: done.error } : {}), alerts, ...lost() };
    }
  } catch (err) {
    return { batch, job, status: "ERROR", error: String(err).slice(0, 500), alerts: [], ...lost() };
  }
}

/** "STATUS: error" of the scans that did not succeed, counted, for the progress log. */
function failures(scans: Array<ScanRecord | undefined>): string {
  const counts = new Map<string, number>();
  for (const s of scans) {
    if (s?.status === "SUCCEEDED") continue;
    const key = s ? `${s.status}${s.error ? `: ${s.error.slice(0, 100)}` : ""}` : "missing";
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${n}× ${k}`).join("; ");
}

async function main() {
  const started = performance.now();
  const timings: Record<string, number> = {};
  const time = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await work();
    } finally {
      timings[name] = (timings[name] ?? 0) + (performance.now() - t) / 1000;
    }
  };

  log(`loading ${TABLE_NAMES.join(", ")} (DuckDB)`);
  const tables = await time("data (DuckDB)", () => Promise.all(TABLE_NAMES.map((name) => TABLES[name]!())));
  for (const t of tables) log(`${t.name}: ${t.batches.length} batches, ${t.batches[0]?.rows.length} rows in the first`);

  const csvCache = new Map<string, string>();
  const cleanCsv = (table: Table, batch: number) => {
    const key = `${table.name}:${batch}`;
    let csv = csvCache.get(key);
    if (csv === undefined) {
      csv = toCsv(table.columns, table.batches[batch]!.rows);
      csvCache.set(key, csv);
    }
    return csv;
  };

  // The plan, and the 9th batch of every scenario and control.
  const runs: Run[] = [];
  await time("corruption", async () => {
    for (const table of tables) {
      if (args["history-only"]) continue;
      const { scenarios, controls } = planTable(
        table,
        windowsOf(table.batches.length, WINDOWS),
        TYPES,
        FRACTIONS_USED,
        REPS,
      );
      for (const scenario of [...controls, ...scenarios]) {
        const clean = table.batches[scenario.window.test]!.rows;
        const rows =
          scenario.type === "control"
            ? clean
            : corrupt(table, clean, scenario.type, scenario.target, scenario.fraction, scenario.id);
        runs.push({ scenario, table, testCsv: toCsv(table.columns, rows), testRows: rows.length, scans: [], peer: [] });
      }
    }
  });
  const scenarioCount = runs.filter((r) => r.scenario.type !== "control").length;
  log(`${scenarioCount} scenarios and ${runs.length - scenarioCount} controls`);

  const state = tempStateDir("dq-bench-detection-");
  // Interrupted (the launcher stops the Worker and exits): the state goes too, unless --keep.
  if (!args.keep) process.once("exit", () => dropStateDir(state, false));
  let worker: WorkerProcess | undefined;
  try {
    // The peer: suggestions per (table, window), checks per scenario and control.
    const peerDir = join(state, "peer");
    mkdirSync(peerDir, { recursive: true });
    const suggestions = new Map<string, Constraint[]>();
    await time("peer (DuckDB)", async () => {
      const peer = await DeequPeer.open();
      try {
        for (const run of runs) {
          const { table, scenario } = run;
          const key = `${table.name}:w${scenario.window.index}`;
          let constraints = suggestions.get(key);
          if (!constraints) {
            const files = scenario.window.training.map((b) => {
              const file = join(peerDir, `${table.name}-${b}.csv`);
              writeFileSync(file, cleanCsv(table, b));
              return file;
            });
            constraints = await peer.suggest(
              files,
              table.columns.map((c) => c.name),
            );
            suggestions.set(key, constraints);
          }
          const file = join(peerDir, "test.csv");
          writeFileSync(file, run.testCsv);
          run.peer = await peer.check(file, constraints);
        }
      } finally {
        peer.close();
      }
    });
    log(`peer: ${suggestions.size} suggestion sets, ${runs.length} batches checked`);

    log(`applying migrations into ${state}`);
    await time("service start", async () => {
      applyMigrations(state);
      worker = await startWorker(state, { verbose: args.verbose });
    });
    const w = worker!;
    log(`Worker (wrangler dev) on ${w.base}`);
    const service = await DqService.bootstrap(w.base, w.adminKey, "detection");

    // Projects and connections: scenarios of a table together; each history asset alone, so the
    // incident list (which filters by project, not by asset) returns only its incidents.
    const projects = new Map<string, { project: number; connection: number }>();
    for (const name of tables.flatMap((t) => [t.name, `${t.name}-history`, `${t.name}-history-triaged`])) {
      const project = await service.createProject(name);
      projects.set(name, { project, connection: await service.createConnection(project, `${name} uploads`) });
    }
    await time("assets", () =>
      pool(runs, CONCURRENCY, async (run) => {
        const { project, connection } = projects.get(run.table.name)!;
        const name = run.scenario.id.replaceAll("/", " ").replaceAll("<>", "-").replaceAll("*", "batch");
        run.assetId = await service.createAsset(project, connection, name);
      }),
    );

    // The history assets: every batch in order, one at a time, alongside the rounds; each table's
    // twice, the second triaged by a user who closes every open incident after each scan.
    const historyStart = performance.now();
    const histories = tables.flatMap((table) =>
      [false, true].map(async (triaged) => {
        const name = `${table.name}-history${triaged ? "-triaged" : ""}`;
        const { project, connection } = projects.get(name)!;
        const assetId = await service.createAsset(project, connection, name.replace("-", " "));
        const count = Math.min(table.batches.length, HISTORY_LIMIT);
        const scans: ScanRecord[] = [];
        const closes: TriageClose[] = [];
        const lastAlert = new Map<string, Alert>();
        for (let b = 0; b < count; b++) {
          scans.push(await scan(service, assetId, table.batches[b]!.key, cleanCsv(table, b)));
          const last = scans.at(-1)!;
          if (triaged) {
            for (const a of last.alerts) lastAlert.set(alertIncidentKey(a), a);
            closes.push(...(await triage(service, project, b, lastAlert)));
          }
          if (last.status !== "SUCCEEDED") log(`history ${name} ${last.batch}: ${failures([last])}`);
          if (scans.slice(-2).filter((s) => s.status === "HUNG").length === 2) {
            log(`history ${table.name}: two scans in a row hung; the history stops at ${last.batch}`);
            break;
          }
          if ((b + 1) % 20 === 0 || b + 1 === count) log(`history ${name}: ${b + 1}/${count} batches`);
        }
        const seconds = (performance.now() - historyStart) / 1000;
        return { table: table.name, triaged, project, assetId, scans, closes, seconds };
      }),
    );

    // The rounds: batch index k of every scenario and control asset.
    const roundsStart = performance.now();
    for (let k = 0; k <= TRAINING_BATCHES; k++) {
      const t = performance.now();
      await pool(runs, CONCURRENCY, async (run) => {
        const { window } = run.scenario;
        const test = k === TRAINING_BATCHES;
        const batch = test ? window.test : window.training[k]!;
        const csv = test ? run.testCsv : cleanCsv(run.table, batch);
        const key = run.table.batches[batch]!.key;
        // After a hung scan the asset's AssetMonitor may be stuck too: its scenario is not measured.
        if (run.scans.some((s) => s.status === "HUNG" || s.status === "SKIPPED")) {
          run.scans.push({
            batch: key,
            job: "",
            status: "SKIPPED",
            error: "an earlier scan of the asset hung",
            alerts: [],
          });
          return;
        }
        run.scans.push(await scan(service, run.assetId!, key, csv));
      });
      const round = runs.map((r) => r.scans[k]);
      const resent = round.reduce((n, s) => n + (s?.lostJobs?.length ?? 0), 0);
      const failed = failures(round);
      log(
        `round ${k + 1}/${TRAINING_BATCHES + 1} (${k === TRAINING_BATCHES ? "test" : "training"}): ` +
          `${runs.length} scans in ${((performance.now() - t) / 1000).toFixed(1)} s` +
          (resent ? `; ${resent} uploads sent again (job never delivered)` : "") +
          (failed ? `; not SUCCEEDED: ${failed}` : ""),
      );
    }
    timings["scenario scans"] = (performance.now() - roundsStart) / 1000;

    const allHistoryRuns = await Promise.all(histories);
    const historyRuns = allHistoryRuns.filter((h) => !h.triaged);
    const triagedRuns = allHistoryRuns.filter((h) => h.triaged);
    timings["history scans (alongside)"] = Math.max(...historyRuns.map((h) => h.seconds));
    timings["all scans"] = (performance.now() - roundsStart) / 1000;
    // Jobs given up as never delivered: did any run after all (then its asset got a scan twice)?
    const lost = [
      ...runs.flatMap((r) => r.scans.flatMap((s) => (s.lostJobs ?? []).map((job) => ({ assetId: r.assetId!, job })))),
      ...allHistoryRuns.flatMap((h) =>
        h.scans.flatMap((s) => (s.lostJobs ?? []).map((job) => ({ assetId: h.assetId, job }))),
      ),
    ];
    let deliveredLate = 0;
    await pool(lost, CONCURRENCY, async ({ assetId, job }) => {
      if ((await service.scanJob(assetId, job)).status !== "QUEUED") deliveredLate += 1;
    });
    const allScans = [...runs.flatMap((r) => r.scans), ...allHistoryRuns.flatMap((h) => h.scans)];
    const queue = {
      lostUploads: lost.length,
      deliveredLate,
      hung: allScans.filter((s) => s.status === "HUNG").length,
      otherFailures: failures(allScans.filter((s) => s.status !== "HUNG")),
    };
    if (lost.length)
      log(`queue: ${lost.length} uploads were never delivered and sent again (${deliveredLate} ran later)`);

    const history: HistoryBatch[][] = await time("incident reads", () =>
      Promise.all(historyRuns.map((h) => classifyHistory(service, h.project, h.scans))),
    );
    timings.total = (performance.now() - started) / 1000;

    // What each window's clean control raised: a scenario's finding the control has too is no
    // evidence of the corruption.
    const controlKeys = new Map<string, { ours: Set<string>; peer: Set<string> }>();
    for (const run of runs.filter((r) => r.scenario.type === "control")) {
      controlKeys.set(`${run.table.name}:${run.scenario.window.index}`, {
        ours: new Set((run.scans[TRAINING_BATCHES]?.alerts ?? []).map((a) => `${a.type}:${a.attribute ?? ""}`)),
        peer: new Set(run.peer.map((v) => `${v.rule}:${v.column}`)),
      });
    }
    const results: ScenarioResult[] = runs.map((run) => {
      const last = run.scans[TRAINING_BATCHES];
      const columns = targetColumns(run.scenario.target);
      const ours = last?.alerts ?? [];
      const control = controlKeys.get(`${run.table.name}:${run.scenario.window.index}`);
      return {
        ...run.scenario,
        window: {
          index: run.scenario.window.index,
          training: run.scenario.window.training.map((b) => run.table.batches[b]!.key),
          test: run.table.batches[run.scenario.window.test]!.key,
        },
        assetId: run.assetId!,
        testRows: run.testRows,
        testJob: last?.job ?? "",
        testStatus: last?.status ?? "MISSING",
        measured: run.scans.length === TRAINING_BATCHES + 1 && run.scans.every((x) => x.status === "SUCCEEDED"),
        ...(last?.error ? { testError: last.error } : {}),
        ...(last?.lostJobs ? { testLostJobs: last.lostJobs } : {}),
        ours: {
          detected: ours.length > 0,
          onTarget: columns.length === 0 ? ours.length > 0 : ours.some((a) => columns.includes(a.attribute ?? "")),
          notOnControl: ours.map((a) => `${a.type}:${a.attribute ?? ""}`).filter((key) => !control?.ours.has(key)),
          alerts: ours.map((a) => ({
            type: a.type,
            attribute: a.attribute,
            priority: a.priority,
            description: a.description,
          })),
        },
        peer: {
          detected: run.peer.length > 0,
          onTarget: columns.length === 0 ? run.peer.length > 0 : run.peer.some((v) => columns.includes(v.column)),
          notOnControl: run.peer.map((v) => `${v.rule}:${v.column}`).filter((key) => !control?.peer.has(key)),
          violations: run.peer,
        },
        trainingScans: run.scans.slice(0, TRAINING_BATCHES).map((s) => ({
          batch: s.batch,
          job: s.job,
          status: s.status,
          ...(s.error ? { error: s.error } : {}),
          ...(s.lostJobs ? { lostJobs: s.lostJobs } : {}),
          alerts: s.alerts.map((a) => `${a.type}:${a.attribute ?? ""}`),
        })),
      };
    });

    const meta = {
      when: new Date().toISOString(),
      machine: `${cpus().length} CPUs (${cpus()[0]?.model ?? "?"}), node ${process.versions.node}`,
      tables: tables.map((t) => ({
        name: t.name,
        batches: t.batches.length,
        columns: t.columns,
        windows: windowsOf(t.batches.length, WINDOWS).map((w) => ({
          index: w.index,
          training: `${t.batches[w.training[0]!]!.key} … ${t.batches[w.training.at(-1)!]!.key}`,
          test: t.batches[w.test]!.key,
        })),
      })),
      types: CORRUPTIONS.filter((c) => TYPES.includes(c.id)).map((c) => ({ id: c.id, does: c.describe })),
      fractions: FRACTIONS_USED,
      concurrency: CONCURRENCY,
      reps: REPS,
      quick: args.quick,
      scans: runs.length * (TRAINING_BATCHES + 1) + allHistoryRuns.reduce((s, h) => s + h.scans.length, 0),
    };
    const suggested = Object.fromEntries(
      [...suggestions].map(([key, cs]) => [key, cs.map((c) => `${c.rule}: ${c.description}`)]),
    );
    const historyOut = historyRuns.map((h, i) => ({ table: h.table, assetId: h.assetId, batches: history[i]! }));
    const triageOut = triagedRuns.map((h) => ({
      table: h.table,
      assetId: h.assetId,
      untriaged: historyRuns.find((u) => u.table === h.table)!.scans,
      scans: h.scans,
      closes: h.closes,
    }));
    mkdirSync(dirname(OUT), { recursive: true });
    writeFileSync(
      OUT,
      `${JSON.stringify(
        {
          meta,
          timings,
          trouble: { ...service.trouble, queue },
          peerSuggestions: suggested,
          scenarios: results.filter((r) => r.type !== "control"),
          controls: results.filter((r) => r.type === "control"),
          history: historyOut,
          triage: triageOut.map((t) => ({
            table: t.table,
            assetId: t.assetId,
            batches: t.scans.map((s) => ({ batch: s.batch, status: s.status, alerts: s.alerts })),
            closes: t.closes.map((c) => ({ after: c.after, incident: c.incident, reason: c.reason, key: c.key })),
          })),
        },
        null,
        1,
      )}\n`,
    );
    if (args["history-only"]) {
      console.log([...historySection(historyOut), "", ...triageSection(triageOut)].join("\n"));
    } else {
      printReport({
        meta,
        results,
        history: historyOut,
        triage: triageOut,
        timings,
        trouble: service.trouble,
        queue,
        out: OUT,
      });
    }
  } finally {
    worker?.stop();
    dropStateDir(state, args.keep);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
