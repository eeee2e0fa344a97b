/**
 * bench/profile/memory.ts: a scan's memory at 100, 500 and 2,000 columns in one run (issue 40:
 * live ≤ 40 MiB per scan at any width up to the attribute cap), with the accuracy of the sketches
 * the budget gave each width beside it (profiler/budget.ts). Usage (see bench/README.md):
 *
 *   npm run bench:profile:memory [-- --rows 20k --columns 100,500,2000,2000+100 --bisect 3]
 *
 * 20,000 rows by default: past its first batches a scan's memory does not grow with its rows (its
 * sketches are at their sizes; the duplicate rows' set grows by ~12 bytes a distinct row), and
 * the 2,000-column profile takes minutes on a shared machine (bench/log/2026-11-28-…).
 *
 * Each width is profiled in a fresh process (this file with --child) whose V8 heap is capped at
 * the share of an isolate the admission gives it (--max-heap-size, young and old generations):
 * jobs/admission.ts admits a scan while the estimates of those running fit in ISOLATE_SCAN_MEMORY,
 * so the scans beside one of width w reserve at most ISOLATE_SCAN_MEMORY − estimate(w), and it has
 * ISOLATE_MEMORY less that: estimate(w) + (ISOLATE_MEMORY − ISOLATE_SCAN_MEMORY), the runtime's and
 * our code's share included (here Node's, tsx's and this file's). "2000+100" profiles two scans in
 * one process, batches interleaved as an isolate's scans interleave, under the same rule (the mix
 * must be one the admission lets run together). The table says whether each completed under its
 * cap, and the peak heap (V8's used and total heap sizes, sampled after every batch) and peak RSS
 * it reached. Array buffers (the sketches' typed arrays) live outside V8's heap and its cap: a
 * width is within its share when the peak of its heap's total size + array buffers is too. --cap <MiB> runs every width under that cap instead (a cap too small fails: "out of
 * memory"), --uncapped under none, and --bisect <runs> then looks for the smallest cap each
 * completes under, halving the interval between a failing cap and the share <runs> times.
 *
 * Each scan is profiled as a file scan profiles:
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
import { getHeapStatistics } from "node:v8";
import type { AttributeProfile } from "../../src/contracts/profile";
import { QUANTILE_POINTS } from "../../src/contracts/profile";
import { ISOLATE_MEMORY, ISOLATE_SCAN_MEMORY } from "../../src/jobs/admission";
import { batchRowsFor } from "../../src/scan/formats/types";
import { SCAN_MEMORY_BUDGET, scanMemoryEstimate, sketchSizes } from "../../src/scan/profiler/budget";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { seededRandom } from "../support/seeded-random";
import { grouped, parseCount, renderTable } from "./table";

const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "20000" },
    columns: { type: "string", default: "100,500,2000,2000+100" },
    cap: { type: "string" },
    uncapped: { type: "boolean", default: false },
    bisect: { type: "string", default: "0" },
    child: { type: "boolean", default: false },
  },
});
const ROWS = parseCount(args.rows, "rows");
/** Each entry: the widths of the scans profiled together in one process ("2000+100": two). */
const MIXES = args.columns.split(",").map((mix) => mix.split("+").map((c) => parseCount(c, "columns")));
const BISECT_RUNS = args.bisect === "0" ? 0 : parseCount(args.bisect, "bisect");
const FIXED_CAP = args.cap === undefined ? undefined : parseCount(args.cap, "cap");
const MIB = 2 ** 20;
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

/** Column k's stream of values (of the scan-th scan of a process: the first's are the checked ones). */
const streamOf = (k: number, scan = 0) => seededRandom(17_000 + 100_000 * scan + k);

/** A mix's V8 heap cap in MiB (whole MiB, rounded down): its estimates + what the isolate keeps besides its scans. */
function shareOf(mix: number[]): number {
  const estimates = mix.reduce((sum, columns) => sum + scanMemoryEstimate(columns), 0);
  return Math.floor((ISOLATE_MEMORY - ISOLATE_SCAN_MEMORY + estimates) / MIB);
}

/** Whether the admission lets the mix's scans run at once (one scan always runs). */
const admitted = (mix: number[]) =>
  mix.length === 1 || mix.reduce((sum, columns) => sum + scanMemoryEstimate(columns), 0) <= ISOLATE_SCAN_MEMORY;

/** One batch of `length` rows of a scan's columns, each value a slice of its column's text. */
function batchOf(names: string[], randoms: (() => number)[], start: number, length: number): (string | null)[][] {
  // As the CSV reader hands them over: each value a slice of the text it was read from (here the
  // batch's column text), which V8 keeps whole while any slice of it is held.
  return names.map((_, k) => {
    const values = Array.from({ length }, (_, i) => value(k % 8, start + i, randoms[k]!));
    const text = values.map((v) => v ?? "").join("\n");
    let at = 0;
    return values.map((v) => {
      const from = at;
      at += (v ?? "").length + 1;
      return v === null ? null : text.slice(from, from + v.length);
    });
  });
}

/**
 * The scans of one mix in this process, a batch at a time, the one least far along next: prints
 * their memory and the first scan's checked columns' profiles as JSON.
 */
function child(mix: number[]): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc (the npm script does)");
  const scans = mix.map((columns, scan) => {
    const names = Array.from({ length: columns }, (_, k) => `c${k}_${k % 8}`);
    return {
      names,
      randoms: names.map((_, k) => streamOf(k, scan)),
      batchRows: batchRowsFor(BATCH, columns),
      builder: new ProfileBuilder({ breakdown: true }),
      start: 0,
    };
  });
  gc();
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const baseline = used();
  const baselineHeap = getHeapStatistics().used_heap_size;
  let peak = 0;
  let live = 0;
  let peakHeapUsed = 0;
  let peakHeapTotal = 0;
  let peakFootprint = 0;
  const started = performance.now();
  for (let batch = 0; ; batch++) {
    const next = scans.filter((s) => s.start < ROWS).sort((a, b) => a.start - b.start)[0];
    if (next === undefined) break;
    const length = Math.min(next.batchRows, ROWS - next.start);
    const columns = batchOf(next.names, next.randoms, next.start, length);
    next.builder.addColumns({ names: next.names, columns, length });
    next.start += length;
    peak = Math.max(peak, used() - baseline);
    const heap = getHeapStatistics();
    peakHeapUsed = Math.max(peakHeapUsed, heap.used_heap_size);
    peakHeapTotal = Math.max(peakHeapTotal, heap.total_heap_size);
    peakFootprint = Math.max(peakFootprint, heap.total_heap_size + process.memoryUsage().arrayBuffers);
    if (batch % 50 === 49) {
      gc();
      live = Math.max(live, used() - baseline);
    }
  }
  gc();
  live = Math.max(live, used() - baseline);
  const seconds = (performance.now() - started) / 1000;
  const profiles = scans.map((s) => s.builder.finish());
  const { heap_size_limit: heapLimit } = getHeapStatistics();
  console.log(
    JSON.stringify({
      live,
      peak,
      peakHeapUsed,
      peakHeapTotal,
      peakFootprint,
      baselineHeap,
      heapLimit,
      maxRss: process.resourceUsage().maxRSS * 1024,
      seconds,
      batchRows: scans[0]!.batchRows,
      checked: profiles[0]!.attributes.slice(0, CHECKED),
    }),
  );
}

interface ChildResult {
  live: number;
  peak: number;
  peakHeapUsed: number;
  peakHeapTotal: number;
  /** Peak of the V8 heap's total size + array buffers (outside the heap, so not under its cap). */
  peakFootprint: number;
  baselineHeap: number;
  heapLimit: number;
  maxRss: number;
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

/** A mix's run under `cap` MiB of V8 heap (none: undefined): its result, or undefined when it ran out of memory. */
function run(mix: number[], cap: number | undefined): ChildResult | undefined {
  const node = [
    ...process.execArgv,
    ...(cap === undefined ? [] : [`--max-heap-size=${cap}`]),
    fileURLToPath(import.meta.url),
    "--child",
    "--rows",
    String(ROWS),
    "--columns",
    mix.join("+"),
  ];
  // No core file when V8 aborts at its heap limit.
  const r = spawnSync("sh", ["-c", 'ulimit -c 0; exec "$0" "$@"', process.execPath, ...node], {
    encoding: "utf8",
    maxBuffer: 64 * MIB,
  });
  if (r.status === 0) return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as ChildResult;
  if (/heap out of memory|Reached heap limit/.test(r.stderr)) return undefined;
  throw new Error(`the ${mix.join("+")}-column child failed: ${r.stderr.trim().split("\n").slice(-5).join("\n")}`);
}

/** The smallest cap (MiB) a mix completes under, halving [a failing cap, `completes`] BISECT_RUNS times. */
function bisect(mix: number[], completes: number): { completed: number; failed: number | undefined } {
  let fails: number | undefined;
  let ok = completes;
  for (let k = 0; k < BISECT_RUNS; k++) {
    const cap = Math.floor(((fails ?? 0) + ok) / 2);
    if (cap === fails || cap === ok) break;
    const result = run(mix, cap);
    console.error(`  ${mix.join("+")} columns under ${cap} MiB: ${result ? "completed" : "out of memory"}`);
    if (result) ok = cap;
    else fails = cap;
  }
  return { completed: ok, failed: fails };
}

if (args.child) child(MIXES[0]!);
else {
  const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;
  const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
  const rows: string[][] = [];
  const completedUnder: [number[], number][] = [];
  for (const mix of MIXES) {
    if (!admitted(mix)) throw new Error(`the admission does not run ${mix.join(" + ")} columns at once`);
    const cap = args.uncapped ? undefined : (FIXED_CAP ?? shareOf(mix));
    const result = run(mix, cap);
    const estimate = mix.map((columns) => mib(scanMemoryEstimate(columns))).join(" + ");
    const capText = cap === undefined ? "none" : `${cap} MiB`;
    if (result === undefined) {
      rows.push([mix.map(grouped).join(" + "), "", "", "", "", estimate, capText, "no: out of memory"]);
      continue;
    }
    if (cap !== undefined) completedUnder.push([mix, cap]);
    const sizes = mix.map(sketchSizes).map((s) => `${s.topCapacity} / ${s.hllPrecision} / ${s.kllK}`);
    const { distinct, rank } = accuracy(result.checked);
    rows.push([
      mix.map(grouped).join(" + "),
      grouped(result.batchRows),
      sizes.join(" + "),
      mib(result.live),
      mib(result.peak),
      estimate,
      `${capText} (V8 limit ${mib(result.heapLimit)})`,
      cap === undefined ? "yes" : result.peakFootprint <= cap * MIB ? "yes, within it" : "yes, not within it",
      mib(result.baselineHeap),
      `${mib(result.peakHeapUsed)} / ${mib(result.peakHeapTotal)}`,
      mib(result.peakFootprint),
      mib(result.maxRss),
      pct(distinct),
      pct(rank),
      `${result.seconds.toFixed(1)} s`,
    ]);
  }
  console.log(
    `bench/profile/memory: ${grouped(ROWS)} rows, breakdown on; budget ${mib(SCAN_MEMORY_BUDGET)} live per scan (heap used + array buffers above the start); ` +
      `V8 heap cap: ${args.uncapped ? "none" : FIXED_CAP !== undefined ? `${FIXED_CAP} MiB` : `the admission's share, estimates + ${mib(ISOLATE_MEMORY - ISOLATE_SCAN_MEMORY)} (isolate ${mib(ISOLATE_MEMORY)}, scans ${mib(ISOLATE_SCAN_MEMORY)})`}`,
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
        "heap cap",
        "completed (heap + array buffers within the cap)",
        "heap at start",
        "peak heap used / total",
        "peak heap total + array buffers",
        "peak RSS",
        "distinct error (max)",
        "quantile rank error (max)",
        "time (data included)",
      ],
      rows,
      new Set([1, 3, 4, 6, 8, 9, 10, 11, 12, 13, 14]),
    ),
  );
  console.log(
    `accuracy: the first ${CHECKED} columns (one of each kind) of the first scan against exact values; batch rows: the first scan's`,
  );
  if (BISECT_RUNS > 0) {
    const found = completedUnder.map(([mix, cap]) => {
      const { completed, failed } = bisect(mix, cap);
      return [
        mix.map(grouped).join(" + "),
        `${cap} MiB`,
        `${completed} MiB`,
        failed === undefined ? "none failed" : `${failed} MiB`,
      ];
    });
    console.log(`smallest V8 heap cap each completes under (${BISECT_RUNS} runs of bisection each):`);
    console.log(renderTable(["columns", "share", "completed under", "out of memory under"], found, new Set([1, 2, 3])));
  }
}
