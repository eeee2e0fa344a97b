/**
 * bench/profile/memory.ts: peak memory of one profile of a wide table (issue 17: 1 M rows × 100
 * columns under 64 MB), with the breakdown on, as a file scan profiles: CSV-like text columns fed to
 * ProfileBuilder.addColumns in batches of 2,000 rows. Usage (see bench/README.md):
 *
 *   npm run bench:profile:memory -- --rows 1m --columns 100
 *
 * The columns cycle through eight kinds like the benchmark's data set (unique ids, e-mails, amounts,
 * 10 categories, booleans, timestamps, scores with nulls, free text), each value a slice of its batch's
 * column text as the CSV reader's are of its chunks. Memory is sampled after every
 * batch, after a forced garbage collection every 50 batches: the peak of heap used + array buffers
 * with the batch's garbage, and the peak of what stays live.
 */
import { parseArgs } from "node:util";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { seededRandom } from "../support/seeded-random";
import { grouped, parseCount } from "./table";

const { values: args } = parseArgs({
  options: { rows: { type: "string", default: "1000000" }, columns: { type: "string", default: "100" } },
});
const ROWS = parseCount(args.rows, "rows");
const COLUMNS = parseCount(args.columns, "columns");
const BATCH = 2000;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc (the npm script does)");

const random = seededRandom(17);
const WORDS = "ka lo mi ne ru sa to vi ze pra sto gle dri fen mar".split(" ");
const CATEGORIES = "books electronics garden toys fashion food sports health music auto".split(" ");
const START = Date.UTC(2024, 0, 1);

function value(kind: number, row: number): string | null {
  switch (kind) {
    case 0:
      return String(row + 1);
    case 1:
      return `user${Math.floor(random() * 1e6)}@mail${Math.floor(random() * 7)}.test`;
    case 2:
      return (Math.round(Math.exp(3.5 + random() * 2) * 100) / 100).toString();
    case 3:
      return CATEGORIES[Math.floor(random() * random() * 10)]!;
    case 4:
      return random() < 0.7 ? "true" : "false";
    case 5:
      return new Date(START + Math.floor(random() * 3e10)).toISOString();
    case 6:
      return random() < 0.05 ? null : String(Math.round(random() * 1000) / 10);
    default: {
      const n = 2 + Math.floor(random() * 11);
      let text = "";
      for (let k = 0; k < n; k++) text += `${k > 0 ? " " : ""}${WORDS[Math.floor(random() * WORDS.length)]}`;
      return text;
    }
  }
}

const names = Array.from({ length: COLUMNS }, (_, k) => `c${k}_${k % 8}`);
const builder = new ProfileBuilder({ breakdown: true });
gc();
const base = process.memoryUsage();
const used = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const baseline = base.heapUsed + base.arrayBuffers;
let peak = 0;
let peakLive = 0;
const started = performance.now();
for (let start = 0, batch = 0; start < ROWS; start += BATCH, batch++) {
  const length = Math.min(BATCH, ROWS - start);
  // As the CSV reader hands them over: each value a slice of the text it was read from (here the
  // batch's column text), which V8 keeps whole while any slice of it is held.
  const columns = names.map((_, k) => {
    const values = Array.from({ length }, (_, i) => value(k % 8, start + i));
    const text = values.map((v) => v ?? "").join("\n");
    let at = 0;
    return values.map((v) => {
      const from = at;
      at += (v ?? "").length + 1;
      return v === null ? null : text.slice(from, from + v.length);
    });
  });
  builder.addColumns({ names, columns, length });
  peak = Math.max(peak, used());
  if (batch % 50 === 49) {
    gc();
    peakLive = Math.max(peakLive, used());
  }
}
const profile = builder.finish();
gc();
peakLive = Math.max(peakLive, used());
const mib = (bytes: number) => `${((bytes - baseline) / 2 ** 20).toFixed(1)} MiB`;
console.log(
  `${grouped(profile.row_count)} rows × ${COLUMNS} columns in ${((performance.now() - started) / 1000).toFixed(1)} s (data generation included)`,
);
console.log(
  `peak heap + array buffers above the start: ${mib(peak)} (with each batch's garbage), live after GC: ${mib(peakLive)}`,
);
