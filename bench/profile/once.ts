/**
 * bench/profile/once.ts: one process of bench/profile/ab.ts. Profiles one file as "ours" does
 * (profileObjects, breakdown on) with the profiler of the tree at --root, once to warm up and once
 * timed, and prints the timed profile's CPU seconds (this process: user + system).
 */
import { parseArgs } from "node:util";
import type { AssetProfile } from "../../src/contracts/profile";
import type { FileKind } from "./duckdb";
import { FileStore } from "./file-store";

const { values: args } = parseArgs({
  options: { root: { type: "string" }, file: { type: "string" }, path: { type: "string" }, rows: { type: "string" } },
});
if (!args.root || !args.path || (args.file !== "csv" && args.file !== "parquet") || !args.rows) {
  throw new Error("usage: once.ts --root <tree> --file csv|parquet --path <data file> --rows <n>");
}
const format = args.file as FileKind;
const path = args.path;
// The tree's own pipeline: the same call in any version of src/scan/files.ts since the benchmark began.
const { profileObjects } = (await import(`${args.root}/src/scan/files.ts`)) as typeof import("../../src/scan/files");

async function once(): Promise<number> {
  const store = new FileStore();
  const object = await store.object(path);
  const cpu = process.cpuUsage();
  const profile: AssetProfile = await profileObjects(store, [object], { format, profile: { breakdown: true } });
  const used = process.cpuUsage(cpu);
  if (profile.row_count !== Number(args.rows))
    throw new Error(`profiled ${profile.row_count} rows, expected ${args.rows}`);
  return (used.user + used.system) / 1e6;
}

await once();
console.log(JSON.stringify({ cpuSeconds: await once() }));
