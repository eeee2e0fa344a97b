/**
 * bench/profile/cpu.ts: one profile of the benchmark's CSV or Parquet file (as "ours" runs it), for a
 * CPU profile of the profiler alone, and a summary of such profiles. Usage (see bench/README.md):
 *
 *   npm run bench:profile:cpu -- --rows 1m --file csv     # writes bench/.data/cpu/<file>-<rows>.cpuprofile
 *   npm run bench:profile:cpu -- --rows 1m --file parquet
 *   npm run bench:profile:cpu -- --file parquet --read-only  # readColumns alone (bench:profile's read-only row)
 *   npm run bench:profile:cpu -- --file parquet --floor      # read + distinct count (its floor row)
 *
 * It runs the profile once to warm up and once under the inspector's sampling profiler (node:inspector),
 * then prints the functions with the most self time.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { profileObjects } from "../../src/scan/files";
import { ensureDataSet } from "./dataset";
import type { FileKind } from "./duckdb";
import { FileStore } from "./file-store";
import { readAndCount, readOnly } from "./reads";
import { parseCount } from "./table";

const DATA_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", ".data");

const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    file: { type: "string", default: "csv" },
    top: { type: "string", default: "15" },
    "no-breakdown": { type: "boolean", default: false },
    "read-only": { type: "boolean", default: false },
    floor: { type: "boolean", default: false },
  },
});
const ROWS = parseCount(args.rows, "rows");
const FILE = args.file as FileKind;
if (FILE !== "csv" && FILE !== "parquet") throw new Error("--file must be csv or parquet");

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
}

/** Self time per function (name + file:line), largest first. */
export function selfTimes(profile: Profile): Array<{ name: string; seconds: number; share: number }> {
  const hits = new Map<number, number>();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const total = profile.samples.length;
  const seconds = (profile.endTime - profile.startTime) / 1e6;
  const byName = new Map<string, number>();
  for (const node of profile.nodes) {
    const n = hits.get(node.id) ?? 0;
    if (n === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^.*\/(src|bench|node_modules)\//, "$1/");
    const name = `${functionName || "(anonymous)"}${file ? ` ${file}:${lineNumber + 1}` : ""}`;
    byName.set(name, (byName.get(name) ?? 0) + n);
  }
  return [...byName]
    .map(([name, n]) => ({ name, seconds: (n / total) * seconds, share: n / total }))
    .sort((a, b) => b.seconds - a.seconds);
}

async function main(): Promise<void> {
  const data = ensureDataSet(DATA_DIR, ROWS);
  const path = FILE === "csv" ? data.csv : data.parquet;
  const what = args["read-only"] ? "read only" : args.floor ? "floor: read + distinct" : "profile";
  /** Rows seen by one run of what is profiled. */
  const run = async (): Promise<number> => {
    if (args["read-only"]) return readOnly(path, FILE);
    if (args.floor) return (await readAndCount(path, FILE)).rows;
    const store = new FileStore();
    const profile = await profileObjects(store, [await store.object(path)], {
      format: FILE,
      profile: { breakdown: !args["no-breakdown"] },
    });
    return profile.row_count;
  };
  await run();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  const started = performance.now();
  const rows = await run();
  const seconds = (performance.now() - started) / 1000;
  const { profile: cpu } = (await session.post("Profiler.stop")) as unknown as { profile: Profile };
  session.disconnect();
  if (rows !== ROWS) throw new Error(`${what}: ${rows} rows, expected ${ROWS}`);
  const suffix = args["read-only"] ? "-read" : args.floor ? "-floor" : "";
  const out = join(DATA_DIR, "cpu", `${FILE}-${ROWS}${suffix}.cpuprofile`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(cpu));
  console.log(
    `${FILE}, ${ROWS} rows, ${what}: ${seconds.toFixed(2)} s (${Math.round(ROWS / seconds)} rows/s), profile in ${out}`,
  );
  for (const { name, seconds: s, share } of selfTimes(cpu).slice(0, Number(args.top))) {
    console.log(`${s.toFixed(3).padStart(8)} s ${(share * 100).toFixed(1).padStart(5)} %  ${name}`);
  }
}

await main();
