/**
 * bench/history: what an AssetMonitor's scan pays to read its metric history as the history grows.
 *
 *   npm run bench:history                        # 540 metrics (36 columns × 15), 3 to 2,000 scans
 *   npm run bench:history -- --metrics 100 --scans 10,500 --runs 5
 *
 * Runs the real HistoryStore (src/monitor/history-store.ts: migrate, recordScan, history) on
 * Node's SQLite through a small adapter of the Durable Object's `storage.sql` (exec → cursor,
 * transactionSync), so its SQL and its JavaScript are measured as a scan runs them; workerd's
 * SQLite is another build of the same engine. The peer, printed beside: the same read as a window
 * over every point (ROW_NUMBER per metric), the query history() ran until 2026-11-26, on the same
 * table. Each size prints history() and the peer in ms (median of --runs), the rows returned, and
 * what recordScan of one more scan costs, and what planning an adoption costs (the newest scans
 * hold a shift of one column's metrics, excluded by an open value_range incident; it reads the
 * points excluded since the incident opened, through a partial index): the peer beside it is that
 * read without the index (NOT INDEXED: a scan of every point, as before 2026-11-26 18:10 UTC). history() is timed twice: read from storage (a store of
 * its own each run: the first scan after the object loads), and kept (the store's second call,
 * after recordScan added its scan to what it keeps: every later scan while the object stays loaded).
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import type { EvaluatedPoint } from "../../src/detection/types";
import { EXCLUDED_SINCE, HISTORY_PER_METRIC, HistoryStore } from "../../src/monitor/history-store";
import { median } from "../profile/table";

const { values: args } = parseArgs({
  options: {
    metrics: { type: "string", default: "540" },
    scans: { type: "string", default: "3,120,500,2000" },
    runs: { type: "string", default: "5" },
  },
});
const METRICS = Number(args.metrics);
const RUNS = Number(args.runs);

/** The part of DurableObjectStorage HistoryStore uses, over a node:sqlite database. */
function storageOf(db: DatabaseSync): DurableObjectStorage {
  const exec = (query: string, ...binds: unknown[]) => {
    const rows = db.prepare(query).all(...(binds as never[]));
    return { toArray: () => rows, one: () => rows[0], [Symbol.iterator]: () => rows[Symbol.iterator]() };
  };
  const transactionSync = <T>(fn: () => T): T => {
    db.exec("BEGIN");
    try {
      const out = fn();
      db.exec("COMMIT");
      return out;
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
  };
  return { sql: { exec }, transactionSync } as unknown as DurableObjectStorage;
}

const WINDOW_READ = `SELECT metric, job_id, time, value + offset AS value, excluded FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY metric ORDER BY time DESC) AS rn FROM metric_points)
  WHERE rn <= ? ORDER BY metric, time`;

const timeOf = (scan: number) => new Date(Date.UTC(2026, 0, 1) + scan * 3_600_000).toISOString();

/** The newest scans of each size hold a level shift in col_0, excluded by value_range (an open incident). */
const SHIFTED_SCANS = 5;

function recordScan(store: HistoryStore, scan: number, scans: number): void {
  const shifted = scan >= scans - SHIFTED_SCANS;
  const points: EvaluatedPoint[] = Array.from({ length: METRICS }, (_, m) => {
    const excluded = shifted && m % 36 === 0;
    return {
      metric: `attr:col_${m % 36}:metric_${Math.floor(m / 36)}`,
      value: Math.sin(scan + m) + (excluded ? 10 : 0),
      excluded,
      ...(excluded ? { excluded_by: ["value_range" as const] } : {}),
    };
  });
  store.recordScan({
    jobId: `job_${scan}`,
    scanTime: timeOf(scan),
    appliedAt: timeOf(scan),
    points,
    schema: [],
    training: [],
    kinds: {},
    result: {},
  });
}

function timed<T>(fn: () => T): { ms: number; out: T } {
  const start = performance.now();
  const out = fn();
  return { ms: performance.now() - start, out };
}

console.log(
  `bench/history — ${METRICS} metrics per scan, ${HISTORY_PER_METRIC} points per metric read, node ${process.version}, median of ${RUNS}`,
);
console.log(
  "scans  points in table  history() read ms  rows  kept ms  peer: window ms  rows  read ×peer  recordScan ms  planAdoption ms  peer: no index ms",
);
for (const scans of args.scans.split(",").map(Number)) {
  const db = new DatabaseSync(":memory:");
  const storage = storageOf(db);
  const store = new HistoryStore(storage);
  store.migrate();
  for (let scan = 0; scan < scans - 1; scan++) recordScan(store, scan, scans);
  // As a loaded object: its history read once (the scan's judgement), then the scan recorded.
  store.history();
  const record = timed(() => recordScan(store, scans - 1, scans)).ms;
  const ours: number[] = [];
  const kept: number[] = [];
  const peer: number[] = [];
  const rows = (history: ReturnType<HistoryStore["history"]>) =>
    Object.values(history).reduce((n, points) => n + points.length, 0);
  let ourRows = 0;
  let keptRows = 0;
  let peerRows = 0;
  const window = db.prepare(WINDOW_READ);
  const opened = timeOf(Math.max(0, scans - SHIFTED_SCANS));
  const scanned = db.prepare(
    `SELECT metric, time, value + offset AS value, excluded_by FROM metric_points NOT INDEXED ${EXCLUDED_SINCE}`,
  );
  const adoption: number[] = [];
  const adoptionPeer: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const plan = timed(() =>
      store.planAdoption({
        policy: "value_range",
        attribute: "col_0",
        openedAt: opened,
        levelSince: opened,
        window: 30,
      }),
    );
    if (scans > SHIFTED_SCANS && plan.out.offsets.length !== METRICS / 36) {
      throw new Error(`the adoption moved ${plan.out.offsets.length} metrics, not ${METRICS / 36}`);
    }
    adoption.push(plan.ms);
    adoptionPeer.push(timed(() => scanned.all(opened)).ms);
  }
  for (let run = 0; run < RUNS; run++) {
    const a = timed(() => new HistoryStore(storage).history());
    ours.push(a.ms);
    ourRows = rows(a.out);
    const k = timed(() => store.history());
    kept.push(k.ms);
    keptRows = rows(k.out);
    const b = timed(() => window.all(HISTORY_PER_METRIC));
    peer.push(b.ms);
    peerRows = b.out.length;
  }
  if (ourRows !== peerRows || keptRows !== peerRows) {
    throw new Error(`history() returned ${ourRows} points read, ${keptRows} kept, the window ${peerRows}`);
  }
  const [o, k, p] = [median(ours), median(kept), median(peer)];
  console.log(
    [
      String(scans).padStart(5),
      String(scans * METRICS).padStart(16),
      o.toFixed(1).padStart(18),
      String(ourRows).padStart(5),
      k.toFixed(2).padStart(7),
      p.toFixed(1).padStart(16),
      String(peerRows).padStart(5),
      (o / p).toFixed(2).padStart(10),
      record.toFixed(2).padStart(14),
      median(adoption).toFixed(2).padStart(17),
      median(adoptionPeer).toFixed(2).padStart(21),
    ].join("  "),
  );
  db.close();
}
console.log("(history() includes turning the rows into the detectors' MetricHistory; the peer is the SQL alone.)");
