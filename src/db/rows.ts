/**
 * The rows of a prepared drizzle select, mapped exactly as drizzle maps them, by a mapper built
 * once per prepared query.
 *
 * drizzle's `all()` maps each row with `mapResultRow`, which works out again for every column of
 * every row what the column is (`is(field, Column)`, `is(field, SQL)`: prototype walks), where its
 * value goes and whether the joined table's object is all null: for a page of 20 assets with their
 * project and connection that was the largest part of a read's own JavaScript (issue 40, point 3;
 * bench/api:in-process). All of it is fixed by the query's fields, so it is worked out once here,
 * and each row only reads, decodes and places its values.
 *
 * Same answer as `query.all(values)`: the same decoders (`mapFromDriverValue`), the same paths,
 * and a joined table's object is null under drizzle's own rule (its first column null, all its
 * columns of that one table, the table not an inner-joined one). A query whose fields this does not
 * know (nested deeper than one object, a custom mapper: drizzle's relational queries) is left to
 * drizzle's `all()`. test/db/rows.test.ts compares both on the queries that use this.
 */
import { Column, getTableName, is, SQL, Subquery } from "drizzle-orm";

/** What is used of a prepared select (D1PreparedQuery): `fields` and `joinsNotNullableMap` are drizzle's own. */
interface PreparedSelect {
  all(values?: Record<string, unknown>): Promise<unknown>;
  values(values?: Record<string, unknown>): Promise<unknown>;
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

interface DrizzleInternals {
  fields?: { path: string[]; field: unknown }[];
  joinsNotNullableMap?: Record<string, boolean>;
  customResultMapper?: unknown;
}

type RowMapper = (row: unknown[]) => Record<string, unknown>;

const mappers = new WeakMap<object, RowMapper | null>();

/** `query.all(values)`, its rows mapped by the query's mapper built once (see above). */
export async function allRows<Q extends PreparedSelect>(
  query: Q,
  values: Record<string, unknown>,
): Promise<Awaited<ReturnType<Q["all"]>>> {
  let mapper = mappers.get(query);
  if (mapper === undefined) {
    mapper = rowMapper(query as unknown as DrizzleInternals);
    mappers.set(query, mapper);
  }
  if (mapper === null) return (await query.all(values)) as Awaited<ReturnType<Q["all"]>>;
  const rows = (await query.values(values)) as unknown[][];
  return rows.map(mapper) as Awaited<ReturnType<Q["all"]>>;
}

/** The decoder drizzle's mapResultRow uses for a selected field. */
function decoderOf(field: unknown): Decoder {
  // An SQL's decoder is drizzle-internal (typed so).
  const decoder = (s: SQL) => (s as unknown as { decoder: Decoder }).decoder;
  if (is(field, Column)) return field;
  if (is(field, SQL)) return decoder(field);
  if (is(field, Subquery)) return decoder((field as unknown as { _: { sql: SQL } })._.sql);
  return decoder((field as SQL.Aliased).sql);
}

/** The mapper of a query's rows; null when drizzle's own mapping is to be used. */
function rowMapper(query: DrizzleInternals): RowMapper | null {
  const { fields, joinsNotNullableMap } = query;
  if (!Array.isArray(fields) || query.customResultMapper) return null;
  const decoders: Decoder[] = [];
  const outer: string[] = [];
  // The key inside its object of a two-level path; undefined for a top-level value.
  const inner: (string | undefined)[] = [];
  // Per object of two-level paths: its first column's key and table, and whether all its columns are of that table.
  const objects = new Map<string, { key: string; table: string; oneTable: boolean }>();
  for (const { path, field } of fields) {
    if (path.length < 1 || path.length > 2) return null;
    decoders.push(decoderOf(field));
    outer.push(path[0]!);
    inner.push(path[1]);
    if (joinsNotNullableMap && path.length === 2 && is(field, Column)) {
      const table = getTableName(field.table);
      const seen = objects.get(path[0]!);
      if (!seen) objects.set(path[0]!, { key: path[1]!, table, oneTable: true });
      else if (seen.table !== table) seen.oneTable = false;
    }
  }
  // The objects drizzle answers as null when their first column is: of one table, not inner-joined.
  const nullable = [...objects]
    .filter(([, o]) => o.oneTable && !joinsNotNullableMap![o.table])
    .map(([name, o]) => [name, o.key] as const);
  const count = decoders.length;
  return (row) => {
    const result: Record<string, unknown> = {};
    for (let i = 0; i < count; i++) {
      const raw = row[i];
      const value = raw === null ? null : decoders[i]!.mapFromDriverValue(raw);
      const key = inner[i];
      if (key === undefined) {
        result[outer[i]!] = value;
      } else {
        const name = outer[i]!;
        let node = result[name] as Record<string, unknown> | undefined;
        if (node === undefined) {
          node = {};
          result[name] = node;
        }
        node[key] = value;
      }
    }
    for (const [name, key] of nullable) {
      if ((result[name] as Record<string, unknown>)[key] === null) result[name] = null;
    }
    return result;
  };
}
