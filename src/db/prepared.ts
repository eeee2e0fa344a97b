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
