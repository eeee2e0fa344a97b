/** What the database behind a connection can hold: names and values a scan would send it. */

import type { FieldProblem } from "../lib/errors";
import { DB_TYPES_WITH_DIALECT, dialectOfDbType, identifierProblem, valueProblem } from "../scan/sql/identifiers";

/** The options of an asset that name attributes or values (see AssetOptions in catalog/assets.ts). */
export interface NamingOptions {
  id_attributes?: string[] | undefined;
  timestamp_attribute?: string | undefined;
  filter?: Record<string, (string | number | boolean)[]> | undefined;
  segments?: Record<string, (string | number | boolean)[]> | undefined;
}

/** The payload's parts that name a table (and where it is): database, catalog, dataset, schema, table. */
const TABLE_PARTS = ["database", "catalog", "dataset", "schema", "table"] as const;

/**
 * The names of a payload and options that the database behind `dbType` cannot hold
 * (src/scan/sql/identifiers.ts): too long for PostgreSQL, a MySQL name ending in a space, a NUL in
 * a PostgreSQL filter value… Refused when saved, so a scan never sends them.
 */
export function namesTheDatabaseCannotHold(
  dbType: string | null,
  payload: Record<string, unknown>,
  options: NamingOptions,
  fieldOf: (part: string) => string = (part) => `payload.${part}`,
): FieldProblem[] {
  const dialect = dialectOfDbType(dbType);
  if (!dialect) return [];
  const problems: FieldProblem[] = [];
  const check = (field: string, name: unknown) => {
    const message = typeof name === "string" ? identifierProblem(name, dialect) : undefined;
    if (message) problems.push({ field, message });
  };
  for (const part of TABLE_PARTS) check(fieldOf(part), payload[part]);
  for (const [i, name] of (options.id_attributes ?? []).entries()) check(`options.id_attributes.${i}`, name);
  check("options.timestamp_attribute", options.timestamp_attribute);
  for (const kind of ["filter", "segments"] as const) {
    for (const [attribute, values] of Object.entries(options[kind] ?? {})) {
      check(`options.${kind}.${attribute}`, attribute);
      values.forEach((value, i) => {
        const message = valueProblem(value, dialect);
        if (message) problems.push({ field: `options.${kind}.${attribute}.${i}`, message });
      });
    }
  }
  return problems;
}

/**
 * The db_types whose database cannot hold these names (namesTheDatabaseCannotHold finds a
 * problem): a write conditioned in SQL on its connection's db_type being none of them holds
 * exactly when that check passes, without reading the connection first.
 */
export function dbTypesThatCannotHold(payload: Record<string, unknown>, options: NamingOptions): string[] {
  return DB_TYPES_WITH_DIALECT.filter((dbType) => namesTheDatabaseCannotHold(dbType, payload, options).length > 0);
}
