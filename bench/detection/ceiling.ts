/**
 * bench/detection/ceiling: which of the last run's misses a detector could catch without alerting
 * on clean data. Reads bench/.data/detection-results.json (written by `npm run bench:detection`),
 * rebuilds each missed scenario's corrupted batch (the corruptions are seeded), and for the
 * corruptions that move the shares of a column's existing values (share_shift, constant and swap
 * on columns of categories, and missing values on any column) measures:
 *
 * - the corruption's move: the largest |share − baseline| over the column's values, in binomial
 *   standard errors at the batch's row count, the baseline being each value's median share over
 *   the 8 training batches (the value with the largest move is named);
 * - the same value's largest such move in a clean batch: every batch of the table that has 8
 *   batches before it, measured against the median of those 8.
 *
 * A miss whose move is no larger than a clean batch's move of the same value is **ambiguous**:
 * any rule that flagged it, on that value, would have flagged the clean batch too. This is lenient
 * to a detector: it assumes one that knows which value to watch, with a threshold of its own per
 * value. The strict count ("column") compares with the largest move of any value of the column in
 * a clean batch, as a detector watching every value at one threshold must. The report counts, per
 * table and fraction, the ambiguous misses, the misses of other types (not measured here: numbers,
 * whole-batch corruptions, new values), and the recall reachable if every other miss were caught
 * (an upper bound: the misses not measured are counted as reachable). It measures the data, not
 * our detector: no policy code is used.
 *
 *   npm run bench:detection:ceiling            # after npm run bench:detection
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { corrupt } from "./corruptions";
import { loadBirdstrikes, loadFlights, type Table } from "./data";
import type { ScenarioResult } from "./report";
import { TRAINING_BATCHES, targetColumns } from "./scenarios";

const RESULTS = join(dirname(fileURLToPath(import.meta.url)), "..", ".data", "detection-results.json");
const NULL = "\u0000null";
/** Values expected in fewer rows than this are not measured (the normal approximation fails there). */
const MIN_EXPECTED_ROWS = 5;

type Shares = { counts: Map<string, number>; n: number };

function sharesOf(rows: readonly string[][], c: number): Shares {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const v = r[c] === "" ? NULL : r[c]!;
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return { counts, n: rows.length };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Each value's move from its median share over `training`, in standard errors at the batch's size. */
function moves(training: readonly Shares[], now: Shares): Map<string, number> {
  const values = new Set([...now.counts.keys(), ...training.flatMap((t) => [...t.counts.keys()])]);
  const out = new Map<string, number>();
  for (const v of values) {
    const base = median(training.map((t) => (t.counts.get(v) ?? 0) / t.n));
    if (base * now.n < MIN_EXPECTED_ROWS) continue;
    const share = (now.counts.get(v) ?? 0) / now.n;
    out.set(v, Math.abs(share - base) / Math.sqrt((base * (1 - base)) / now.n));
  }
  return out;
}

/** Per column, per value: the largest move of that value in a clean batch with 8 batches before it. */
function cleanMoves(table: Table, c: number): Map<string, number> {
  const shares = table.batches.map((b) => sharesOf(b.rows, c));
  const most = new Map<string, number>();
  for (let i = TRAINING_BATCHES; i < shares.length; i++) {
    for (const [v, z] of moves(shares.slice(i - TRAINING_BATCHES, i), shares[i]!)) {
      most.set(v, Math.max(most.get(v) ?? 0, z));
    }
  }
  return most;
}

// Typos and broken characters make values never seen before, which a new-value rule sees: not measured here.
const SHARE_TYPES = new Set(["share_shift", "constant", "missing", "swap"]);

async function main() {
  const results = JSON.parse(readFileSync(RESULTS, "utf8")) as { scenarios: ScenarioResult[] };
  const loaders: Record<string, () => Promise<Table>> = { flights: loadFlights, birdstrikes: loadBirdstrikes };
  const names = [...new Set(results.scenarios.map((s) => s.table))];
  const tables = new Map(await Promise.all(names.map(async (n) => [n, await loaders[n]!()] as const)));
  const clean = new Map<string, Map<string, number>>();
  const columnMax = (table: Table, c: number) => Math.max(0, ...cleanOf(table, c).values());
  const cleanOf = (table: Table, c: number) => {
    const key = `${table.name}:${c}`;
    if (!clean.has(key)) clean.set(key, cleanMoves(table, c));
    return clean.get(key)!;
  };

  console.log("bench/detection/ceiling — the last run's misses, measured against clean batches (see the header)\n");
  console.log(
    "scenario                                             move (SE)  value                         clean max  column's  verdict",
  );
  const tally = new Map<string, { n: number; detected: number; ambiguous: number; strict: number; other: number }>();
  for (const s of results.scenarios) {
    if (!s.measured) continue;
    const key = `${s.table} ${Math.round(Number(s.fraction) * 100)}%`;
    const t = tally.get(key) ?? { n: 0, detected: 0, ambiguous: 0, strict: 0, other: 0 };
    tally.set(key, t);
    t.n++;
    if (s.ours.detected) {
      t.detected++;
      continue;
    }
    const table = tables.get(s.table)!;
    const columns = targetColumns(s.target).map((name) => table.columns.findIndex((c) => c.name === name));
    const measurable =
      SHARE_TYPES.has(s.type) &&
      columns.length > 0 &&
      (s.type === "missing" || columns.every((c) => table.columns[c]!.kind === "category"));
    if (!measurable) {
      t.other++;
      console.log(
        `${s.id.padEnd(52)} ${"-".padStart(9)}  ${"(not a share of values)".padEnd(29)} ${"-".padStart(9)} ${"-".padStart(9)}  not measured`,
      );
      continue;
    }
    const byKey = new Map(table.batches.map((b, i) => [b.key, i]));
    const training = s.window.training.map((k) => table.batches[byKey.get(k)!]!.rows);
    const test = table.batches[byKey.get(s.window.test)!]!.rows;
    const rows = corrupt(table, test, s.type, s.target, Number(s.fraction), s.id);
    // The column and value the corruption moved most, and what clean batches do to that value.
    let best = { z: 0, value: "", clean: 0, column: "", columnClean: 0 };
    for (const c of columns) {
      const now = moves(
        training.map((r) => sharesOf(r, c)),
        sharesOf(rows, c),
      );
      for (const [v, z] of now) {
        if (z > best.z) {
          const name = table.columns[c]!.name;
          best = { z, value: v, clean: cleanOf(table, c).get(v) ?? 0, column: name, columnClean: columnMax(table, c) };
        }
      }
    }
    const ambiguous = best.z <= best.clean;
    if (ambiguous) t.ambiguous++;
    if (best.z <= best.columnClean) t.strict++;
    const shown = `${best.column}=${best.value === NULL ? "(null)" : best.value}`.slice(0, 29);
    console.log(
      `${s.id.padEnd(52)} ${best.z.toFixed(1).padStart(9)}  ${shown.padEnd(29)} ${best.clean.toFixed(1).padStart(9)} ${best.columnClean.toFixed(1).padStart(9)}  ${ambiguous ? "ambiguous" : "beyond clean batches"}`,
    );
  }
  console.log(
    "\ntable and fraction   scenarios  detected  missed: ambiguous (column's)  not measured  other   recall  reachable without clean alerts",
  );
  for (const [key, t] of tally) {
    const missed = t.n - t.detected;
    const pct = (x: number) => `${((100 * x) / t.n).toFixed(0)} %`;
    console.log(
      `${key.padEnd(20)} ${String(t.n).padStart(9)}  ${String(t.detected).padStart(8)}  ${String(t.ambiguous).padStart(17)} ${`(${t.strict})`.padStart(10)}  ${String(t.other).padStart(12)}  ${String(missed - t.ambiguous - t.other).padStart(5)}  ${pct(t.detected).padStart(6)}  at most ${pct(t.n - t.ambiguous)} (${pct(t.n - t.strict)})`,
    );
  }
  const byFraction = new Map<string, { n: number; detected: number; ambiguous: number; strict: number }>();
  for (const [key, t] of tally) {
    const f = key.split(" ")[1]!;
    const all = byFraction.get(f) ?? { n: 0, detected: 0, ambiguous: 0, strict: 0 };
    for (const k of ["n", "detected", "ambiguous", "strict"] as const) all[k] += t[k];
    byFraction.set(f, all);
  }
  for (const [f, t] of byFraction) {
    const pct = (x: number) => `${((100 * x) / t.n).toFixed(0)} %`;
    console.log(
      `${`all tables ${f}`.padEnd(20)} ${String(t.n).padStart(9)}  ${String(t.detected).padStart(8)}  ${String(t.ambiguous).padStart(17)} ${`(${t.strict})`.padStart(10)}  ${"".padStart(12)}  ${"".padStart(5)}  ${pct(t.detected).padStart(6)}  at most ${pct(t.n - t.ambiguous)} (${pct(t.n - t.strict)})`,
    );
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
