/**
 * bench/detection: the injected errors (after Jenga, Schelter et al., EDBT 2021, plus extras).
 * Each corruption takes a clean batch, a target (a column, a pair of columns, or the whole batch)
 * and a fraction f, and returns a corrupted copy. Rows are picked with a PRNG seeded from the
 * scenario's id, so every run injects the same errors, whatever else is filtered out.
 *
 * f is the fraction of the batch's rows that change (rounded; at least one row), picked among
 * the rows where the corruption can apply (a value present), except where a type says otherwise.
 */
import { seededRandom } from "../support/seeded-random";
import type { ColumnSpec } from "./tables";

/** A corruption type: what it does, and which targets of a table it applies to. */
interface CorruptionType {
  id: string;
  describe: string;
  targets(table: TableShape): string[];
  apply(rows: string[][], target: Target, fraction: number, random: () => number): string[][];
}

/** What the corruptions need of a table: its columns and which pairs may swap. */
export interface TableShape {
  columns: readonly ColumnSpec[];
  swapPairs: ReadonlyArray<readonly [string, string]>;
}

/** A resolved target: column indices (one, or two for a swap; none for the whole batch). */
interface Target {
  columns: number[];
  specs: ColumnSpec[];
}

export const FRACTIONS = [0.01, 0.05, 0.1, 0.25, 0.5] as const;

/** The whole batch, for corruptions of rows rather than values. */
export const WHOLE_BATCH = "*";

const isNumeric = (c: ColumnSpec) => c.kind === "integer" || c.kind === "number";
const isString = (c: ColumnSpec) => c.kind === "category" || c.kind === "text";
const names = (t: TableShape, keep: (c: ColumnSpec) => boolean) => t.columns.filter(keep).map((c) => c.name);

/** `count` distinct indices from `pool`, in increasing order (partial Fisher–Yates). */
function pick(pool: number[], count: number, random: () => number): number[] {
  const a = [...pool];
  const k = Math.min(a.length, count);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (a.length - i));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, k).sort((x, y) => x - y);
}

/** How many of `n` rows a fraction changes: rounded, at least one. */
const share = (n: number, fraction: number) => Math.max(1, Math.round(n * fraction));

/** Rows whose value in column `c` is present. */
const present = (rows: string[][], c: number) => rows.flatMap((r, i) => (r[c] !== "" ? [i] : []));

/** Copies the rows and rewrites column `c` of `count`(f) rows picked among those with a value. */
function rewrite(
  rows: string[][],
  c: number,
  fraction: number,
  random: () => number,
  change: (value: string) => string,
  pool = present(rows, c),
): string[][] {
  const out = rows.map((r) => [...r]);
  for (const i of pick(pool, share(rows.length, fraction), random)) out[i]![c] = change(out[i]![c]!);
  return out;
}

/** The most frequent non-empty value of a column (ties: the smallest), with its count. */
function mode(rows: string[][], c: number): { value: string; count: number; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  for (const r of rows) if (r[c] !== "") counts.set(r[c]!, (counts.get(r[c]!) ?? 0) + 1);
  let best = { value: "", count: 0 };
  for (const [value, count] of counts) {
    if (count > best.count || (count === best.count && value < best.value)) best = { value, count };
  }
  return { ...best, counts };
}

function gaussian(random: () => number): number {
  // Box–Muller; 1 - u keeps the logarithm finite.
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function stddev(values: number[]): number {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / Math.max(1, values.length - 1));
}

const WORDS =
  "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty".split(
    " ",
  );

/** 12 → "twelve" (|v| ≤ 20), otherwise 1234 → "1234 mi" (the column's unit). */
function numberAsText(value: string, unit: string): string {
  const v = Number(value);
  if (Number.isInteger(v) && Math.abs(v) <= 20) return v < 0 ? `minus ${WORDS[-v]}` : WORDS[v]!;
  return `${value} ${unit}`;
}

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";

/** One character replaced by another of the same class (letter case, digit). */
function typo(value: string, random: () => number): string {
  const i = Math.floor(random() * value.length);
  const ch = value[i]!;
  const alphabet = UPPER.includes(ch) ? UPPER : DIGITS.includes(ch) ? DIGITS : LOWER;
  let next = ch;
  while (next === ch) next = alphabet[Math.floor(random() * alphabet.length)]!;
  return value.slice(0, i) + next + value.slice(i + 1);
}

/**
 * Broken characters: text with non-ASCII characters gets the classic mojibake (its UTF-8 bytes read
 * as Latin-1, "é" → "Ã©"); pure ASCII text, which that leaves unchanged, gets one character replaced
 * by U+FFFD (what a decoder writes for bytes it cannot read).
 */
function mojibake(value: string, random: () => number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
  if (/[^\x00-\x7f]/.test(value)) return Buffer.from(value, "utf8").toString("latin1");
  const i = Math.floor(random() * value.length);
  return `${value.slice(0, i)}\uFFFD${value.slice(i + 1)}`;
}

function numeric(change: (v: number, spec: ColumnSpec) => string) {
  return (rows: string[][], t: Target, f: number, random: () => number) =>
    rewrite(rows, t.columns[0]!, f, random, (v) => {
      const n = Number(v);
      return Number.isFinite(n) ? change(n, t.specs[0]!) : v;
    });
}

export const CORRUPTIONS: readonly CorruptionType[] = [
  {
    id: "missing",
    describe: "f of the rows: value set to empty (any column)",
    targets: (t) => names(t, () => true),
    apply: (rows, t, f, random) => rewrite(rows, t.columns[0]!, f, random, () => ""),
  },
  {
    id: "noise",
    describe: "f of the rows: + N(0, σ of the column in the batch), rounded for integer columns",
    targets: (t) => names(t, isNumeric),
    apply: (rows, t, f, random) => {
      const c = t.columns[0]!;
      const sigma = stddev(present(rows, c).map((i) => Number(rows[i]![c])));
      return numeric((v, spec) => {
        const noisy = v + sigma * gaussian(random);
        return spec.kind === "integer" ? String(Math.round(noisy)) : String(Number(noisy.toFixed(6)));
      })(rows, t, f, random);
    },
  },
  {
    id: "scale_x100",
    describe: "f of the rows: number × 100 (a unit error)",
    targets: (t) => names(t, isNumeric),
    apply: numeric((v) => String(Math.round(v * 100 * 1e6) / 1e6)),
  },
  {
    id: "scale_div100",
    describe: "f of the rows: number ÷ 100, written with 2 decimals as a unit error would",
    targets: (t) => names(t, isNumeric),
    apply: numeric((v) => (v / 100).toFixed(2)),
  },
  {
    id: "number_text",
    describe: 'f of the rows: number written as text ("twelve" up to 20, else "1234 mi")',
    targets: (t) => names(t, isNumeric),
    apply: (rows, t, f, random) =>
      rewrite(rows, t.columns[0]!, f, random, (v) => numberAsText(v, t.specs[0]!.unit ?? "units")),
  },
  {
    id: "swap",
    describe: "f of the rows: the values of two columns of the same kind swapped",
    targets: (t) => t.swapPairs.map(([a, b]) => `${a}<>${b}`),
    apply: (rows, t, f, random) => {
      const [a, b] = t.columns as [number, number];
      const out = rows.map((r) => [...r]);
      for (const i of pick(
        rows.map((_, i) => i),
        share(rows.length, f),
        random,
      )) {
        const row = out[i]!;
        [row[a], row[b]] = [row[b]!, row[a]!];
      }
      return out;
    },
  },
  {
    id: "typo",
    describe: "f of the rows: one character of the string changed",
    targets: (t) => names(t, isString),
    apply: (rows, t, f, random) => rewrite(rows, t.columns[0]!, f, random, (v) => typo(v, random)),
  },
  {
    id: "mojibake",
    describe: 'f of the rows: broken characters ("é" → "Ã©"; ASCII: one character → U+FFFD)',
    targets: (t) => names(t, isString),
    apply: (rows, t, f, random) => rewrite(rows, t.columns[0]!, f, random, (v) => mojibake(v, random)),
  },
  {
    id: "share_shift",
    describe: "f of the rows of the top category moved to another existing category (seeded pick)",
    targets: (t) => names(t, (c) => c.kind === "category"),
    apply: (rows, t, f, random) => {
      const c = t.columns[0]!;
      const top = mode(rows, c);
      const others = [...top.counts.keys()].filter((v) => v !== top.value).sort();
      if (others.length === 0) return rows.map((r) => [...r]);
      const to = others[Math.floor(random() * others.length)]!;
      const pool = rows.flatMap((r, i) => (r[c] === top.value ? [i] : []));
      const out = rows.map((r) => [...r]);
      for (const i of pick(pool, share(pool.length, f), random)) out[i]![c] = to;
      return out;
    },
  },
  {
    id: "constant",
    describe: "f of the rows: value set to the column's most frequent value (one value)",
    targets: (t) => names(t, () => true),
    apply: (rows, t, f, random) => {
      const c = t.columns[0]!;
      const value = mode(rows, c).value;
      return rewrite(
        rows,
        c,
        f,
        random,
        () => value,
        rows.map((_, i) => i),
      );
    },
  },
  {
    id: "duplicates",
    describe: "f of the rows replaced by copies of other rows of the batch",
    targets: () => [WHOLE_BATCH],
    apply: (rows, _t, f, random) => {
      const all = rows.map((_, i) => i);
      const replaced = new Set(pick(all, share(rows.length, f), random));
      const sources = all.filter((i) => !replaced.has(i));
      return rows.map((r, i) => [...(replaced.has(i) ? rows[sources[Math.floor(random() * sources.length)]!]! : r)]);
    },
  },
  {
    id: "truncate",
    describe: "the batch cut off: only its first (1 − f) of the rows kept",
    targets: () => [WHOLE_BATCH],
    apply: (rows, _t, f) => rows.slice(0, rows.length - share(rows.length, f)).map((r) => [...r]),
  },
];

export const CORRUPTION_IDS = CORRUPTIONS.map((c) => c.id);

/** The (type, target) pairs a table admits, in CORRUPTIONS order. */
export function corruptionTargets(
  table: TableShape,
  types: readonly string[],
): Array<{ type: string; target: string }> {
  return CORRUPTIONS.filter((c) => types.includes(c.id)).flatMap((c) =>
    c.targets(table).map((target) => ({ type: c.id, target })),
  );
}

/** A 32-bit FNV-1a hash of a string: the seed of a scenario's PRNG. */
function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** The batch with the corruption applied; `seed` names the scenario. */
export function corrupt(
  table: TableShape,
  rows: string[][],
  type: string,
  target: string,
  fraction: number,
  seed: string,
): string[][] {
  const corruption = CORRUPTIONS.find((c) => c.id === type);
  if (!corruption) throw new Error(`unknown corruption ${type}`);
  const columnNames = target === WHOLE_BATCH ? [] : target.split("<>");
  const columns = columnNames.map((name) => {
    const i = table.columns.findIndex((c) => c.name === name);
    if (i < 0) throw new Error(`no column ${name}`);
    return i;
  });
  return corruption.apply(
    rows,
    { columns, specs: columns.map((i) => table.columns[i]!) },
    fraction,
    seededRandom(seedOf(seed)),
  );
}
