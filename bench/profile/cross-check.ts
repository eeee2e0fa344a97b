/**
 * Accuracy cross-check: for a few columns, our profile of each file and DuckDB's SUMMARIZE of it
 * next to exact values (DuckDB count(DISTINCT), quantile_disc… computed untimed), with each
 * engine's largest relative difference from exact.
 */
import { type AssetProfile, type AttributeProfile, QUANTILE_POINTS } from "../../src/contracts/profile";
import type { ExactColumn, ExactValues, FileKind, SummaryRow } from "./duckdb";
import { renderTable, significant } from "./table";

type Kind = "number" | "string" | "time" | "boolean";
type Metric = "rows" | "nulls" | "distinct" | "min" | "max" | "mean" | "std" | "q50" | "q50 rank";

/** The columns checked, their kind and the metrics compared. */
export const CHECKED: Array<{ column: string; kind: Kind; metrics: Metric[] }> = [
  { column: "id", kind: "number", metrics: ["distinct", "min", "max", "mean"] },
  { column: "email", kind: "string", metrics: ["distinct", "min", "max"] },
  { column: "amount", kind: "number", metrics: ["distinct", "min", "max", "mean", "std", "q50", "q50 rank"] },
  { column: "category", kind: "string", metrics: ["distinct", "min", "max"] },
  { column: "active", kind: "boolean", metrics: ["distinct"] },
  { column: "created_at", kind: "time", metrics: ["distinct", "min", "max"] },
  { column: "score", kind: "number", metrics: ["nulls", "distinct", "min", "max", "mean", "std", "q50", "q50 rank"] },
  { column: "comment", kind: "string", metrics: ["distinct"] },
];

export const EXACT_COLUMNS: ExactColumn[] = CHECKED.map(({ column, kind }) => ({
  name: column,
  numeric: kind === "number",
}));

const Q50 = QUANTILE_POINTS.indexOf(0.5);

type Value = number | string | undefined;

/** What one engine reported for each file. */
export interface Reported {
  ours: Record<FileKind, AssetProfile>;
  duckdb: Record<FileKind, SummaryRow[]>;
}

function ourValue(profile: AssetProfile, column: string, metric: Metric): Value {
  if (metric === "rows") return profile.row_count;
  const a: AttributeProfile | undefined = profile.attributes.find((x) => x.name === column);
  if (!a) return undefined;
  switch (metric) {
    case "nulls":
      return a.nulls;
    case "distinct":
      return a.distinct;
    case "min":
      return a.min;
    case "max":
      return a.max;
    case "mean":
      return a.mean;
    case "std":
      return a.stddev;
    case "q50":
      return a.quantiles?.[Q50];
  }
}

function duckValue(summary: SummaryRow[], column: string, metric: Metric): Value {
  const row = metric === "rows" ? summary[0] : summary.find((r) => r.column_name === column);
  if (!row) return undefined;
  const value = (v: unknown): Value => (v === null || v === undefined ? undefined : (v as string | number));
  switch (metric) {
    case "rows":
      return Number(row.count);
    case "nulls":
      // SUMMARIZE gives a percentage with two decimals, not a count.
      return row.null_percentage === null
        ? undefined
        : Math.round((Number(row.null_percentage) * Number(row.count)) / 100);
    case "distinct":
      return value(row.approx_unique);
    case "min":
      return value(row.min);
    case "max":
      return value(row.max);
    case "mean":
      return value(row.avg);
    case "std":
      return value(row.std);
    case "q50":
      return value(row.q50);
  }
}

function exactValue(exact: ExactValues, column: string, metric: Metric): Value {
  const v = metric === "rows" ? exact.row_count : exact[`${column}.${metric}`];
  return v === null || v === undefined ? undefined : typeof v === "boolean" ? String(v) : v;
}

/** DuckDB's "2024-01-01 00:01:25.959[+00]" and our ISO strings, as epoch milliseconds. */
function epochMs(v: Value): number {
  if (v === undefined) return Number.NaN;
  const m = /^(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d(?:\.\d+)?)(Z|[+-]\d\d(?::?\d\d)?)?$/.exec(String(v));
  if (!m) return Number.NaN;
  let zone = m[3] ?? "Z";
  if (/^[+-]\d\d$/.test(zone)) zone += ":00";
  return Date.parse(`${m[1]}T${m[2]}${zone}`);
}

function normalized(v: Value, kind: Kind, metric: Metric): Value {
  if (v === undefined) return undefined;
  const numeric = metric === "rows" || metric === "nulls" || metric === "distinct" || kind === "number";
  if (numeric) return Number(v);
  if (kind === "time") {
    const ms = epochMs(v);
    return Number.isNaN(ms) ? String(v) : new Date(ms).toISOString();
  }
  return String(v);
}

function shown(v: Value): string {
  if (v === undefined) return "–";
  if (typeof v === "number") return significant(v);
  return v.length > 24 ? `${v.slice(0, 23)}…` : v;
}

/** Relative difference from exact: a fraction for numbers, 0 or 1 (equal or not) for text and times. */
function difference(value: Value, exact: Value): number | undefined {
  if (value === undefined || exact === undefined) return undefined;
  if (typeof value === "number" && typeof exact === "number") {
    if (value === exact) return 0;
    return Math.abs(value - exact) / Math.max(Math.abs(exact), Number.MIN_VALUE);
  }
  return value === exact ? 0 : 1;
}

function shownDifference(diffs: Array<number | undefined>, textual: boolean): string {
  const known = diffs.filter((d): d is number => d !== undefined);
  if (known.length === 0) return "–";
  const worst = Math.max(...known);
  if (textual) return worst === 0 ? "equal" : "DIFFERS";
  if (worst === 0) return "0";
  return worst < 1e-9 ? "<1e-9" : `${(worst * 100).toFixed(worst < 0.001 ? 4 : 2)} %`;
}

/** Mid-ranks of values in a column, by the exact reference (see DuckDb.ranks). */
export type RankOf = (column: string, values: number[]) => Promise<number[]>;

/**
 * The cross-check table. "q50 rank" is where each engine's median falls among the exact values
 * (0.5 is perfect); its Δ is the absolute rank error, the measure the profiler's quantile sketch is held to.
 */
export async function crossCheck(reported: Reported, exact: ExactValues, rankOf: RankOf): Promise<string> {
  const files = ["csv", "parquet"] as const;
  const rows: string[][] = [];
  const metricRows: Array<{ column: string; kind: Kind; metric: Metric }> = [
    { column: "*", kind: "number", metric: "rows" },
    ...CHECKED.flatMap(({ column, kind, metrics }) => metrics.map((metric) => ({ column, kind, metric }))),
  ];
  for (const { column, kind, metric } of metricRows) {
    let truth: Value;
    let ours: Value[];
    let duck: Value[];
    if (metric === "q50 rank") {
      const medians = [
        ...files.map((f) => Number(ourValue(reported.ours[f], column, "q50"))),
        ...files.map((f) => Number(duckValue(reported.duckdb[f], column, "q50"))),
      ];
      const ranks = await rankOf(column, medians);
      truth = 0.5;
      ours = ranks.slice(0, 2);
      duck = ranks.slice(2);
    } else {
      truth = normalized(exactValue(exact, column, metric), kind, metric);
      ours = files.map((f) => normalized(ourValue(reported.ours[f], column, metric), kind, metric));
      duck = files.map((f) => normalized(duckValue(reported.duckdb[f], column, metric), kind, metric));
    }
    const delta = (values: Value[]) =>
      metric === "q50 rank"
        ? shownRankError(values.map((v) => (typeof v === "number" ? Math.abs(v - 0.5) : undefined)))
        : shownDifference(
            values.map((v) => difference(v, truth)),
            typeof truth === "string",
          );
    rows.push([column, metric, shown(truth), ...ours.map(shown), ...duck.map(shown), delta(ours), delta(duck)]);
  }
  return renderTable(
    ["column", "metric", "exact", "ours csv", "ours parquet", "duckdb csv", "duckdb parquet", "ours Δ", "duckdb Δ"],
    rows,
    new Set([2, 3, 4, 5, 6, 7, 8]),
  );
}

function shownRankError(errors: Array<number | undefined>): string {
  const known = errors.filter((e): e is number => e !== undefined && !Number.isNaN(e));
  return known.length === 0 ? "–" : `${(Math.max(...known) * 100).toFixed(3)} pp`;
}
