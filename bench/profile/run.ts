/**
 * bench/profile: our file-scan profiler against DuckDB SUMMARIZE on the same generated CSV and
 * Parquet files, in one run. Usage (see bench/README.md):
 *
 *   npm run bench:profile -- [--rows 1000000] [--runs 3] [--seed N] [--no-check] [--no-breakdown]
 *
 * Every figure printed is measured in this run; nothing is carried over from earlier runs.
 */
import { statSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { AssetProfile } from "../../src/contracts/profile";
import { profileObjects } from "../../src/scan/files";
import { crossCheck, EXACT_COLUMNS, type Reported } from "./cross-check";
import { DEFAULT_SEED, ensureDataSet, ROW_GROUP_ROWS } from "./dataset";
import { DuckDb, type FileKind, METRIC_GROUPS, type SummaryRow } from "./duckdb";
import { FileStore, fileLabel, STREAM_CHUNK_BYTES } from "./file-store";
import { readAndCount, readOnly } from "./reads";
import { grouped, median, parseCount, renderTable } from "./table";

/** The breakdown row: our format reader alone, not an engine of the comparison. */
const READ_ONLY = "(ours: read only)";
/** The least any profile does: read every value and count it into a distinct-count sketch. */
const FLOOR = "(floor: read + distinct)";
/** Ours with the asset option skip_investigator: 'true' (no breakdown collected): what the investigator costs. */
const NO_INVESTIGATOR = "(ours: skip_investigator)";
/** DuckDB computing what our profile reports (bar the breakdown): the peer of equal work for NO_INVESTIGATOR. */
const OUR_METRICS = "duckdb 1 thread, our metrics";
const DATA_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", ".data");

const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    runs: { type: "string", default: "3" },
    seed: { type: "string", default: String(DEFAULT_SEED) },
    "no-check": { type: "boolean", default: false },
    "no-breakdown": { type: "boolean", default: false },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (args.help) {
  console.log("usage: npm run bench:profile -- [--rows 1000000] [--runs 3] [--seed N] [--no-check] [--no-breakdown]");
  process.exit(0);
}
const ROWS = parseCount(args.rows, "rows");
const RUNS = parseCount(args.runs, "runs");
const SEED = parseCount(args.seed, "seed");

interface Measurement {
  engine: string;
  file: FileKind;
  seconds: number[];
  cpuSeconds: number[];
}

/** Wall and CPU time (all threads of this process, so DuckDB's workers count) of one call. */
async function timed<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number; cpuSeconds: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { result, seconds, cpuSeconds: (used.user + used.system) / 1e6 };
}

/** Our pipeline as a file scan runs it in the Worker: ObjectStore → readColumns → ProfileBuilder → finish(). */
async function profileOurs(path: string, format: FileKind, investigator = true): Promise<AssetProfile> {
  const store = new FileStore();
  const object = await store.object(path);
  // Default asset options: no sampling, limit, segments, id or timestamp attribute; the investigator's
  // breakdown collected, as a file scan does unless skip_investigator is 'true'.
  return profileObjects(store, [object], { format, profile: { breakdown: investigator } });
}

function checkRows(engine: string, file: FileKind, rows: number): void {
  if (rows !== ROWS) throw new Error(`${engine} counted ${rows} rows in the ${file} file, expected ${ROWS}`);
}

async function main(): Promise<void> {
  const cpu = cpus();
  console.log(`bench/profile: ${grouped(ROWS)} rows, ${RUNS} runs per engine and file (median reported), seed ${SEED}`);
  console.log(
    `machine: ${cpu.length} logical CPUs (${cpu[0]?.model.trim() ?? "unknown"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  );

  const data = ensureDataSet(DATA_DIR, ROWS, SEED);
  const paths: Record<FileKind, string> = { csv: data.csv, parquet: data.parquet };
  const size = (file: FileKind) => statSync(paths[file]).size;
  console.log(
    data.generatedSeconds > 0
      ? `data: generated in ${data.generatedSeconds.toFixed(1)} s (hyparquet-writer for Parquet)`
      : "data: cached",
  );
  for (const file of ["csv", "parquet"] as const) {
    console.log(`  ${fileLabel(paths[file])}: ${(size(file) / 2 ** 20).toFixed(1)} MiB`);
  }
  console.log(
    `  columns: id int, email string, amount float, category string (10 values), active boolean, created_at timestamp, score float (~5 % null), comment free text; Parquet row groups of ${grouped(ROW_GROUP_ROWS)} rows, snappy`,
  );

  const single = await DuckDb.open(1);
  const all = await DuckDb.open();
  console.log(`duckdb: ${single.version}, threads ${single.threads} and ${all.threads} (default: all cores)`);
  console.log(
    `ours: src/scan/files.ts profileObjects over a local-file ObjectStore (${STREAM_CHUNK_BYTES / 1024} KiB stream chunks, ranged reads for Parquet)\n`,
  );

  const measurements: Measurement[] = [];
  function record(engine: string, file: FileKind, seconds: number, cpuSeconds: number): void {
    let m = measurements.find((x) => x.engine === engine && x.file === file);
    if (!m) {
      m = { engine, file, seconds: [], cpuSeconds: [] };
      measurements.push(m);
    }
    m.seconds.push(seconds);
    m.cpuSeconds.push(cpuSeconds);
  }

  const engines: Array<{ name: string; run: (file: FileKind) => Promise<number> }> = [];
  const reported: Reported = {
    ours: {} as Record<FileKind, AssetProfile>,
    duckdb: {} as Record<FileKind, SummaryRow[]>,
  };
  engines.push({
    name: "ours (1 thread)",
    run: async (file) => {
      const { result, seconds, cpuSeconds } = await timed(() => profileOurs(paths[file], file));
      reported.ours[file] = result;
      checkRows("ours", file, result.row_count);
      record("ours (1 thread)", file, seconds, cpuSeconds);
      return seconds;
    },
  });
  engines.push({
    name: NO_INVESTIGATOR,
    run: async (file) => {
      const { result, seconds, cpuSeconds } = await timed(() => profileOurs(paths[file], file, false));
      checkRows(NO_INVESTIGATOR, file, result.row_count);
      record(NO_INVESTIGATOR, file, seconds, cpuSeconds);
      return seconds;
    },
  });
  if (!args["no-breakdown"]) {
    engines.push({
      name: READ_ONLY,
      run: async (file) => {
        const { result, seconds, cpuSeconds } = await timed(() => readOnly(paths[file], file));
        checkRows(READ_ONLY, file, result);
        record(READ_ONLY, file, seconds, cpuSeconds);
        return seconds;
      },
    });
  }
  engines.push({
    name: FLOOR,
    run: async (file) => {
      const { result, seconds, cpuSeconds } = await timed(() => readAndCount(paths[file], file));
      checkRows(FLOOR, file, result.rows);
      record(FLOOR, file, seconds, cpuSeconds);
      return seconds;
    },
  });
  for (const [name, db] of [
    [`duckdb ${single.threads} thread`, single],
    [`duckdb ${all.threads} threads`, all],
  ] as const) {
    engines.push({
      name,
      run: async (file) => {
        const { result, seconds, cpuSeconds } = await timed(() => db.summarize(paths[file], file));
        if (db === single) reported.duckdb[file] = result;
        checkRows(name, file, Number(result[0]?.count));
        record(name, file, seconds, cpuSeconds);
        return seconds;
      },
    });
  }

  // The column types DuckDB reads (untimed): they decide which aggregates each column gets.
  const described = {
    csv: await single.describe(paths.csv, "csv"),
    parquet: await single.describe(paths.parquet, "parquet"),
  };
  engines.push({
    name: OUR_METRICS,
    run: async (file) => {
      const { result, seconds, cpuSeconds } = await timed(() => single.ourMetrics(paths[file], file, described[file]));
      checkRows(OUR_METRICS, file, result);
      record(OUR_METRICS, file, seconds, cpuSeconds);
      return seconds;
    },
  });

  // Runs go round-robin over the engines, so a noisy neighbour on the shared cores hits all of them alike.
  for (const file of ["csv", "parquet"] as const) {
    for (let run = 1; run <= RUNS; run++) {
      const line: string[] = [];
      for (const engine of engines) line.push(`${engine.name} ${(await engine.run(file)).toFixed(2)} s`);
      console.log(`${file} run ${run}/${RUNS}: ${line.join(", ")}`);
    }
  }

  const rate = (m: Measurement) => ROWS / median(m.seconds);
  const rows = measurements.map((m) => {
    const seconds = median(m.seconds);
    return [
      m.engine,
      m.file,
      grouped(ROWS),
      seconds.toFixed(3),
      grouped(ROWS / seconds),
      (size(m.file) / 2 ** 20 / seconds).toFixed(1),
      median(m.cpuSeconds).toFixed(2),
      m.seconds.map((s) => s.toFixed(2)).join(" / "),
    ];
  });
  console.log(
    `\n${renderTable(
      ["engine", "file", "rows", "median s", "rows/s", "MiB/s", "cpu s", "runs (s)"],
      rows,
      new Set([2, 3, 4, 5, 6]),
    )}`,
  );

  console.log(
    `${NO_INVESTIGATOR}: the same profile without the investigator's breakdown; "ours" minus this is what the investigator costs.`,
  );
  if (!args["no-breakdown"]) {
    console.log(
      `${READ_ONLY}: readColumns alone, the columns the profiler gets, decoded and dropped, no ProfileBuilder; the rest of "ours" is profiling.`,
    );
  }
  console.log(
    `${FLOOR}: readColumns, then every value hashed into the profiler's distinct counter and nothing else: the least any profile does per value, SUMMARIZE's approx_unique.`,
  );
  console.log("\nour ratio (our rows/s ÷ DuckDB's rows/s; below 1 means DuckDB is faster):");
  for (const file of ["csv", "parquet"] as const) {
    const ours = measurements.find((m) => m.file === file && m.engine.startsWith("ours"))!;
    const parts = measurements
      .filter((m) => m.file === file && m.engine.startsWith("duckdb") && m.engine !== OUR_METRICS)
      .map((m) => {
        const ratio = rate(ours) / rate(m);
        return `vs ${m.engine}: ${ratio.toFixed(3)}× (DuckDB ${(1 / ratio).toFixed(1)}× faster)`;
      });
    console.log(`  ${file.padEnd(8)} ${parts.join("   ")}`);
  }
  // The floor's own ratio: the most any profile of ours could reach with these readers and this hash.
  const duckdbSingle = `duckdb ${single.threads} thread`;
  console.log(`${FLOOR} vs ${duckdbSingle} (the ceiling of "our ratio" with these readers and this hash):`);
  for (const file of ["csv", "parquet"] as const) {
    const floor = measurements.find((m) => m.file === file && m.engine === FLOOR)!;
    const peer = measurements.find((m) => m.file === file && m.engine === duckdbSingle)!;
    console.log(
      `  ${file.padEnd(8)} ${(rate(floor) / rate(peer)).toFixed(3)}× rows/s, ${(median(floor.cpuSeconds) / median(peer.cpuSeconds)).toFixed(2)}× CPU per row`,
    );
  }
  // Wall time suffers when other work shares the cores; CPU time per row much less so.
  console.log("CPU per row (our cpu s ÷ DuckDB's; above 1 means we spend more CPU for the same rows):");
  for (const file of ["csv", "parquet"] as const) {
    const ours = measurements.find((m) => m.file === file && m.engine.startsWith("ours"))!;
    const parts = measurements
      .filter((m) => m.file === file && m.engine.startsWith("duckdb") && m.engine !== OUR_METRICS)
      .map((m) => `vs ${m.engine}: ${(median(ours.cpuSeconds) / median(m.cpuSeconds)).toFixed(2)}×`);
    console.log(`  ${file.padEnd(8)} ${parts.join("   ")}`);
  }

  // The same metrics on both sides: our profile without the breakdown against DuckDB computing them.
  console.log(
    `\nequal work (${NO_INVESTIGATOR} ÷ ${OUR_METRICS}: DuckDB computing our profile's metrics in SQL, bench/profile/duckdb.ts ourMetricsSql):`,
  );
  for (const file of ["csv", "parquet"] as const) {
    const ours = measurements.find((m) => m.file === file && m.engine === NO_INVESTIGATOR)!;
    const peer = measurements.find((m) => m.file === file && m.engine === OUR_METRICS)!;
    console.log(
      `  ${file.padEnd(8)} ${(rate(ours) / rate(peer)).toFixed(3)}× rows/s, ${(median(ours.cpuSeconds) / median(peer.cpuSeconds)).toFixed(2)}× CPU per row`,
    );
  }
  // Where DuckDB's time goes: each group of the query alone, once (each reads the file again).
  const groupTimes: string[][] = [];
  for (const group of METRIC_GROUPS) {
    const seconds: string[] = [];
    for (const file of ["csv", "parquet"] as const) {
      const run = await timed(() => single.ourMetrics(paths[file], file, described[file], group));
      checkRows(`${OUR_METRICS} (${group})`, file, run.result);
      seconds.push(run.seconds.toFixed(2));
    }
    groupTimes.push([group, ...seconds]);
  }
  console.log(
    `\n${OUR_METRICS}, each group of its aggregates alone (one run, file read included):\n${renderTable(["group", "csv s", "parquet s"], groupTimes, new Set([1, 2]))}`,
  );

  if (!args["no-check"]) {
    const exact = await timed(() => all.exact(paths.parquet, "parquet", EXACT_COLUMNS));
    console.log(
      `\naccuracy cross-check (last run's profiles; "exact" by DuckDB count(DISTINCT)/quantile_disc over the Parquet file, untimed, ${exact.seconds.toFixed(1)} s;`,
    );
    console.log(
      " duckdb = SUMMARIZE with 1 thread; Δ = largest relative difference from exact over both files, for q50 rank the absolute rank error;",
    );
    console.log(
      " SUMMARIZE nulls come from its rounded null_percentage; both files hold the same values, so one exact column serves both)",
    );
    const rankOf = (column: string, values: number[]) => all.ranks(paths.parquet, "parquet", column, values);
    console.log(await crossCheck(reported, exact.result, rankOf));
  }
  single.close();
  all.close();
}

await main();
