/**
 * bench/profile/batches: what one small batch costs, the shape of an upload in bench/incidents' live
 * rounds (an id and 36 columns × 200 rows, bench/support/live-batch.ts): our profiler beside DuckDB's
 * SUMMARIZE with 1 thread on the same CSV files, in one run. Usage (see bench/README.md):
 *
 *   npm run bench:profile:batches -- [--batches 100] [--columns 36] [--rows 200] [--rounds 5]
 *
 * bench/profile measures a million rows, where per-row work rules; here per-column work does
 * (setting up sketches, ranking top values, quantiles), which is what a live scan pays.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { profileObjects } from "../../src/scan/files";
import { liveCsv } from "../support/live-batch";
import { DuckDb } from "./duckdb";
import { FileStore } from "./file-store";
import { median, parseCount, renderTable } from "./table";

const { values: args } = parseArgs({
  options: {
    batches: { type: "string", default: "100" },
    columns: { type: "string", default: "36" },
    rows: { type: "string", default: "200" },
    rounds: { type: "string", default: "5" },
  },
});
const BATCHES = parseCount(args.batches, "batches");
const COLUMNS = parseCount(args.columns, "columns");
const ROWS = parseCount(args.rows, "rows");
const ROUNDS = parseCount(args.rounds, "rounds");

const dir = join(dirname(fileURLToPath(import.meta.url)), "..", ".data", `batches-${COLUMNS}x${ROWS}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
const paths = Array.from({ length: BATCHES }, (_, i) => {
  const path = join(dir, `batch-${i}.csv`);
  writeFileSync(path, liveCsv(1, i, COLUMNS, ROWS));
  return path;
});

const store = new FileStore();
const objects = await Promise.all(paths.map((p) => store.object(p)));
const duckdb = await DuckDb.open(1);

/** Each engine over every batch once; the profile's rows are checked, so nothing is skipped. */
const engines: Array<[string, (i: number) => Promise<number>]> = [
  [
    "ours (1 thread)",
    async (i) =>
      (await profileObjects(store, [objects[i]!], { format: "csv", profile: { breakdown: true } })).row_count,
  ],
  [
    "(ours: skip_investigator)",
    async (i) =>
      (await profileObjects(store, [objects[i]!], { format: "csv", profile: { breakdown: false } })).row_count,
  ],
  ["duckdb 1 thread", async (i) => Number((await duckdb.summarize(paths[i]!, "csv"))[0]!.count)],
];

const cpuMs: Record<string, number[]> = Object.fromEntries(engines.map(([name]) => [name, []]));
const wallMs: Record<string, number[]> = Object.fromEntries(engines.map(([name]) => [name, []]));
// A first round warms both (JIT, DuckDB's caches) and is not counted.
for (let round = 0; round <= ROUNDS; round++) {
  for (const [name, run] of engines) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < BATCHES; i++) {
      const rows = await run(i);
      if (rows !== ROWS) throw new Error(`${name} counted ${rows} rows in batch ${i}, not ${ROWS}`);
    }
    const wall = (performance.now() - started) / BATCHES;
    const used = process.cpuUsage(cpu);
    if (round === 0) continue;
    cpuMs[name]!.push((used.user + used.system) / 1000 / BATCHES);
    wallMs[name]!.push(wall);
  }
}
duckdb.close();

const peer = median(cpuMs["duckdb 1 thread"]!);
console.log(
  `bench/profile/batches: ${BATCHES} CSV batches of ${COLUMNS + 1} columns × ${ROWS} rows (bench/incidents' live uploads), ` +
    `${ROUNDS} rounds after a warm-up; ${cpus().length} logical CPUs (${cpus()[0]?.model ?? "?"}), Node ${process.version}\n`,
);
console.log(
  renderTable(
    ["engine", "wall ms/batch", "cpu ms/batch", "cpu vs duckdb", "cpu ms per round"],
    engines.map(([name]) => [
      name,
      median(wallMs[name]!).toFixed(2),
      median(cpuMs[name]!).toFixed(2),
      `${(median(cpuMs[name]!) / peer).toFixed(2)}×`,
      cpuMs[name]!.map((x) => x.toFixed(2)).join(" / "),
    ]),
    new Set([1, 2, 3]),
  ),
);
console.log("\n(medians over the rounds; cpu is this process's user + system time, DuckDB's threads included)");
