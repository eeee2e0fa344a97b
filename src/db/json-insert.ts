import { getTableColumns, is, SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteInsertValue, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Db } from "./index";

/** A column computed in SQL for each row, from the row's own values (`field` reads one of them by key). */
export type DerivedColumn = (field: (key: string) => SQL) => SQL;

/**
 * What JSON.stringify escapes that SQLite's JSON might not give back as D1 binds it: a NUL, half a
 * UTF-16 surrogate pair (not after an escaped backslash: that is the text "\\u…").
 */
const UNSAFE_IN_JSON = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/i;

/**
 * The rows `db.insert(table).values(rows)` writes, in that order, as one statement with one bound
 * parameter: `INSERT … SELECT … FROM json_each(?)`. A multi-row INSERT binds a parameter per value
 * (at most 100 a statement on D1, so a few rows each), and drizzle builds each of them; here the
 * rows go as one JSON array of their driver values, built once. Row triggers fire per row, and ids
 * are given in array order, as for the INSERTs. `derived` columns are SQL computed from the row's
 * values (including keys that are no column, e.g. to find a row another statement inserted);
 * `when`, a condition on which every row is written, or none.
 *
 * Values go through the column's mapping as drizzle's do (JSON columns as their text, booleans as
 * 0/1), so the stored values are the same: D1 receives bound parameters as JSON too. A string with
 * a NUL or a lone surrogate, which JSON would carry escaped, makes it fall back to one INSERT per row.
 */
export function insertJsonRows<T extends SQLiteTable>(
  db: Db,
  table: T,
  rows: readonly Record<string, unknown>[],
  options: {
    derived?: Partial<Record<keyof T["$inferInsert"] & string, DerivedColumn>>;
    onConflictDoNothing?: boolean;
    /** Rows are written only where this holds (e.g. the caller's access, checked in the same batch). */
    when?: SQL | undefined;
  } = {},
): BatchItem<"sqlite">[] {
  if (rows.length === 0) return [];
  const derived = (options.derived ?? {}) as Record<string, DerivedColumn | undefined>;
  const columns = insertableColumns(table);
  const keys: string[] = [];
  const positions = new Map<string, number>();
  const field = (key: string): SQL => {
    let i = positions.get(key);
    if (i === undefined) {
      i = keys.length;
      keys.push(key);
      positions.set(key, i);
    }
    return sql.raw(`r.value ->> ${i}`);
  };
  const selected = columns.map(([key]) => derived[key]?.(field) ?? field(key));
  const encoders = new Map(columns);
  const json = JSON.stringify(rows.map((row) => keys.map((key) => driverValue(row[key], encoders.get(key)))));
  if (UNSAFE_IN_JSON.test(json)) return rows.map((row) => rowInsert(db, table, row, derived, options));
  // WHERE true: SQLite's upsert after a SELECT needs one, to parse.
  const where = options.when ?? sql`true`;
  const insert = db
    .insert(table)
    .select(sql`select ${sql.join(selected, sql`, `)} from json_each(${json}) r where ${where} order by r.key`);
  return [options.onConflictDoNothing ? insert.onConflictDoNothing() : insert];
}

/** The columns drizzle's INSERT writes, in the table's order: every column but generated ones. */
function insertableColumns(table: SQLiteTable): [string, SQLiteColumn][] {
  return Object.entries(getTableColumns(table) as Record<string, SQLiteColumn>).filter(
    // shouldDisableInsert is internal to drizzle.
    ([, column]) => !(column as unknown as { shouldDisableInsert(): boolean }).shouldDisableInsert(),
  );
}

/** The value drizzle would bind for a column (its default when absent), or the raw value of a key that is no column. */
function driverValue(value: unknown, column: SQLiteColumn | undefined): unknown {
  if (!column) return value ?? null;
  let v = value;
  if (v === undefined) {
    if (column.default !== null && column.default !== undefined) v = column.default;
    else if (column.defaultFn !== undefined) v = column.defaultFn();
    else if (column.onUpdateFn !== undefined) v = column.onUpdateFn();
    else return null;
  }
  if (v === null) return null;
  if (is(v, SQL)) throw new Error(`insertJsonRows: ${column.name} is SQL; make it a derived column`);
  const mapped = column.mapToDriverValue(v);
  if (mapped !== null && typeof mapped !== "string" && typeof mapped !== "number") {
    throw new Error(`insertJsonRows: ${column.name} maps to a ${typeof mapped}, which JSON does not carry`);
  }
  return mapped;
}

/** The same row as one plain INSERT (derived columns with the row's values bound). */
function rowInsert(
  db: Db,
  table: SQLiteTable,
  row: Record<string, unknown>,
  derived: Record<string, DerivedColumn | undefined>,
  options: { onConflictDoNothing?: boolean; when?: SQL | undefined },
): BatchItem<"sqlite"> {
  const columns = getTableColumns(table);
  const values: Record<string, unknown> = {};
  for (const key of Object.keys(columns)) {
    const d = derived[key];
    if (d) values[key] = d((k) => sql`${row[k]}`);
    else if (key in row) values[key] = row[key];
  }
  const insert = options.when
    ? insertWhere(db, table, values as never, options.when)
    : db.insert(table).values(values as never);
  return options.onConflictDoNothing ? insert.onConflictDoNothing() : insert;
}

/**
 * `db.insert(table).values(row)` that writes only where `condition` holds (INSERT … SELECT … WHERE):
 * for a batch whose other statements decide whether it may, e.g. the caller's access checked in
 * the same batch (none: always). Values map as drizzle's (a column left out takes its default);
 * a value may be SQL, e.g. a column of the row `from` (a table, or a join) gives. Add onConflict…
 * and returning as to any insert.
 */
export function insertWhere<T extends SQLiteTable>(
  db: Db,
  table: T,
  row: SQLiteInsertValue<T>,
  condition: SQL | undefined,
  from?: SQL,
) {
  const values = insertableColumns(table).map(([key, column]) => {
    const value = (row as Record<string, unknown>)[key];
    if (is(value, SQL)) return value;
    const mapped = driverValue(value, column);
    return mapped === null ? sql`null` : sql`${mapped}`;
  });
  // WHERE, even a true one: SQLite's upsert after a SELECT needs one, to parse.
  const source = from ? sql` from ${from}` : sql``;
  return db.insert(table).select(sql`select ${sql.join(values, sql`, `)}${source} where ${condition ?? sql`true`}`);
}

/**
 * Runs `write` and then `after` (statements that belong with it, e.g. its audit row) as one batch:
 * one round trip and one transaction. Answers what `write` returned.
 */
export async function writeWith<T extends BatchItem<"sqlite">>(
  db: Db,
  write: T,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<Awaited<T>> {
  if (after.length === 0) return (await write) as Awaited<T>;
  const [result] = await db.batch([write, ...after]);
  return result as Awaited<T>;
}
