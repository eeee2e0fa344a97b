/**
 * bench/profile/memory.ts: a scan's memory at 100, 500 and 2,000 columns in one run (issue 40:
 * live ≤ 40 MiB per scan at any width up to the attribute cap), with the accuracy of the sketches
 * the budget gave each width beside it (profiler/budget.ts). Usage (see bench/README.md):
 *
 *   npm run bench:profile:memory [-- --rows 100k --columns 100,500,2000]
 *
 * Each width is profiled in a fresh process (this file with --child), as a file scan profiles:
 * CSV-like text columns fed to ProfileBuilder.addColumns with the breakdown on, in batches of the
 * rows a reader hands over at that width (budget.ts batchRowsFor: 2,000 rows up to 100 columns).
 * The columns cycle through eight kinds like the benchmark's data set (unique ids, e-mails, amounts,
 * 10 categories, booleans, timestamps, scores with nulls, free text), each value a slice of its
 * batch's column text as the CSV reader's are of its chunks, each column from its own seeded stream.
 * Memory is sampled after every batch (the peak of heap used + array buffers, with the batch's
 * garbage, as much as V8 lets pile up before it collects on its own) and after a forced garbage
 * collection every 50 batches and at the end (live). Beside them, the width's admission estimate
 * (budget.ts scanMemoryEstimate, what jobs/admission.ts admits the scan by).
 *
 * Accuracy: the parent regenerates the first eight columns (one of each kind) and compares the
 * child's profile with exact values: the distinct count's relative error, and the quantiles' rank
 * error (how far the rank of each reported quantile, 1 % … 99 %, is from its point).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { AttributeProfile } from "../../src/contracts/profile";
import { QUANTILE_POINTS } from "../../src/contracts/profile";
import { batchRowsFor } from "../../src/scan/formats/types";
import { SCAN_MEMORY_BUDGET, scanMemoryEstimate, sketchSizes } from "../../src/scan/profiler/budget";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { seededRandom } from "../support/seeded-random";
import { grouped, parseCount, renderTable } from "./table";

const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "100000" },
    columns: { type: "string", default: "100,500,2000" },
    child: { type: "boolean", default: false },
  },
});
const ROWS = parseCount(args.rows, "rows");
const WIDTHS = args.columns.split(",").map((c) => parseCount(c, "columns"));
/** Rows per batch up to 100 columns (files.ts reads 2,000). */
const BATCH = 2000;
/** Columns whose accuracy is checked: one of each kind. */
const CHECKED = 8;

const WORDS = "ka lo mi ne ru sa to vi ze pra sto gle dri fen mar".split(" ");
const CATEGORIES = "books electronics garden toys fashion food sports health music auto".split(" ");
const START = Date.UTC(2024, 0, 1);

function value(kind: number, row: number, random: () => number): string | null {
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

/** Column k's stream of values. */
const streamOf = (k: number) => seededRandom(17_000 + k);

/** One width in this process: prints its memory and the checked columns' profiles as JSON. */
function child(columns: number): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc (the npm script does)");
  const names = Array.from({ length: columns }, (_, k) => `c${k}_${k % 8}`);
  const randoms = names.map((_, k) => streamOf(k));
  const batchRows = batchRowsFor(BATCH, columns);
  const builder = new ProfileBuilder({ breakdown: true });
  gc();
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const baseline = used();
  let peak = 0;
  let live = 0;
  const started = performance.now();
  for (let start = 0, batch = 0; start < ROWS; start += batchRows, batch++) {
    const length = Math.min(batchRows, ROWS - start);
    // As the CSV reader hands them over: each value a slice of the text it was read from (here the
    // batch's column text), which V8 keeps whole while any slice of it is held.
    const data = names.map((_, k) => {
      const values = Array.from({ length }, (_, i) => value(k % 8, start + i, randoms[k]!));
      const text = values.map((v) => v ?? "").join("\n");
      let at = 0;
      return values.map((v) => {
        const from = at;
        at += (v ?? "").length + 1;
        return v === null ? null : text.slice(from, from + v.length);
      });
    });
    builder.addColumns({ names, columns: data, length });
    peak = Math.max(peak, used() - baseline);
    if (batch % 50 === 49) {
      gc();
      live = Math.max(live, used() - baseline);
    }
  }
  gc();
  live = Math.max(live, used() - baseline);
  const seconds = (performance.now() - started) / 1000;
  const profile = builder.finish();
  console.log(JSON.stringify({ live, peak, seconds, batchRows, checked: profile.attributes.slice(0, CHECKED) }));
}

interface ChildResult {
  live: number;
  peak: number;
  seconds: number;
  batchRows: number;
  checked: AttributeProfile[];
}

/** Worst distinct-count error and quantile rank error of the checked columns against exact values. */
function accuracy(checked: AttributeProfile[]): { distinct: number; rank: number } {
  let distinct = 0;
  let rank = 0;
  for (let k = 0; k < CHECKED; k++) {
    const random = streamOf(k);
    const values: string[] = [];
    for (let row = 0; row < ROWS; row++) {
      const v = value(k % 8, row, random);
      if (v !== null) values.push(v);
    }
    const profile = checked[k]!;
    const exact = new Set(values).size;
    distinct = Math.max(distinct, Math.abs(profile.distinct - exact) / exact);
    if (profile.quantiles === undefined) continue;
    const numbers = Float64Array.from(values, Number).sort();
    const n = numbers.length;
    QUANTILE_POINTS.forEach((p, i) => {
      if (p === 0 || p === 1) return;
      const q = profile.quantiles![i]!;
      // The ranks q holds: from the values below it to the values up to it.
      const below = lowerBound(numbers, q, false) / n;
      const upTo = lowerBound(numbers, q, true) / n;
      rank = Math.max(rank, p < below ? below - p : p > upTo ? p - upTo : 0);
    });
  }
  return { distinct, rank };
}

/** Index of the first value ≥ x (or > x when `after`). */
function lowerBound(sorted: Float64Array, x: number, after: boolean): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x || (after && sorted[mid] === x)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

if (args.child) child(WIDTHS[0]!);
else {
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
  const rows: string[][] = [];
  for (const columns of WIDTHS) {
    const r = spawnSync(
      process.execPath,
      [
        ...process.execArgv,
        fileURLToPath(import.meta.url),
        "--child",
        "--rows",
        String(ROWS),
        "--columns",
        String(columns),
      ],
      { encoding: "utf8", maxBuffer: 64 * 2 ** 20 },
    );
    if (r.status !== 0)
      throw new Error(`the ${columns}-column child failed: ${r.stderr.trim().split("\n").slice(-5).join("\n")}`);
    const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as ChildResult;
    const sizes = sketchSizes(columns);
    const { distinct, rank } = accuracy(result.checked);
    rows.push([
      grouped(columns),
      grouped(result.batchRows),
      `${sizes.topCapacity} / ${sizes.hllPrecision} / ${sizes.kllK}`,
      mib(result.live),
      mib(result.peak),
      mib(scanMemoryEstimate(columns)),
      pct(distinct),
      pct(rank),
      `${result.seconds.toFixed(1)} s`,
    ]);
  }
  console.log(
    `bench/profile/memory: ${grouped(ROWS)} rows, breakdown on; budget ${mib(SCAN_MEMORY_BUDGET)} live per scan (heap used + array buffers above the start)`,
  );
  console.log(
    renderTable(
      [
        "columns",
        "batch rows",
        "top / HLL p / KLL k",
        "live",
        "peak with garbage",
        "admission estimate",
        "distinct error (max)",
        "quantile rank error (max)",
        "time (data included)",
      ],
      rows,
      new Set([0, 1, 3, 4, 5, 6, 7, 8]),
    ),
  );
  console.log(`accuracy: the first ${CHECKED} columns (one of each kind) against exact values`);
}
