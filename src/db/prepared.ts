/**
 * Queries built once per database: `preparedOnce(db, key, () => db.select()…prepare())` builds the
 * drizzle query (its SQL text, its row mapping) the first time a key is asked of a database, with
 * `sql.placeholder()` for what varies, and answers the same prepared query after; the caller runs
 * it with `.all(values)` / `.get(values)` / `.execute(values)`.
 *
 * A database is one per binding (createDb), and the request database is one per isolate over the
 * request-scoped binding (src/db/request-d1.ts), so a route's query is built once per isolate and
 * run on each request's own session. The key names the query's shape: a query with optional
 * parts takes one key per combination.
 */
import { fillPlaceholders } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type Binder, inlineValues, Placeholders } from "../lib/sql";
import type { Db } from "./index";

const built = new WeakMap<Db, Map<string, unknown>>();

export function preparedOnce<Q>(db: Db, key: string, build: () => Q): Q {
  let queries = built.get(db);
  if (!queries) {
    queries = new Map();
    built.set(db, queries);
  }
  let query = queries.get(key) as Q | undefined;
  if (query === undefined) {
    query = build();
    queries.set(key, query);
  }
  return query;
}

/** What preparedShape prepares: a drizzle query builder. */
export interface Preparable {
  prepare(): unknown;
}

/** A query prepared once, and the values of one call of it. */
export interface BoundQuery<Q extends Preparable> {
  query: ReturnType<Q["prepare"]>;
  values: Record<string, unknown>;
}

/**
 * A query whose text depends on which values it takes, not on the values: `build(bind)` writes it
 * against placeholders (src/lib/sql.ts, Placeholders), and it is prepared once per `kind` and
 * names bound (the variants of its optional parts), then run with this call's values.
 * undefined when `build` answers that nothing can match.
 */
export function preparedShape<Q extends Preparable>(
  db: Db,
  kind: string,
  build: (bind: Placeholders) => Q | undefined,
): BoundQuery<Q> | undefined {
  const bind = new Placeholders(kind);
  const builder = build(bind);
  if (builder === undefined) return undefined;
  const query = preparedOnce(db, bind.key, () => builder.prepare()) as ReturnType<Q["prepare"]>;
  return { query, values: bind.values };
}

/** A query written against a Binder (the same text for every value of what it binds); undefined when nothing can match. */
export interface QueryBuild<Q> {
  /** Names the query among others; with the names it binds, the key it is prepared under. */
  kind: string;
  build: (db: Db, bind: Binder) => Q | undefined;
}

/** A read usable in both ways: a batch item (db.batch) with its SQL text (toSQL), or prepared. */
export type ReadQuery = BatchItem<"sqlite"> & Preparable & { toSQL(): { sql: string; params: unknown[] } };

/** The queries built now with their values inlined (for db.batch), leaving out those that match nothing. */
export function builtNow<Q>(db: Db, builds: readonly QueryBuild<Q>[]): Q[] {
  return builds.map((b) => b.build(db, inlineValues)).filter((q): q is Q => q !== undefined);
}

/** The queries prepared once per shape, with this call's values (for batchPrepared), leaving out those that match nothing. */
export function preparedEach<Q extends Preparable>(db: Db, builds: readonly QueryBuild<Q>[]): BoundQuery<Q>[] {
  return builds
    .map((b) => preparedShape(db, b.kind, (bind) => b.build(db, bind)))
    .filter((q): q is BoundQuery<Q> => q !== undefined);
}

/** The parts of drizzle's prepared queries batchPrepared uses (public in drizzle's SQLitePreparedQuery). */
interface PreparedQuery {
  getQuery(): { sql: string; params: unknown[] };
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
}

/**
 * Runs prepared queries, each with its values, in one D1 batch (one round trip), answering each
 * one's rows as `db.batch` does for query builders (which cannot fill placeholders).
 */
export async function batchPrepared(db: Db, calls: readonly { query: unknown; values: Record<string, unknown> }[]) {
  const client = db.$client;
  const statements = calls.map(({ query, values }) => {
    const { sql, params } = (query as PreparedQuery).getQuery();
    return client.prepare(sql).bind(...fillPlaceholders(params, values));
  });
  const results = await client.batch(statements);
  return results.map((result, i) => (calls[i]!.query as PreparedQuery).mapResult(result, true));
}
