/** The SQL dialects the generator speaks: one per database family the scans push SQL down to. */
export const DIALECTS = ["postgres", "mysql", "snowflake", "bigquery", "databricks", "redshift"] as const;
export type Dialect = (typeof DIALECTS)[number];

/**
 * A connection to a database that runs SQL: what SQL pushdown needs, whatever the transport
 * (TCP driver, SQL-over-HTTP API). Rows come back as plain objects keyed by column alias.
 */
export interface SqlRunner {
  readonly dialect: Dialect;
  /** Runs one statement; `params` bind the dialect's placeholders in order. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * The columns of a statement's result as the database describes them (its result metadata), in
   * order; a statement that returns no rows (`WHERE 1 = 0`) still has them.
   */
  columns(sql: string, params?: unknown[]): Promise<ResultColumn[]>;
  /** Releases the connection; never rejects. */
  close(): Promise<void>;
}

/** A result column: its name and the database's name of its type (spelled as the database spells it). */
export interface ResultColumn {
  name: string;
  type: string;
}

/** A statement's rows and its result columns, which the SQL-over-HTTP warehouses return together. */
export interface StatementResult {
  rows: Record<string, unknown>[];
  columns: ResultColumn[];
}

/** `query` and `columns` of a runner whose one call (`execute`) returns rows and columns together. */
export function statementMethods(
  execute: (sql: string, params: unknown[]) => Promise<StatementResult>,
): Pick<SqlRunner, "query" | "columns"> {
  return {
    async query<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
      return (await execute(sql, params)).rows as T[];
    },
    async columns(sql: string, params: unknown[] = []): Promise<ResultColumn[]> {
      return (await execute(sql, params)).columns;
    },
  };
}

/** A table as the database names it: `catalog` = Snowflake database / BigQuery project / Databricks catalog. */
export interface TableRef {
  catalog?: string;
  schema?: string;
  name: string;
}

/** The table reference as text for messages (not for SQL). */
export const tableLabel = (t: TableRef): string => [t.catalog, t.schema, t.name].filter(Boolean).join(".");
