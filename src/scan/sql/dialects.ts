/**
 * What differs between SQL dialects, in one place: quoting, placeholders, and the functions
 * a profile needs (distinct counts, quantiles, regular expressions, sampling). The generator
 * (generator.ts) composes these and never writes dialect-specific SQL itself.
 */

import type { ValueType } from "../../contracts/profile";
import type { Dialect, TableRef } from "./runner";
import { join, param, raw, SqlText, sql } from "./sql-text";

/** How the profiler treats a column, from its declared SQL type. */
export type ColumnKind = "integer" | "number" | "boolean" | "date" | "timestamp" | "text" | "other";

const KIND_PATTERNS: Array<[ColumnKind, RegExp]> = [
  ["boolean", /^(bool|boolean|tinyint\(1\)|bit(\(1\))?)$/],
  ["integer", /^(number|numeric|decimal)\(\s*\d+\s*,\s*0\s*\)/],
  [
    "integer",
    /^(tinyint|smallint|mediumint|int|integer|bigint|int2|int4|int8|int64|serial|bigserial|smallserial|byteint|long|short|byte)\b/,
  ],
  ["number", /^(numeric|decimal|dec|number|real|float|float4|float8|float64|double|money|bignumeric|bigdecimal)\b/],
  ["date", /^date$/],
  ["timestamp", /^(timestamp|datetime|timestamptz|timestamp_ntz|timestamp_ltz|timestamp_tz)\b/],
  [
    "text",
    /^(character varying|varchar|varchar2|nvarchar|character|char|nchar|bpchar|text|tinytext|mediumtext|longtext|string|citext|enum|set|name|clob)\b/,
  ],
];

/** The profiler's kind of a declared SQL type ("character varying", "decimal(10,2)", "TIMESTAMP_NTZ", …). */
export function columnKind(sqlType: string): ColumnKind {
  const t = sqlType.trim().toLowerCase();
  for (const [kind, re] of KIND_PATTERNS) if (re.test(t)) return kind;
  return "other";
}

/** The contract's value type of a column kind (text and other types hold strings). */
export function valueTypeOf(kind: ColumnKind): ValueType {
  return kind === "text" || kind === "other" ? "string" : kind;
}

/** The quantile SQL of a dialect: one expression per point, or a separate window query (MySQL). */
export type QuantileSupport =
  | { kind: "aggregate"; exprs: (e: SqlText, points: readonly number[]) => SqlText[] }
  | { kind: "window" };

export interface DialectSql {
  readonly name: Dialect;
  /** Whether COUNT(DISTINCT) is exact (else an approximate distinct count). */
  readonly exactDistinct: boolean;
  /** A quoted identifier: quotes inside the name are doubled (or escaped), so any name is safe. */
  ident(name: string): SqlText;
  /** The quoted, qualified table name. */
  table(t: TableRef): SqlText;
  /** The placeholder of the index-th (0-based) bound parameter. */
  placeholder(index: number): string;
  /** A string literal for text the generator owns (regular expressions), escaped for the dialect. */
  literal(s: string): string;
  /** The value as text (top values, patterns). */
  toText(e: SqlText): SqlText;
  /** A text known to match the numeric pattern as a floating-point number (a text column's numbers). */
  toDouble(e: SqlText): SqlText;
  /** Length in characters. */
  length(e: SqlText): SqlText;
  /** Mean of a numeric column, in floating point. */
  mean(e: SqlText): SqlText;
  /** Distinct non-null values (exact or approximate, see exactDistinct). */
  distinct(e: SqlText): SqlText;
  quantiles: QuantileSupport;
  /** 1 when the text matches a regular expression (POSIX classes, no backslashes), else 0. */
  matches(e: SqlText, pattern: string): SqlText;
  /** Every match of a pattern replaced. */
  replace(e: SqlText, pattern: string, replacement: string): SqlText;
  /** Character classes for value shapes. */
  readonly classes: { upper: string; lower: string; digit: string };
  /** Collapses runs of one repeated character (after class runs are collapsed already). */
  collapseRepeats(e: SqlText): SqlText;
  /** Sampling: a clause after the table name, or a row predicate. Fraction in percent (0, 100). */
  sample(percent: number, seed: number): { tableSuffix?: SqlText; where?: SqlText };
  /** A bound value for a timestamp compared with a timestamp column (delta scans). */
  timestampParam(iso: string): unknown;
  /** Columns of a table: rows of (name, type, nullable), at most `max`; names are bound parameters. */
  schemaQuery(t: TableRef, max: number): SqlText;
}

const quoteWith = (q: string) => (name: string) => raw(q + name.split(q).join(q + q) + q);

/** Literal with '' doubled; backslashes doubled too where the dialect treats them as escapes. */
const literalWith = (backslashEscapes: boolean) => (s: string) =>
  `'${(backslashEscapes ? s.replaceAll("\\", "\\\\") : s).replaceAll("'", "''")}'`;

const qualified = (ident: (n: string) => SqlText) => (t: TableRef) =>
  join(
    [t.catalog, t.schema, t.name].filter((p): p is string => !!p).map((p) => ident(p)),
    ".",
  );

const num = (n: number): SqlText => {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  return raw(String(n));
};

/** Runs of the same other character, for engines without backreferences: common separators only. */
const SEPARATORS = [" ", "-", ".", "_", "/", ",", ":"];
function collapseSeparators(d: Pick<DialectSql, "replace">, e: SqlText): SqlText {
  return SEPARATORS.reduce((acc, c) => d.replace(acc, `[${c}]+`, c), e);
}

const POSIX_CLASSES = { upper: "[[:upper:]]", lower: "[[:lower:]]", digit: "[[:digit:]]" };
const ASCII_CLASSES = { upper: "[A-Z]", lower: "[a-z]", digit: "[0-9]" };

function postgres(): DialectSql {
  const ident = quoteWith('"');
  const literal = (s: string) => (s.includes("\\") ? `E${literalWith(true)(s)}` : literalWith(false)(s));
  const d: DialectSql = {
    name: "postgres",
    exactDistinct: true,
    ident,
    table: qualified(ident),
    placeholder: (i) => `$${i + 1}`,
    literal,
    toText: (e) => sql`CAST(${e} AS TEXT)`,
    toDouble: (e) => sql`CAST(${e} AS DOUBLE PRECISION)`,
    length: (e) => sql`char_length(${e})`,
    mean: (e) => sql`AVG(${e})`,
    distinct: (e) => sql`COUNT(DISTINCT ${e})`,
    quantiles: {
      kind: "aggregate",
      // One ordered-set aggregate; PostgreSQL evaluates identical aggregate calls once.
      exprs: (e, points) =>
        points.map(
          (_, i) =>
            sql`(percentile_cont(CAST(ARRAY[${raw(points.join(","))}] AS double precision[])) WITHIN GROUP (ORDER BY ${e}))[${num(i + 1)}]`,
        ),
    },
    matches: (e, p) => sql`CASE WHEN ${e} ~ ${raw(literal(p))} THEN 1 ELSE 0 END`,
    replace: (e, p, r) => sql`regexp_replace(${e}, ${raw(literal(p))}, ${raw(literal(r))}, 'g')`,
    classes: POSIX_CLASSES,
    collapseRepeats: (e) => d.replace(e, "(.)\\1+", "\\1"),
    sample: (percent, seed) => ({
      tableSuffix: sql` TABLESAMPLE BERNOULLI (${num(percent)}) REPEATABLE (${num(seed)})`,
    }),
    timestampParam: (iso) => iso,
    schemaQuery: (t, max) =>
      sql`SELECT column_name AS name, CASE WHEN data_type IN ('USER-DEFINED', 'ARRAY') THEN udt_name ELSE data_type END AS type, is_nullable AS nullable FROM information_schema.columns WHERE table_schema = ${param(t.schema ?? "public")} AND table_name = ${param(t.name)} ORDER BY ordinal_position LIMIT ${num(max)}`,
  };
  return d;
}

function mysql(): DialectSql {
  const ident = quoteWith("`");
  const literal = literalWith(true);
  // MariaDB/MySQL regular expressions follow the column's collation (often case-insensitive).
  const cs = (p: string) => literal(`(?-i)${p}`);
  const d: DialectSql = {
    name: "mysql",
    exactDistinct: true,
    ident,
    table: qualified(ident),
    placeholder: () => "?",
    literal,
    toText: (e) => sql`CAST(${e} AS CHAR)`,
    toDouble: (e) => sql`CAST(${e} AS DOUBLE)`,
    length: (e) => sql`CHAR_LENGTH(${e})`,
    // AVG of a DECIMAL keeps only div_precision_increment (4) more digits: average a double.
    mean: (e) => sql`AVG(${e} + 0E0)`,
    distinct: (e) => sql`COUNT(DISTINCT ${e})`,
    // MySQL 8 has no PERCENTILE_CONT and MariaDB only as a window function: ranks in a window query.
    quantiles: { kind: "window" },
    matches: (e, p) => sql`CASE WHEN ${e} REGEXP ${raw(cs(p))} THEN 1 ELSE 0 END`,
    replace: (e, p, r) => sql`REGEXP_REPLACE(${e}, ${raw(cs(p))}, ${raw(literal(r))})`,
    classes: POSIX_CLASSES,
    // Replacement backreferences differ between MariaDB (\1) and MySQL 8 ($1): separators only.
    collapseRepeats: (e) => collapseSeparators(d, e),
    sample: (percent, seed) => ({ where: sql`RAND(${num(seed)}) < ${num(percent / 100)}` }),
    // DATETIME literals: no 'T' or zone designator.
    timestampParam: (iso) => iso.replace("T", " ").replace(/Z$/, ""),
    schemaQuery: (t, max) =>
      sql`SELECT COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ${t.schema ? param(t.schema) : raw("DATABASE()")} AND TABLE_NAME = ${param(t.name)} ORDER BY ORDINAL_POSITION LIMIT ${num(max)}`,
  };
  return d;
}

function snowflake(): DialectSql {
  const ident = quoteWith('"');
  const literal = literalWith(true);
  const d: DialectSql = {
    name: "snowflake",
    exactDistinct: false,
    ident,
    table: qualified(ident),
    placeholder: () => "?",
    literal,
    toText: (e) => sql`TO_VARCHAR(${e})`,
    toDouble: (e) => sql`TRY_TO_DOUBLE(${e})`,
    length: (e) => sql`LENGTH(${e})`,
    mean: (e) => sql`AVG(${e})`,
    distinct: (e) => sql`APPROX_COUNT_DISTINCT(${e})`,
    quantiles: {
      kind: "aggregate",
      exprs: (e, points) => points.map((p) => sql`APPROX_PERCENTILE(${e}, ${num(p)})`),
    },
    matches: (e, p) => sql`CASE WHEN REGEXP_LIKE(${e}, ${raw(literal(p))}) THEN 1 ELSE 0 END`,
    replace: (e, p, r) => sql`REGEXP_REPLACE(${e}, ${raw(literal(p))}, ${raw(literal(r))})`,
    classes: POSIX_CLASSES,
    // Snowflake patterns have no backreferences.
    collapseRepeats: (e) => collapseSeparators(d, e),
    sample: (percent, seed) => ({ tableSuffix: sql` SAMPLE BERNOULLI (${num(percent)}) SEED (${num(seed)})` }),
    timestampParam: (iso) => iso,
    schemaQuery: (t, max) => {
      const infoSchema = t.catalog
        ? sql`${ident(t.catalog)}.INFORMATION_SCHEMA.COLUMNS`
        : sql`INFORMATION_SCHEMA.COLUMNS`;
      return sql`SELECT COLUMN_NAME AS "name", DATA_TYPE AS "type", IS_NULLABLE AS "nullable" FROM ${infoSchema} WHERE TABLE_SCHEMA = ${param(t.schema ?? "PUBLIC")} AND TABLE_NAME = ${param(t.name)} ORDER BY ORDINAL_POSITION LIMIT ${num(max)}`;
    },
  };
  return d;
}

function bigquery(): DialectSql {
  // Backticks are escaped with a backslash inside a BigQuery quoted identifier.
  const ident = (name: string) => raw(`\`${name.replaceAll("\\", "\\\\").replaceAll("`", "\\`")}\``);
  const literal = literalWith(true);
  const d: DialectSql = {
    name: "bigquery",
    exactDistinct: false,
    ident,
    table: qualified(ident),
    placeholder: () => "?",
    literal,
    toText: (e) => sql`CAST(${e} AS STRING)`,
    toDouble: (e) => sql`SAFE_CAST(${e} AS FLOAT64)`,
    length: (e) => sql`LENGTH(${e})`,
    mean: (e) => sql`AVG(${e})`,
    distinct: (e) => sql`APPROX_COUNT_DISTINCT(${e})`,
    quantiles: {
      kind: "aggregate",
      // 100 buckets: every QUANTILE_POINT is a whole percent.
      exprs: (e, points) => points.map((p) => sql`APPROX_QUANTILES(${e}, 100)[OFFSET(${num(Math.round(p * 100))})]`),
    },
    matches: (e, p) => sql`CASE WHEN REGEXP_CONTAINS(${e}, ${raw(literal(p))}) THEN 1 ELSE 0 END`,
    replace: (e, p, r) => sql`REGEXP_REPLACE(${e}, ${raw(literal(p))}, ${raw(literal(r))})`,
    classes: POSIX_CLASSES,
    // RE2 has no backreferences.
    collapseRepeats: (e) => collapseSeparators(d, e),
    sample: (percent) => ({ tableSuffix: sql` TABLESAMPLE SYSTEM (${num(percent)} PERCENT)` }),
    timestampParam: (iso) => iso,
    schemaQuery: (t, max) => {
      const dataset = qualified(ident)({ catalog: t.catalog, name: t.schema ?? "" });
      return sql`SELECT column_name AS name, data_type AS type, is_nullable AS nullable FROM ${dataset}.INFORMATION_SCHEMA.COLUMNS WHERE table_name = ${param(t.name)} ORDER BY ordinal_position LIMIT ${num(max)}`;
    },
  };
  return d;
}

function databricks(): DialectSql {
  const ident = quoteWith("`");
  const literal = literalWith(true);
  const d: DialectSql = {
    name: "databricks",
    exactDistinct: false,
    ident,
    table: qualified(ident),
    // The Statement Execution API binds named parameter markers.
    placeholder: (i) => `:p${i}`,
    literal,
    toText: (e) => sql`CAST(${e} AS STRING)`,
    toDouble: (e) => sql`TRY_CAST(${e} AS DOUBLE)`,
    length: (e) => sql`char_length(${e})`,
    mean: (e) => sql`AVG(${e})`,
    distinct: (e) => sql`approx_count_distinct(${e})`,
    quantiles: {
      kind: "aggregate",
      exprs: (e, points) =>
        points.map((_, i) => sql`percentile_approx(${e}, array(${raw(points.join(", "))}))[${num(i)}]`),
    },
    matches: (e, p) => sql`CASE WHEN ${e} RLIKE ${raw(literal(p))} THEN 1 ELSE 0 END`,
    replace: (e, p, r) => sql`regexp_replace(${e}, ${raw(literal(p))}, ${raw(literal(r))})`,
    // Java regular expressions have no POSIX bracket classes.
    classes: ASCII_CLASSES,
    collapseRepeats: (e) => d.replace(e, "(.)\\1+", "$1"),
    sample: (percent, seed) => ({ tableSuffix: sql` TABLESAMPLE (${num(percent)} PERCENT) REPEATABLE (${num(seed)})` }),
    timestampParam: (iso) => iso,
    schemaQuery: (t, max) => {
      const infoSchema = t.catalog
        ? sql`${ident(t.catalog)}.information_schema.columns`
        : sql`information_schema.columns`;
      return sql`SELECT column_name AS name, full_data_type AS type, is_nullable AS nullable FROM ${infoSchema} WHERE table_schema = ${param(t.schema ?? "default")} AND table_name = ${param(t.name)} ORDER BY ordinal_position LIMIT ${num(max)}`;
    },
  };
  return d;
}

function redshift(): DialectSql {
  const ident = quoteWith('"');
  const literal = literalWith(true);
  const d: DialectSql = {
    name: "redshift",
    exactDistinct: false,
    ident,
    table: qualified(ident),
    // The Redshift Data API binds named parameters.
    placeholder: (i) => `:p${i}`,
    literal,
    toText: (e) => sql`CAST(${e} AS VARCHAR)`,
    toDouble: (e) => sql`CAST(${e} AS DOUBLE PRECISION)`,
    length: (e) => sql`LEN(${e})`,
    // AVG of an integer column is an integer in Redshift.
    mean: (e) => sql`AVG(CAST(${e} AS DOUBLE PRECISION))`,
    distinct: (e) => sql`APPROXIMATE COUNT(DISTINCT ${e})`,
    quantiles: {
      kind: "aggregate",
      exprs: (e, points) => points.map((p) => sql`APPROXIMATE PERCENTILE_DISC(${num(p)}) WITHIN GROUP (ORDER BY ${e})`),
    },
    matches: (e, p) => sql`CASE WHEN ${e} ~ ${raw(literal(p))} THEN 1 ELSE 0 END`,
    replace: (e, p, r) => sql`REGEXP_REPLACE(${e}, ${raw(literal(p))}, ${raw(literal(r))})`,
    classes: POSIX_CLASSES,
    collapseRepeats: (e) => collapseSeparators(d, e),
    sample: (percent) => ({ where: sql`RANDOM() < ${num(percent / 100)}` }),
    timestampParam: (iso) => iso,
    schemaQuery: (t, max) =>
      sql`SELECT column_name AS name, data_type AS type, is_nullable AS nullable FROM information_schema.columns WHERE table_schema = ${param(t.schema ?? "public")} AND table_name = ${param(t.name)} ORDER BY ordinal_position LIMIT ${num(max)}`,
  };
  return d;
}

const FACTORIES: Record<Dialect, () => DialectSql> = { postgres, mysql, snowflake, bigquery, databricks, redshift };

/** The SQL of a dialect. */
export function dialectSql(name: Dialect): DialectSql {
  return FACTORIES[name]();
}

export { num as numberLiteral, SqlText };
