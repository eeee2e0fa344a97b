/**
 * bench/cost: what one scan costs in the units Cloudflare bills, measured, for docs/operations.md's "What it costs"
 * cost table.
 *
 *   npm run bench:cost -- [--assets 10] [--scans 8] [--rows 200] [--columns 36]
 *
 * Starts `wrangler dev` on bench/cost/worker.ts (the Worker with its bills counted), creates a
 * tenant with `--assets` CSV assets, uploads `--scans` batches to each (POST …/batch_data, as a
 * pipeline does: R2 → scan-jobs queue → profiler → AssetMonitor → D1), waits for every job and
 * polls its status as a client would (GET …/scans/{job} until done: counted), then prints the
 * counters per scan (`--quiet`: batches that raise nothing, else bench/support/live-batch's, which
 * raise dozens of alerts each). The first scan of an asset creates its monitor's tables: figures are given for
 * all scans and for the scans after the first. Every figure is from this run.
 */
import { parseArgs } from "node:util";
import { DqService } from "../detection/service";
import { liveCsv } from "../support/live-batch";
import {
  applyMigrations,
  BENCH_ADMIN_KEY,
  BENCH_SECRETS,
  dropStateDir,
  launchWranglerDev,
  log,
  ROOT,
  tempStateDir,
} from "../support/wrangler-dev";

interface Cost {
  workerInvocations: { fetch: number; queue: number; scheduled: number };
  d1: { calls: number; rowsRead: number; rowsWritten: number };
  durableObject: { requests: number; rowsRead: number; rowsWritten: number };
  queueMessagesSent: number;
  queueMessagesDelivered: number;
  r2: { classA: number; classB: number };
}

const { values: args } = parseArgs({
  options: {
    assets: { type: "string", default: "10" },
    scans: { type: "string", default: "8" },
    rows: { type: "string", default: "200" },
    columns: { type: "string", default: "36" },
    // Batches of the same shape without the odd values: scans that raise nothing.
    quiet: { type: "boolean", default: false },
  },
});

/** A batch like the last one: every column full, values from one stable distribution. */
function quietCsv(round: number, asset: number, columns: number, rows: number): string {
  let seed = (round * 100_003 + asset) >>> 0;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    return seed / 2 ** 32;
  };
  const lines = [["id", ...Array.from({ length: columns }, (_, c) => `c${c}`)].join(",")];
  for (let i = 0; i < rows; i++) {
    lines.push(
      [String(round * rows + i), ...Array.from({ length: columns }, () => String(Math.floor(next() * 1000)))].join(","),
    );
  }
  return lines.join("\n");
}

async function costs(base: string): Promise<Cost> {
  await new Promise((r) => setTimeout(r, 200)); // the monitors settle their SQLite counts every 50 ms
  return (await (await fetch(`${base}/__cost`)).json()) as Cost;
}

function diff(a: Cost, b: Cost): Cost {
  const sub = (x: Record<string, number>, y: Record<string, number>) =>
    Object.fromEntries(Object.keys(x).map((k) => [k, x[k]! - y[k]!]));
  return {
    workerInvocations: sub(b.workerInvocations, a.workerInvocations) as Cost["workerInvocations"],
    d1: sub(b.d1, a.d1) as Cost["d1"],
    durableObject: sub(b.durableObject, a.durableObject) as Cost["durableObject"],
    queueMessagesSent: b.queueMessagesSent - a.queueMessagesSent,
    queueMessagesDelivered: b.queueMessagesDelivered - a.queueMessagesDelivered,
    r2: sub(b.r2, a.r2) as Cost["r2"],
  };
}

function perScan(c: Cost, scans: number) {
  const f = (n: number) => (n / scans).toFixed(1);
  return [
    `Worker requests (fetch)        ${f(c.workerInvocations.fetch)}`,
    `Worker queue invocations       ${f(c.workerInvocations.queue)}`,
    `queue messages sent/delivered  ${f(c.queueMessagesSent)} / ${f(c.queueMessagesDelivered)}`,
    `D1 calls                       ${f(c.d1.calls)}`,
    `D1 rows read                   ${f(c.d1.rowsRead)}`,
    `D1 rows written                ${f(c.d1.rowsWritten)}`,
    `Durable Object requests        ${f(c.durableObject.requests)}`,
    `Durable Object rows read       ${f(c.durableObject.rowsRead)}`,
    `Durable Object rows written    ${f(c.durableObject.rowsWritten)}`,
    `R2 class A / class B           ${f(c.r2.classA)} / ${f(c.r2.classB)}`,
  ].join("\n");
}

async function main() {
  const assets = Number(args.assets);
  const scans = Number(args.scans);
  const state = tempStateDir("dq-bench-cost-");
  applyMigrations(state);
  const worker = await launchWranglerDev(
    ["bench/cost/worker.ts", "--config", `${ROOT}/wrangler.toml`, "--local", "--persist-to", state, ...BENCH_SECRETS],
    { verbose: process.env.BENCH_VERBOSE === "1", healthPath: "/health" },
  );
  try {
    const service = await DqService.bootstrap(worker.base, BENCH_ADMIN_KEY, "bench-cost");
    const project = await service.createProject("cost");
    const connection = await service.createConnection(project, "uploads");
    const ids: number[] = [];
    for (let i = 0; i < assets; i++) ids.push(await service.createAsset(project, connection, `cost_${i}`));
    const start = await costs(worker.base);
    let afterFirst: Cost | undefined;
    for (let round = 1; round <= scans; round++) {
      const jobs: Array<[number, string]> = [];
      for (const [i, id] of ids.entries()) {
        const make = args.quiet ? quietCsv : liveCsv;
        jobs.push([id, await service.upload(id, make(round, i, Number(args.columns), Number(args.rows)))]);
      }
      for (const [id, job] of jobs) {
        const status = await service.waitForJob(id, job);
        if ((status as { status: string }).status !== "SUCCEEDED")
          throw new Error(`job ${job}: ${JSON.stringify(status)}`);
      }
      if (round === 1) afterFirst = await costs(worker.base);
      log(`round ${round}: ${ids.length} scans done`);
    }
    const end = await costs(worker.base);
    console.log(
      `\n${assets} assets × ${scans} scans, ${args.rows} rows × ${Number(args.columns) + 1} columns per batch, ` +
        (args.quiet ? "quiet batches (nothing to raise)" : "live batches (odd values: alerts and incidents)"),
    );
    console.log("\nper scan, all scans (uploads, queue, monitor, status polls included):");
    console.log(perScan(diff(start, end), assets * scans));
    if (afterFirst && scans > 1) {
      console.log("\nper scan, after each asset's first:");
      console.log(perScan(diff(afterFirst, end), assets * (scans - 1)));
    }
  } finally {
    worker.stop();
    dropStateDir(state, false);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
