/**
 * Runs the generated SQL and maps its results to the profile contract (src/scan/profile.ts).
 * Every metric is computed by the database; only aggregates travel.
 */

import {
  type AssetProfile,
  type AttributeProfile,
  type BreakdownProfile,
  type BreakdownValue,
  OTHER_SEGMENT,
  QUANTILE_POINTS,
  type SchemaField,
  type ValueType,
} from "../../contracts/profile";
import { chunks } from "../../lib/arrays";
import { ConnectorError } from "../connectors/types";
import { isoTime } from "../profiler/attribute-stats";
import {
  MAX_BREAKDOWN_ATTRIBUTES,
  MAX_BREAKDOWN_NUMERIC,
  MAX_BREAKDOWN_TARGETS,
  MAX_BREAKDOWN_VALUES,
} from "../profiler/breakdown";
import { classifyText, ParsedText, T_DATE, T_TIMESTAMP } from "../profiler/value-types";
import { type DialectSql, dialectSql, valueTypeOf } from "./dialects";
import {
  alias,
  breakdownQuery,
  type ColumnPlan,
  FREQUENCY_CHUNK,
  filtersOf,
  frequencyQuery,
  numberOfText,
  type ProfileColumn,
  planColumns,
  type RowFilter,
  renderFor,
  SCALAR_CHUNK,
  type SqlProfileOptions,
  scalarQuery,
  sourceOf,
  type TextTypeClass,
  TOP_K,
  textNumberQuery,
  textTimeQuery,
  WINDOW_CHUNK,
  windowQuantileQuery,
} from "./generator";
import { identifierProblem, tableRefProblems, valueProblem } from "./identifiers";
import { type Dialect, type SqlRunner, type TableRef, tableLabel } from "./runner";
import { type SqlText, sql } from "./sql-text";

/** Most attributes a schema load reads (spec 4.3). */
export const MAX_SCHEMA_ATTRIBUTES = 2000;

type Row = Record<string, unknown>;

/** Where a schema is read from: the catalog, or the data (a zero-row query's result metadata). */
export interface SchemaSource {
  /** The tenant's use_information_schema. */
  useInformationSchema: boolean;
}

/**
 * The table's columns (name, type, nullable): from information_schema when the tenant says so,
 * else from the data itself — the metadata of `SELECT * FROM t WHERE 1 = 0`, which reads no rows
 * and needs no catalog privileges (nullable is then unknown, reported true). not_found when the
 * table has no columns or does not exist.
 */
export async function loadSchema(runner: SqlRunner, table: TableRef, source: SchemaSource): Promise<SchemaField[]> {
  assertHoldable(runner.dialect, table);
  if (!source.useInformationSchema) return schemaFromData(runner, table);
  const d = dialectSql(runner.dialect);
  const q = renderFor(d, d.schemaQuery(table, MAX_SCHEMA_ATTRIBUTES));
  const rows = await runner.query<Row>(q.sql, q.params);
  if (rows.length === 0) throw new ConnectorError(`Table ${tableLabel(table)} not found`, "not_found");
  return rows.map((r) => ({
    name: String(field(r, "name")),
    type: String(field(r, "type")),
    nullable: String(field(r, "nullable")).toUpperCase() === "YES",
  }));
}

async function schemaFromData(runner: SqlRunner, table: TableRef): Promise<SchemaField[]> {
  const d = dialectSql(runner.dialect);
  const q = renderFor(d, sql`SELECT * FROM ${d.table(table)} WHERE 1 = 0`);
  const columns = await runner.columns(q.sql, q.params);
  if (columns.length === 0) throw new ConnectorError(`Table ${tableLabel(table)} not found`, "not_found");
  return columns.slice(0, MAX_SCHEMA_ATTRIBUTES).map((c) => ({ name: c.name, type: c.type, nullable: true }));
}

/** A result field, whatever case the database gave its name (Snowflake upper-cases). */
function field(row: Row, name: string): unknown {
  return name in row ? row[name] : row[name.toUpperCase()];
}

/**
 * Refuses, before any SQL is sent, a name or value the database cannot hold (identifiers.ts): the
 * API refuses them when they are saved, but an asset saved before that rule, or a scan's own
 * `table`, could still carry one. Its job fails at once with the reason, never retried.
 */
function assertHoldable(dialect: Dialect, table: TableRef, options: SqlProfileOptions = {}): void {
  const problems = tableRefProblems(table, dialect).map((p) => `the ${p.part} name ${p.message}`);
  const names = [...(options.id_attributes ?? []), options.timestamp_attribute, ...Object.keys(options.filter ?? {})];
  for (const name of [...names, ...Object.keys(options.segments ?? {})]) {
    const message = name === undefined ? undefined : identifierProblem(name, dialect);
    if (message) problems.push(`the attribute name ${JSON.stringify(name)} ${message}`);
  }
  for (const values of [...Object.values(options.filter ?? {}), ...Object.values(options.segments ?? {})]) {
    for (const value of values) {
      const message = valueProblem(value, dialect);
      if (message) problems.push(`a filter or segment value ${message}`);
    }
  }
  if (problems.length > 0) throw new ConnectorError(problems.join("; "), "invalid");
}

function validate(options: SqlProfileOptions): void {
  const { sample_fraction: fraction, limit } = options;
  if (fraction !== undefined && !(Number.isFinite(fraction) && fraction >= 1 && fraction <= 100)) {
    throw new ConnectorError("sample_fraction must be a percentage from 1 to 100", "invalid");
  }
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    throw new ConnectorError("limit must be a positive integer", "invalid");
  }
  if (options.delta_only && options.last_max_timestamp && !options.timestamp_attribute) {
    throw new ConnectorError("delta_only needs a timestamp_attribute", "invalid");
  }
  if (options.last_max_timestamp !== undefined && Number.isNaN(Date.parse(options.last_max_timestamp))) {
    throw new ConnectorError("last_max_timestamp must be an ISO 8601 timestamp", "invalid");
  }
}

/**
 * Profiles a table by SQL pushdown: the asset-level metrics, every column's metrics, and the
 * same again per segment value when `segments` is set.
 */
export async function profileTable(
  runner: SqlRunner,
  table: TableRef,
  columns: readonly ProfileColumn[],
  options: SqlProfileOptions = {},
): Promise<AssetProfile> {
  validate(options);
  assertHoldable(runner.dialect, table, options);
  const d = dialectSql(runner.dialect);
  const plan = planColumns(columns);
  const filters = filtersOf(options.filter);
  const profile: AssetProfile = await profileRows(runner, d, table, plan, options, filters);
  if (options.breakdown) {
    const breakdown = await breakdownOf(runner, d, sourceOf(d, table, options, filters), plan, profile);
    if (breakdown.length) profile.breakdown = breakdown;
  }
  const segments: NonNullable<AssetProfile["segments"]> = [];
  for (const [attribute, values] of Object.entries(options.segments ?? {})) {
    for (const value of values) {
      const segment = await profileRows(runner, d, table, plan, options, [...filters, { attribute, values: [value] }]);
      segments.push({ attribute, value: value === null ? "null" : String(value), profile: segment });
    }
    const rest = await profileRows(runner, d, table, plan, options, [...filters, { attribute, values, none: true }]);
    segments.push({ attribute, value: OTHER_SEGMENT, profile: rest });
  }
  if (segments.length) profile.segments = segments;
  return profile;
}

/** The text type classes a value of an inferred type may match (textTyping's "matching"). */
const FITTING_CLASSES: Partial<Record<ValueType, readonly TextTypeClass[]>> = {
  integer: ["numeric"],
  number: ["numeric"],
  date: ["date", "timestamp"],
  timestamp: ["date", "timestamp"],
  boolean: ["boolean"],
};

/**
 * The investigator's breakdown (as scan/profiler/breakdown.ts collects it from files), read with
 * one more query once the profile says which columns have few values (candidates: 2 to
 * MAX_BREAKDOWN_VALUES distinct, at most MAX_BREAKDOWN_ATTRIBUTES) and which have something to
 * break down: missing values, text values not of the type the column reads as, or numbers (at
 * most MAX_BREAKDOWN_TARGETS and MAX_BREAKDOWN_NUMERIC). Nothing is asked when either side is empty.
 */
async function breakdownOf(
  runner: SqlRunner,
  d: DialectSql,
  source: SqlText,
  plan: ColumnPlan[],
  profile: AssetProfile,
): Promise<BreakdownProfile[]> {
  const attribute = (c: ColumnPlan) => profile.attributes[plan.indexOf(c)]!;
  const candidates = plan
    .filter((c) => c.kind !== "number" && attribute(c).distinct >= 2 && attribute(c).distinct <= MAX_BREAKDOWN_VALUES)
    .slice(0, MAX_BREAKDOWN_ATTRIBUTES);
  const missing = plan.filter((c) => attribute(c).nulls + attribute(c).empties > 0).slice(0, MAX_BREAKDOWN_TARGETS);
  const typed = plan
    .filter((c) => c.kind === "text" && attribute(c).type_mismatches > 0)
    .flatMap((column) => {
      const fits = FITTING_CLASSES[attribute(column).inferred_type];
      return fits ? [{ column, fits }] : [];
    })
    .slice(0, MAX_BREAKDOWN_TARGETS);
  const numeric = plan.filter((c) => c.kind === "integer" || c.kind === "number").slice(0, MAX_BREAKDOWN_NUMERIC);
  if (candidates.length === 0 || missing.length + typed.length + numeric.length === 0) return [];
  const byColumn = new Map<number, BreakdownProfile>();
  const rows = await run(runner, d, breakdownQuery(d, source, candidates, { missing, typed, numeric }));
  for (const row of rows) {
    const index = toNumber(field(row, alias.column)) ?? -1;
    const candidate = plan.find((c) => c.index === index);
    if (!candidate) continue;
    let entry = byColumn.get(index);
    if (!entry) {
      entry = { attribute: candidate.name, rows: 0, missing: {}, values: [] };
      byColumn.set(index, entry);
    }
    const total = entry;
    const value: BreakdownValue = {
      value: String(field(row, alias.value)),
      rows: toNumber(field(row, alias.count)) ?? 0,
      missing: {},
    };
    missing.forEach((t, j) => {
      const m = toNumber(field(row, alias.breakdownMissing(j))) ?? 0;
      if (m > 0 && t.name !== candidate.name) {
        value.missing[t.name] = m;
        total.missing[t.name] = (total.missing[t.name] ?? 0) + m;
      }
    });
    typed.forEach(({ column }, j) => {
      const m = toNumber(field(row, alias.breakdownMismatched(j))) ?? 0;
      if (m > 0 && column.name !== candidate.name) {
        value.mismatched = { ...value.mismatched, [column.name]: m };
        total.mismatched = { ...total.mismatched, [column.name]: (total.mismatched?.[column.name] ?? 0) + m };
      }
    });
    numeric.forEach((t, j) => {
      const count = toNumber(field(row, alias.breakdownCount(j))) ?? 0;
      const mean = toNumber(field(row, alias.breakdownMean(j)));
      const sd = toNumber(field(row, alias.breakdownStddev(j))) ?? 0;
      if (count > 0 && mean !== undefined && t.name !== candidate.name) {
        value.numeric = { ...value.numeric, [t.name]: { count, mean, variance: sd * sd } };
      }
    });
    total.rows += value.rows;
    total.values.push(value);
  }
  return [...byColumn.values()]
    .filter((b) => b.values.length >= 2)
    .sort((a, b) => (a.attribute < b.attribute ? -1 : a.attribute > b.attribute ? 1 : 0));
}

async function run(runner: SqlRunner, d: DialectSql, text: SqlText): Promise<Row[]> {
  const q = renderFor(d, text);
  return runner.query<Row>(q.sql, q.params);
}

async function profileRows(
  runner: SqlRunner,
  d: DialectSql,
  table: TableRef,
  plan: ColumnPlan[],
  options: SqlProfileOptions,
  filters: RowFilter[],
): Promise<Omit<AssetProfile, "segments">> {
  const source = sourceOf(d, table, options, filters);
  // Row metrics ride with the first chunk; a table without columns still gets its row count.
  const scalarChunks = plan.length ? chunks(plan, SCALAR_CHUNK) : [[]];
  const scalar: Row = {};
  for (const [n, chunk] of scalarChunks.entries()) {
    const [row] = await run(runner, d, scalarQuery(d, source, chunk, options, n === 0, plan));
    Object.assign(scalar, row);
  }
  const rowCount = toNumber(field(scalar, alias.rowCount)) ?? 0;

  const windowRow: Row = {};
  const textNumbers: Row = {};
  const textTimes: Row = {};
  const frequencies = new Map<number, { values: Row[]; patterns: Row[] }>();
  if (rowCount > 0) {
    // Text columns read as numbers get their numbers' metrics, as a CSV file's columns do.
    const numericText = plan.filter((c) => c.kind === "text" && isNumberType(typingOf(c, scalar).inferred));
    for (const chunk of chunks(numericText, SCALAR_CHUNK)) {
      const [row] = await run(runner, d, textNumberQuery(d, source, chunk));
      Object.assign(textNumbers, row);
    }
    // Text columns read as dates or timestamps get their times' range, as a CSV file's columns do.
    const timedText = plan.filter((c) => c.kind === "text" && isTimeType(typingOf(c, scalar).inferred));
    for (const chunk of chunks(timedText, SCALAR_CHUNK)) {
      const [row] = await run(runner, d, textTimeQuery(d, source, chunk));
      Object.assign(textTimes, row);
    }
    if (d.quantiles.kind === "window") {
      const numeric = plan.filter((c) => c.kind === "integer" || c.kind === "number");
      for (const chunk of chunks(numeric, WINDOW_CHUNK)) {
        const [row] = await run(runner, d, windowQuantileQuery(d, source, chunk));
        Object.assign(windowRow, row);
      }
      for (const chunk of chunks(numericText, WINDOW_CHUNK)) {
        const [row] = await run(
          runner,
          d,
          windowQuantileQuery(d, source, chunk, (c) => numberOfText(d, d.ident(c.name))),
        );
        Object.assign(windowRow, row);
      }
    }
    for (const chunk of chunks(plan, FREQUENCY_CHUNK)) {
      for (const row of await run(runner, d, frequencyQuery(d, source, chunk))) {
        const index = toNumber(field(row, alias.column)) ?? -1;
        const entry = frequencies.get(index) ?? { values: [], patterns: [] };
        (toNumber(field(row, alias.kind)) === 0 ? entry.values : entry.patterns).push(row);
        frequencies.set(index, entry);
      }
    }
  }

  const attributes = plan.map((c) =>
    attributeOf(
      c,
      rowCount,
      scalar,
      { textNumbers, textTimes },
      windowRow,
      frequencies.get(c.index) ?? { values: [], patterns: [] },
      d.exactDistinct,
    ),
  );
  const result: Omit<AssetProfile, "segments"> = {
    row_count: rowCount,
    schema: plan.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })),
    attributes,
    sampled: (options.sample_fraction ?? 100) < 100 || (options.limit !== undefined && rowCount >= options.limit),
  };
  if (options.timestamp_attribute) {
    const fresh = field(scalar, alias.freshness);
    if (fresh !== null && fresh !== undefined) result.freshness = isoTimestamp(fresh);
  }
  if (options.id_attributes?.length) {
    result.duplicate_count = rowCount - (toNumber(field(scalar, alias.idGroups)) ?? 0);
  }
  const distinctRows = toNumber(field(scalar, alias.distinctRows));
  if (distinctRows !== undefined) result.duplicate_rows = rowCount - distinctRows;
  return result;
}

function attributeOf(
  c: ColumnPlan,
  rowCount: number,
  scalar: Row,
  text: { textNumbers: Row; textTimes: Row },
  windowRow: Row,
  freq: { values: Row[]; patterns: Row[] },
  exactDistinct: boolean,
): AttributeProfile {
  const i = c.index;
  const nonNull = toNumber(field(scalar, alias.nonNull(i))) ?? 0;
  const empties = c.kind === "text" ? (toNumber(field(scalar, alias.empties(i))) ?? 0) : 0;
  const typing = typingOf(c, scalar);
  const a: AttributeProfile = {
    name: c.name,
    inferred_type: typing.inferred,
    declared_type: c.type,
    count: rowCount,
    nulls: rowCount - nonNull,
    empties,
    distinct: toNumber(field(scalar, alias.distinct(i))) ?? 0,
    distinct_exact: exactDistinct,
    top_values: mergeTop(freq.values).map(({ key, count }) => ({ value: key, count })),
    type_counts: typing.counts,
    type_mismatches: typing.mismatches,
    patterns: mergeTop(freq.patterns).map(({ key, count }) => ({ pattern: key, share: nonNull ? count / nonNull : 0 })),
  };
  // A text column read as numbers has its numbers' range and moments, as a CSV file's column.
  const textAsNumbers = c.kind === "text" && isNumberType(typing.inferred);
  // And one read as times has its times' range, as ISO text (isoTime), as a CSV file's column.
  const textAsTimes = c.kind === "text" && isTimeType(typing.inferred);
  const metrics = textAsNumbers ? text.textNumbers : textAsTimes ? text.textTimes : scalar;
  const bound = textAsNumbers
    ? (v: unknown) => toNumber(v) ?? String(v)
    : textAsTimes
      ? (v: unknown) => isoOfTimeText(String(v), typing.inferred === "date")
      : (v: unknown) => boundOf(c, v);
  const min = field(metrics, alias.min(i));
  const max = field(metrics, alias.max(i));
  if (min !== null && min !== undefined) a.min = bound(min);
  if (max !== null && max !== undefined) a.max = bound(max);
  if (c.kind === "integer" || c.kind === "number" || textAsNumbers) {
    const mean = toNumber(field(metrics, alias.mean(i)));
    const stddev = toNumber(field(metrics, alias.stddev(i)));
    if (mean !== undefined) a.mean = mean;
    if (stddev !== undefined) a.stddev = stddev;
    const quantiles = quantilesOf(i, metrics, windowRow);
    if (quantiles) a.quantiles = quantiles;
  }
  if (c.kind === "text" && typing.inferred === "string") {
    const length = toNumber(field(scalar, alias.meanLength(i)));
    if (length !== undefined) a.mean_length = length;
  }
  return a;
}

const isNumberType = (t: ValueType) => t === "integer" || t === "number";
const isTimeType = (t: ValueType) => t === "date" || t === "timestamp";

/** A date or timestamp text as the file profiler reports it (isoTime of its parse); the text itself if it is none. */
function isoOfTimeText(text: string, dateOnly: boolean): string {
  const parsed = new ParsedText();
  const t = classifyText(text, parsed);
  return t === T_DATE || t === T_TIMESTAMP ? isoTime(parsed.value[0]!, dateOnly) : text;
}

/**
 * A column's inferred type, type counts and mismatches. Text is typed by its values (textTyping);
 * a typed column is its declared type, except that the whole values of a floating or decimal
 * column count as integer values, as the file profiler and the Spark driver count them.
 */
function typingOf(
  c: ColumnPlan,
  scalar: Row,
): { inferred: ValueType; counts: Partial<Record<ValueType, number>>; mismatches: number } {
  const i = c.index;
  const nonNull = toNumber(field(scalar, alias.nonNull(i))) ?? 0;
  if (c.kind === "text") return textTyping(scalar, i, nonNull - (toNumber(field(scalar, alias.empties(i))) ?? 0));
  const declared = valueTypeOf(c.kind);
  const counts: Partial<Record<ValueType, number>> = {};
  const whole = c.kind === "number" ? (toNumber(field(scalar, alias.integral(i))) ?? 0) : 0;
  if (whole > 0) counts.integer = whole;
  if (nonNull - whole > 0) counts[declared] = nonNull - whole;
  return { inferred: declared, counts, mismatches: 0 };
}

/**
 * Value types of a text column from the regex counts. A column whose values are mostly
 * (> 50 %) numbers, dates or booleans is inferred as that type, as a file profiler would, and
 * its other values are the type mismatches; otherwise it is a string column without mismatches.
 * Blank texts (the empties) are of no type, as the file profiler and the Spark driver count them:
 * `typed` is the non-null values less the blanks.
 */
function textTyping(scalar: Row, i: number, typed: number) {
  const n = (t: Parameters<typeof alias.textType>[1]) => toNumber(field(scalar, alias.textType(i, t))) ?? 0;
  const integer = n("integer");
  const numeric = Math.max(n("numeric"), integer);
  const date = n("date");
  const timestamp = n("timestamp");
  const boolean = n("boolean");
  const counts: Partial<Record<ValueType, number>> = {
    integer,
    number: numeric - integer,
    boolean,
    date,
    timestamp,
    string: typed - numeric - date - timestamp - boolean,
  };
  for (const key of Object.keys(counts) as ValueType[]) if (!counts[key]) delete counts[key];
  let inferred: ValueType = "string";
  let matching = typed;
  if (numeric * 2 > typed) [inferred, matching] = [numeric > integer ? "number" : "integer", numeric];
  else if ((date + timestamp) * 2 > typed) [inferred, matching] = [timestamp ? "timestamp" : "date", date + timestamp];
  else if (boolean * 2 > typed) [inferred, matching] = ["boolean", boolean];
  return { inferred, counts, mismatches: typed - matching };
}

function quantilesOf(i: number, scalar: Row, windowRow: Row): number[] | undefined {
  const direct = QUANTILE_POINTS.map((_, j) => toNumber(field(scalar, alias.quantile(i, j))));
  if (direct.every((q) => q !== undefined)) return direct as number[];
  const n = toNumber(field(windowRow, alias.windowCount(i)));
  if (!n) return undefined;
  // PERCENTILE_CONT: linear interpolation between the values at ranks ⌊p(n−1)⌋ and ⌈p(n−1)⌉.
  return QUANTILE_POINTS.map((p, j) => {
    const low = toNumber(field(windowRow, alias.windowLow(i, j))) ?? Number.NaN;
    const high = toNumber(field(windowRow, alias.windowHigh(i, j))) ?? Number.NaN;
    const position = p * (n - 1);
    return low + (high - low) * (position - Math.floor(position));
  });
}

/** Top rows of one kind, merged by value (long shapes cut to one prefix may repeat), most frequent first. */
function mergeTop(rows: Row[]): Array<{ key: string; count: number }> {
  const counts = new Map<string, number>();
  for (const r of rows) {
    const key = String(field(r, alias.value) ?? "");
    counts.set(key, (counts.get(key) ?? 0) + (toNumber(field(r, alias.count)) ?? 0));
  }
  return [...counts]
    .map(([key, count]) => ({ key, count }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, TOP_K);
}

/** A driver value as a number: drivers return big integers and decimals as strings. */
export function toNumber(v: unknown): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === "number") return v;
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  const n = Number(v);
  return Number.isNaN(n) ? undefined : n;
}

function isoTimestamp(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  const parsed = new Date(String(v));
  return Number.isNaN(parsed.getTime()) ? String(v) : parsed.toISOString();
}

/** min/max in the contract's form: numbers, ISO dates and timestamps, strings. */
function boundOf(c: ColumnPlan, v: unknown): number | string {
  switch (c.kind) {
    case "integer":
    case "number":
      return toNumber(v) ?? String(v);
    case "date":
      return v instanceof Date ? v.toISOString().slice(0, 10) : String(v);
    case "timestamp":
      return isoTimestamp(v);
    default:
      return String(v);
  }
}
