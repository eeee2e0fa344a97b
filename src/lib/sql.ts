import { inArray, type Placeholder, type SQL, sql } from "drizzle-orm";
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

/**
 * How a query takes the values of its conditions: inlined as it is built (`inlineValues`), or as
 * placeholders of a query prepared once (`Placeholders`). A query written against a Binder has one
 * SQL text per set of names it binds, whatever the values.
 */
export interface Binder {
  /** A scalar value, named `name` among the query's values. */
  value<T extends string | number>(name: string, value: T): T | Placeholder;
  /** `column IN (values)`; `ints` when the values are integer ids. */
  list(column: SQLiteColumn, name: string, values: readonly (number | string)[], ints?: boolean): SQL;
  /** Names a choice in the query's text that no bound value shows (the table it reads). */
  variant(name: string): void;
}

/** Integers are inlined (checked as such), so long id lists never reach D1's 100 bound parameters. */
export function intList(column: SQLiteColumn, ids: readonly number[]): SQL {
  for (const id of ids) if (!Number.isSafeInteger(id)) throw new Error(`not an integer id: ${id}`);
  return sql`${column} in (${sql.raw(ids.join(","))})`;
}

/** Values in the query as it is built: a query built per call. */
export const inlineValues: Binder = {
  value: (_name, value) => value,
  list: (column, _name, values, ints) => (ints ? intList(column, values as number[]) : inArray(column, [...values])),
  variant: () => {},
};

/**
 * Placeholders for a query prepared once: the values bound are collected in `values`, and `key`
 * names the query's SQL text (its kind and every use of a name, in order), the key to prepare it under.
 */
export class Placeholders implements Binder {
  readonly values: Record<string, unknown> = {};
  readonly #names: string[] = [];

  constructor(readonly kind: string) {}

  get key(): string {
    return `${this.kind}(${this.#names.join(",")})`;
  }

  variant(name: string) {
    this.#names.push(`[${name}]`);
  }

  value<T extends string | number>(name: string, value: T): Placeholder {
    this.#bind(name, value);
    return sql.placeholder(name);
  }

  list(column: SQLiteColumn, name: string, values: readonly (number | string)[]): SQL {
    this.#bind(name, JSON.stringify(values));
    return inJsonPlaceholder(column, name);
  }

  #bind(name: string, value: unknown) {
    // Every use is in the key (a name used once or three times is another text).
    this.#names.push(name);
    // A name used twice in one query (a search pattern) must stand for one value.
    if (name in this.values && this.values[name] !== value) throw new Error(`placeholder ${name} bound to two values`);
    this.values[name] = value;
  }
}
