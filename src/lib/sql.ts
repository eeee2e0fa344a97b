import { type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * `column IN (values)` with the values bound as one JSON parameter, so a list of any length
 * stays within D1's 100 bound parameters per statement.
 */
export function inJsonList(column: SQLiteColumn, values: readonly (number | string)[]): SQL {
  return sql`${column} in (select value from json_each(${JSON.stringify(values)}))`;
}

/** As inJsonList, for a prepared query: the values come as JSON text in the placeholder `name`. */
export function inJsonPlaceholder(column: SQLiteColumn, name: string): SQL {
  return sql`${column} in (select value from json_each(${sql.placeholder(name)}))`;
}
