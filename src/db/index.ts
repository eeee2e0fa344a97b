import {
  createTableRelationsHelpers,
  type ExtractTablesWithRelations,
  extractTablesRelationalConfig,
  type RelationalSchemaConfig,
} from "drizzle-orm";
import { DrizzleD1Database, SQLiteD1Session } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import * as schema from "./schema";

type Schema = typeof schema;

/**
 * What drizzle's `drizzle(d1, { schema })` derives from the schema on every call (the relational
 * config of every table), derived once per isolate: building it was a large part of the CPU of a
 * request, every request builds a Db (over its metered binding), and the schema never changes.
 */
let relational: RelationalSchemaConfig<ExtractTablesWithRelations<Schema>> | undefined;
const dialect = new SQLiteAsyncDialect();

/**
 * The databases built so far, by binding: building one sets up a query builder per table (a
 * measurable part of a scan's CPU, which builds one in the queue consumer and one in the
 * AssetMonitor), and a database holds no state of its own beyond its binding. A request's metered
 * binding is new each time, so it gets its own.
 */
const built = new WeakMap<D1Database, Db>();

/** The drizzle database over the D1 binding (what `drizzle(d1, { schema })` builds), once per binding. */
export function createDb(d1: D1Database): Db {
  let db = built.get(d1);
  if (!db) {
    db = buildDb(d1);
    built.set(d1, db);
  }
  return db;
}

function buildDb(d1: D1Database) {
  if (!relational) {
    const config = extractTablesRelationalConfig(schema, createTableRelationsHelpers);
    relational = { fullSchema: schema, schema: config.tables, tableNamesMap: config.tableNamesMap } as never;
  }
  const session = new SQLiteD1Session(d1, dialect, relational, {});
  const db = new DrizzleD1Database<Schema>("async", dialect, session as never, relational as never);
  return Object.assign(db, { $client: d1 });
}

export type Db = ReturnType<typeof buildDb>;
export { schema };
