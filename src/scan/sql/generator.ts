/**
 * The one SQL generator for pushdown profiles: from a table, its columns and the asset's
 * options it writes the few queries whose results make an AssetProfile, so that no row
 * leaves the database. Dialect differences live in dialects.ts.
 *
 * Queries per profile: one wide aggregate per chunk of columns (row count, nulls, empties,
 * distinct, min/max, mean, stddev, quantiles, type counts, freshness, duplicate ids and whole
 * rows), one UNION ALL per chunk for top values and value patterns, one aggregate per chunk of
 * text columns read as numbers (their numbers' metrics), and for MySQL one window query per chunk
 * of numeric columns for exact quantiles.
 */

import { QUANTILE_POINTS } from "../../contracts/profile";
import { type ColumnKind, columnKind, type DialectSql, numberLiteral as num } from "./dialects";
import type { TableRef } from "./runner";
import { join, param, type RenderedQuery, raw, render, type SqlText, sql } from "./sql-text";

/** A column to profile, as the schema query reports it. */
export interface ProfileColumn {
  name: string;
  type: string;
  nullable?: boolean;
}

/** A bound filter value (asset options carry strings, numbers or booleans; null = SQL NULL). */
export type FilterValue = string | number | boolean | null;

/** Asset options that shape a pushdown profile (asset `options`, spec 2.3). */
export interface SqlProfileOptions {
  /** Attribute → allowed values; rows must match every attribute. */
  filter?: Record<string, FilterValue[]>;
  /** Attribute → segment values: the profile is repeated over each segment's rows. */
  segments?: Record<string, FilterValue[]>;
  /** Percent of rows to sample, 1-100 (100 = all). */
  sample_fraction?: number;
  /** At most this many rows (the newest by timestamp_attribute when there is one). */
  limit?: number;
  timestamp_attribute?: string;
  /** Only rows whose timestamp_attribute is after `last_max_timestamp`. */
  delta_only?: boolean;
  /** ISO 8601: the previous scan's freshness. */
  last_max_timestamp?: string;
  id_attributes?: string[];
  /** Seed of the sample, so every query of one profile sees the same rows (where the dialect can). */
  sample_seed?: number;
  /** Also read the investigator's breakdown (profile-table.ts breakdownOf); skip_investigator turns it off. */
  breakdown?: boolean;
}

/** One condition on the rows: the attribute is one of the values (`none`: none of them, nulls included). */
export interface RowFilter {
  attribute: string;
  values: FilterValue[];
  none?: boolean;
}

/** Columns per wide aggregate query (PostgreSQL allows 1664 result columns; a column takes up to 24). */
export const SCALAR_CHUNK = 40;
/** Columns per top-values/patterns query. */
export const FREQUENCY_CHUNK = 25;
/** Numeric columns per window quantile query (each sorts the rows once). */
export const WINDOW_CHUNK = 8;
export const TOP_K = 20;
/** Longest value shape kept, as in the file profiler (src/scan/profiler/patterns.ts). */
export const MAX_PATTERN_LENGTH = 64;
export const DEFAULT_SAMPLE_SEED = 42;

/** Regular expressions classifying text values (no backslashes, so every dialect reads them alike). */
export const TEXT_TYPE_PATTERNS = {
  integer: "^ *[-+]?[0-9]+ *$",
  /** Integers too: the number count is numeric minus integer. */
  numeric: "^ *[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)? *$",
  boolean: "^ *([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]) *$",
  date: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
  timestamp: "^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(Z|[-+][0-9]{2}(:?[0-9]{2})?)?$",
} as const;
export type TextTypeClass = keyof typeof TEXT_TYPE_PATTERNS;
export const TEXT_TYPE_CLASSES = Object.keys(TEXT_TYPE_PATTERNS) as TextTypeClass[];

/** A column with what the generator decided about it. */
export interface ColumnPlan {
  index: number;
  name: string;
  type: string;
  nullable: boolean;
  kind: ColumnKind;
}

export const planColumns = (columns: readonly ProfileColumn[]): ColumnPlan[] =>
  columns.map((c, index) => ({
    index,
    name: c.name,
    type: c.type,
    nullable: c.nullable ?? true,
    kind: columnKind(c.type),
  }));

const isNumeric = (k: ColumnKind) => k === "integer" || k === "number";
const hasOrder = (k: ColumnKind) => isNumeric(k) || k === "date" || k === "timestamp" || k === "text";

/** Result aliases, shared by the generator and the result mapping. */
export const alias = {
  rowCount: "row_count",
  freshness: "freshness",
  idGroups: "id_groups",
  distinctRows: "distinct_rows",
  nonNull: (i: number) => `c${i}_nn`,
  empties: (i: number) => `c${i}_empty`,
  distinct: (i: number) => `c${i}_distinct`,
  min: (i: number) => `c${i}_min`,
  max: (i: number) => `c${i}_max`,
  mean: (i: number) => `c${i}_mean`,
  stddev: (i: number) => `c${i}_stddev`,
  meanLength: (i: number) => `c${i}_len`,
  /** Whole values of a floating or decimal column (they count as integer values, as in the file profiler). */
  integral: (i: number) => `c${i}_int`,
  quantile: (i: number, j: number) => `c${i}_q${j}`,
  textType: (i: number, t: TextTypeClass) => `c${i}_t_${t}`,
  windowCount: (i: number) => `c${i}_wn`,
  windowLow: (i: number, j: number) => `c${i}_lo${j}`,
  windowHigh: (i: number, j: number) => `c${i}_hi${j}`,
  kind: "k",
  column: "c",
  value: "v",
  count: "n",
  /** The investigator's breakdown: missing values of the j-th target column. */
  breakdownMissing: (j: number) => `m${j}`,
  /** … values of the j-th typed target not of its type; the j-th numeric target's count, mean, stddev. */
  breakdownMismatched: (j: number) => `t${j}`,
  breakdownCount: (j: number) => `x${j}_n`,
  breakdownMean: (j: number) => `x${j}_mean`,
  breakdownStddev: (j: number) => `x${j}_sd`,
} as const;

/** The rows a profile reads, as a FROM item named `src`: table, sample, filters, delta, limit. */
export function sourceOf(
  d: DialectSql,
  table: TableRef,
  options: SqlProfileOptions,
  filters: readonly RowFilter[] = filtersOf(options.filter),
): SqlText {
  const conditions: SqlText[] = filters.map((f) => inValues(d, f));
  const ts = options.timestamp_attribute;
  if (options.delta_only && options.last_max_timestamp) {
    if (!ts) throw new TypeError("delta_only needs a timestamp_attribute");
    conditions.push(sql`${d.ident(ts)} > ${param(d.timestampParam(options.last_max_timestamp))}`);
  }
  const percent = options.sample_fraction ?? 100;
  const sample = percent < 100 ? d.sample(percent, options.sample_seed ?? DEFAULT_SAMPLE_SEED) : {};
  if (sample.where) conditions.push(sample.where);
  const limit = options.limit;
  if (!sample.tableSuffix && conditions.length === 0 && limit === undefined) return sql`${d.table(table)} src`;
  return sql`(SELECT * FROM ${d.table(table)}${sample.tableSuffix ?? raw("")}${
    conditions.length ? sql` WHERE ${join(conditions, " AND ")}` : raw("")
  }${limit !== undefined && ts ? sql` ORDER BY ${d.ident(ts)} DESC` : raw("")}${
    limit !== undefined ? sql` LIMIT ${num(limit)}` : raw("")
  }) src`;
}

/** The asset's `filter` option as row filters. */
export const filtersOf = (filter: SqlProfileOptions["filter"]): RowFilter[] =>
  Object.entries(filter ?? {}).map(([attribute, values]) => ({ attribute, values }));

function inValues(d: DialectSql, f: RowFilter): SqlText {
  const col = d.ident(f.attribute);
  const values = f.values.filter((v) => v !== null);
  if (f.none) {
    // NOT IN is never true on NULL: the null rows are named on their own.
    const nullListed = values.length < f.values.length;
    const notIn = values.length ? sql`${col} NOT IN (${join(values.map(param), ", ")})` : raw("1 = 1");
    return nullListed ? sql`(${col} IS NOT NULL AND ${notIn})` : sql`(${col} IS NULL OR ${notIn})`;
  }
  const parts: SqlText[] = [];
  if (values.length) parts.push(sql`${col} IN (${join(values.map(param), ", ")})`);
  if (values.length < f.values.length) parts.push(sql`${col} IS NULL`);
  if (parts.length === 0) return raw("1 = 0");
  return parts.length === 1 ? parts[0]! : sql`(${join(parts, " OR ")})`;
}

const as = (d: DialectSql, e: SqlText, name: string) => sql`${e} AS ${d.ident(name)}`;
const countIf = (condition: SqlText) => sql`SUM(${condition})`;

/** The value of a column as text; text columns too, so UNION branches share one collation (MySQL). */
const textOf = (d: DialectSql, c: ColumnPlan) => d.toText(d.ident(c.name));

/**
 * The wide aggregate over a chunk of columns. `withRowMetrics` adds the row count, freshness,
 * the number of distinct id tuples (duplicates = rows − tuples) and the number of distinct
 * whole rows over `rowColumns` (every column of the table; duplicate rows = rows − distinct rows).
 */
export function scalarQuery(
  d: DialectSql,
  source: SqlText,
  columns: readonly ColumnPlan[],
  options: SqlProfileOptions,
  withRowMetrics: boolean,
  rowColumns: readonly ColumnPlan[] = columns,
): SqlText {
  const items: SqlText[] = [];
  if (withRowMetrics) {
    items.push(as(d, raw("COUNT(*)"), alias.rowCount));
    if (options.timestamp_attribute) {
      items.push(as(d, sql`MAX(${d.ident(options.timestamp_attribute)})`, alias.freshness));
    }
    const ids = options.id_attributes ?? [];
    if (ids.length) {
      // GROUP BY treats NULLs as equal in every dialect, unlike COUNT(DISTINCT a, b).
      const groups = sql`(SELECT COUNT(*) FROM (SELECT 1 AS one FROM ${source} GROUP BY ${join(
        ids.map((a) => d.ident(a)),
        ", ",
      )}) g)`;
      items.push(as(d, groups, alias.idGroups));
    }
    if (rowColumns.length) items.push(as(d, distinctRows(d, source, rowColumns), alias.distinctRows));
  }
  for (const c of columns) {
    const x = d.ident(c.name);
    const i = c.index;
    items.push(as(d, sql`COUNT(${x})`, alias.nonNull(i)));
    items.push(as(d, d.distinct(c.kind === "other" ? d.toText(x) : x), alias.distinct(i)));
    if (hasOrder(c.kind)) {
      // A blank text is no value for min/max, as the file profiler and the Spark driver count it.
      const ranged = c.kind === "text" ? sql`CASE WHEN TRIM(${x}) <> '' THEN ${x} END` : x;
      items.push(as(d, sql`MIN(${ranged})`, alias.min(i)), as(d, sql`MAX(${ranged})`, alias.max(i)));
    }
    if (isNumeric(c.kind)) items.push(...numberMetrics(d, x, i));
    if (c.kind === "number") {
      items.push(as(d, countIf(sql`CASE WHEN ${x} = FLOOR(${x}) THEN 1 ELSE 0 END`), alias.integral(i)));
    }
    if (c.kind === "text") {
      items.push(as(d, countIf(sql`CASE WHEN TRIM(${x}) = '' THEN 1 ELSE 0 END`), alias.empties(i)));
      items.push(as(d, sql`AVG(${d.length(x)})`, alias.meanLength(i)));
      for (const t of TEXT_TYPE_CLASSES) {
        items.push(as(d, countIf(d.matches(x, TEXT_TYPE_PATTERNS[t])), alias.textType(i, t)));
      }
    }
  }
  return sql`SELECT ${join(items, ", ")} FROM ${source}`;
}

/** Mean, stddev and (where they are aggregates) quantiles of a numeric expression, under column i's aliases. */
function numberMetrics(d: DialectSql, x: SqlText, i: number): SqlText[] {
  // Sample stddev, as the Worker's file profiler and the Spark driver: light and full scans agree.
  const items = [as(d, d.mean(x), alias.mean(i)), as(d, sql`STDDEV_SAMP(${x})`, alias.stddev(i))];
  if (d.quantiles.kind === "aggregate") {
    d.quantiles.exprs(x, QUANTILE_POINTS).forEach((q, j) => {
      items.push(as(d, q, alias.quantile(i, j)));
    });
  }
  return items;
}

/** The numbers of a text column: its values that match the numeric pattern, as numbers; others are null. */
export const numberOfText = (d: DialectSql, x: SqlText): SqlText =>
  sql`CASE WHEN ${d.matches(x, TEXT_TYPE_PATTERNS.numeric)} = 1 THEN ${d.toDouble(sql`TRIM(${x})`)} END`;

/**
 * The numbers of text columns the profile reads as numbers (mostly numeric text, as a CSV file's
 * columns): their min/max, mean, stddev and quantiles over the values that are numbers, as the file
 * profiler and the Spark driver compute them. One query, after the scalar one has typed the columns.
 */
export function textNumberQuery(d: DialectSql, source: SqlText, columns: readonly ColumnPlan[]): SqlText {
  const items = columns.flatMap((c) => {
    const n = numberOfText(d, d.ident(c.name));
    return [
      as(d, sql`MIN(${n})`, alias.min(c.index)),
      as(d, sql`MAX(${n})`, alias.max(c.index)),
      ...numberMetrics(d, n, c.index),
    ];
  });
  return sql`SELECT ${join(items, ", ")} FROM ${source}`;
}

/**
 * The times of a text column: its values that match the date or timestamp pattern, with "T" read as
 * " " so that text order is time order (for values without a zone offset, or of one offset); others
 * are null. Their min/max are parsed as the file profiler parses them (profile-table.ts).
 */
export const timeOfText = (d: DialectSql, x: SqlText): SqlText =>
  sql`CASE WHEN ${d.matches(x, TEXT_TYPE_PATTERNS.date)} = 1 OR ${d.matches(x, TEXT_TYPE_PATTERNS.timestamp)} = 1 THEN REPLACE(${x}, ${raw(d.literal("T"))}, ${raw(d.literal(" "))}) END`;

/**
 * The range of text columns the profile reads as dates or timestamps (mostly such text, as a CSV
 * file's columns): the earliest and latest of their values that are times, as the file profiler and
 * the Spark driver take them, not the text's min/max (which a "n/a" would win). One query, after the
 * scalar one has typed the columns.
 */
export function textTimeQuery(d: DialectSql, source: SqlText, columns: readonly ColumnPlan[]): SqlText {
  const items = columns.flatMap((c) => {
    const t = timeOfText(d, d.ident(c.name));
    return [as(d, sql`MIN(${t})`, alias.min(c.index)), as(d, sql`MAX(${t})`, alias.max(c.index))];
  });
  return sql`SELECT ${join(items, ", ")} FROM ${source}`;
}

/**
 * The number of distinct rows: groups over every column (NULLs equal, as for id tuples). Columns
 * of kind "other" (json, arrays, geography, binary…), which some dialects cannot group by, are
 * grouped by their text form, as their distinct count is taken.
 */
function distinctRows(d: DialectSql, source: SqlText, columns: readonly ColumnPlan[]): SqlText {
  const keys = columns.map((c) => (c.kind === "other" ? d.toText(d.ident(c.name)) : d.ident(c.name)));
  return sql`(SELECT COUNT(*) FROM (SELECT 1 AS one FROM ${source} GROUP BY ${join(keys, ", ")}) g)`;
}

/** The shape of a text value: letters → a/A, digits → 9, runs collapsed (see profiler/patterns.ts). */
export function shapeOf(d: DialectSql, text: SqlText): SqlText {
  const { upper, lower, digit } = d.classes;
  const classes = d.replace(d.replace(d.replace(text, `${upper}+`, "A"), `${lower}+`, "a"), `${digit}+`, "9");
  return d.collapseRepeats(classes);
}

/**
 * Top values and value patterns of a chunk of columns, as rows (k, c, v, n): k 0 = value,
 * 1 = pattern; c = column index; v = value or shape; n = count. Each branch keeps its top 20.
 */
export function frequencyQuery(d: DialectSql, source: SqlText, columns: readonly ColumnPlan[]): SqlText {
  const [k, c, v, n] = [alias.kind, alias.column, alias.value, alias.count].map((a) => d.ident(a)) as [
    SqlText,
    SqlText,
    SqlText,
    SqlText,
  ];
  const branches: SqlText[] = [];
  for (const col of columns) {
    const x = d.ident(col.name);
    const text = textOf(d, col);
    branches.push(
      sql`(SELECT 0 AS ${k}, ${num(col.index)} AS ${c}, ${text} AS ${v}, COUNT(*) AS ${n} FROM ${source} WHERE ${x} IS NOT NULL GROUP BY ${text} ORDER BY ${n} DESC, ${v} LIMIT ${num(TOP_K)})`,
    );
    const s = raw("s");
    const cut = sql`CASE WHEN ${d.length(s)} > ${num(MAX_PATTERN_LENGTH)} THEN CONCAT(SUBSTR(${s}, 1, ${num(MAX_PATTERN_LENGTH)}), ${raw(d.literal("…"))}) ELSE ${s} END`;
    branches.push(
      sql`(SELECT 1 AS ${k}, ${num(col.index)} AS ${c}, ${cut} AS ${v}, COUNT(*) AS ${n} FROM (SELECT ${shapeOf(d, text)} AS s FROM ${source} WHERE ${x} IS NOT NULL) p GROUP BY s ORDER BY ${n} DESC, ${v} LIMIT ${num(TOP_K)})`,
    );
  }
  return join(branches, " UNION ALL ");
}

/** What the investigator's breakdown counts per value of each candidate column. */
export interface BreakdownTargets {
  /** Columns whose missing values (null, or blank text) are counted. */
  missing: readonly ColumnPlan[];
  /** Text columns read as another type, with the type classes that fit it: values of none are counted. */
  typed: ReadonlyArray<{ column: ColumnPlan; fits: readonly TextTypeClass[] }>;
  /** Numeric columns whose count, mean and population standard deviation are read. */
  numeric: readonly ColumnPlan[];
}

/**
 * The investigator's breakdown by SQL: per candidate column (one with few distinct values), per
 * value, its rows and, per target column, how many of them miss it, how many hold text not of its
 * type, and its numbers' count, mean and standard deviation. One UNION ALL branch per candidate,
 * the same result columns in each.
 */
export function breakdownQuery(
  d: DialectSql,
  source: SqlText,
  candidates: readonly ColumnPlan[],
  targets: BreakdownTargets,
): SqlText {
  const [c, v, n] = [alias.column, alias.value, alias.count].map((a) => d.ident(a)) as [SqlText, SqlText, SqlText];
  const items = targets.missing.map((t, j) => {
    const x = d.ident(t.name);
    const blank = t.kind === "text" ? sql` OR TRIM(${x}) = ''` : raw("");
    return as(d, countIf(sql`CASE WHEN ${x} IS NULL${blank} THEN 1 ELSE 0 END`), alias.breakdownMissing(j));
  });
  targets.typed.forEach(({ column, fits }, j) => {
    const x = d.ident(column.name);
    const fit = join(
      fits.map((t) => sql`${d.matches(x, TEXT_TYPE_PATTERNS[t])} = 1`),
      " OR ",
    );
    const mismatch = sql`CASE WHEN ${x} IS NOT NULL AND TRIM(${x}) <> '' AND NOT (${fit}) THEN 1 ELSE 0 END`;
    items.push(as(d, countIf(mismatch), alias.breakdownMismatched(j)));
  });
  targets.numeric.forEach((t, j) => {
    const x = d.ident(t.name);
    items.push(
      as(d, sql`COUNT(${x})`, alias.breakdownCount(j)),
      as(d, d.mean(x), alias.breakdownMean(j)),
      as(d, sql`STDDEV_POP(${x})`, alias.breakdownStddev(j)),
    );
  });
  const branches = candidates.map((col) => {
    const text = textOf(d, col);
    const select = join([sql`${num(col.index)} AS ${c}`, sql`${text} AS ${v}`, sql`COUNT(*) AS ${n}`, ...items], ", ");
    return sql`(SELECT ${select} FROM ${source} WHERE ${d.ident(col.name)} IS NOT NULL GROUP BY ${text})`;
  });
  return join(branches, " UNION ALL ");
}

/**
 * Exact quantiles by rank, for dialects without an aggregate for them (MySQL, MariaDB): per
 * column the non-null count and, per point p, the values at ranks ⌊p(n−1)⌋+1 and ⌈p(n−1)⌉+1,
 * between which PERCENTILE_CONT interpolates linearly.
 */
export function windowQuantileQuery(
  d: DialectSql,
  source: SqlText,
  columns: readonly ColumnPlan[],
  value: (c: ColumnPlan) => SqlText = (c) => d.ident(c.name),
): SqlText {
  const inner: SqlText[] = [];
  const outer: SqlText[] = [];
  for (const col of columns) {
    const i = col.index;
    const x = value(col);
    const [v, r, w] = [`x${i}`, `r${i}`, `w${i}`].map((a) => d.ident(a)) as [SqlText, SqlText, SqlText];
    inner.push(
      sql`${x} AS ${v}`,
      sql`ROW_NUMBER() OVER (PARTITION BY ${x} IS NULL ORDER BY ${x}) AS ${r}`,
      sql`COUNT(${x}) OVER () AS ${w}`,
    );
    outer.push(as(d, sql`MAX(${w})`, alias.windowCount(i)));
    QUANTILE_POINTS.forEach((p, j) => {
      const at = (rank: SqlText) => sql`MAX(CASE WHEN ${v} IS NOT NULL AND ${r} = ${rank} THEN ${v} END)`;
      outer.push(as(d, at(sql`FLOOR(${num(p)} * (${w} - 1)) + 1`), alias.windowLow(i, j)));
      outer.push(as(d, at(sql`CEIL(${num(p)} * (${w} - 1)) + 1`), alias.windowHigh(i, j)));
    });
  }
  return sql`SELECT ${join(outer, ", ")} FROM (SELECT ${join(inner, ", ")} FROM ${source}) q`;
}

/** Renders a statement for the dialect's placeholders. */
export const renderFor = (d: DialectSql, text: SqlText): RenderedQuery => render(text, d.placeholder);
