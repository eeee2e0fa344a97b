/**
 * The peer: DuckDB (@duckdb/node-api, in this process) profiling the same files with SUMMARIZE,
 * and, untimed, the exact reference values the accuracy cross-check compares both engines with.
 */
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";

export type FileKind = "csv" | "parquet";

/** One engine configuration of DuckDB: its own instance, so settings do not leak between them. */
export class DuckDb {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    /** The `threads` setting in effect. */
    readonly threads: number,
    readonly version: string,
  ) {}

  /** A DuckDB with `threads` worker threads, or DuckDB's default (all cores) when undefined. */
  static async open(threads?: number): Promise<DuckDb> {
    const instance = await DuckDBInstance.create(":memory:", threads === undefined ? {} : { threads: String(threads) });
    const connection = await instance.connect();
    // Timestamps with a zone render in UTC, like the profiler's ISO strings.
    await connection.run("SET TimeZone = 'UTC'");
    const [row] = await rows(connection, "SELECT current_setting('threads') AS threads, version() AS version");
    return new DuckDb(instance, connection, Number(row!.threads), String(row!.version));
  }

  /** SUMMARIZE of the whole file, one row per column, fully materialized. */
  async summarize(path: string, kind: FileKind): Promise<SummaryRow[]> {
    return (await rows(this.connection, `SUMMARIZE SELECT * FROM ${scan(path, kind)}`)) as unknown as SummaryRow[];
  }

  /** Exact values for the cross-check (count(DISTINCT), exact median…), in one query. */
  async exact(path: string, kind: FileKind, columns: ExactColumn[]): Promise<ExactValues> {
    const selects = ["count(*) AS row_count"];
    for (const { name, numeric } of columns) {
      const c = quoteIdent(name);
      selects.push(
        `count(*) - count(${c}) AS "${name}.nulls"`,
        `count(DISTINCT ${c}) AS "${name}.distinct"`,
        `min(${c})::VARCHAR AS "${name}.min"`,
        `max(${c})::VARCHAR AS "${name}.max"`,
      );
      if (numeric) {
        selects.push(
          `avg(${c}) AS "${name}.mean"`,
          `stddev_samp(${c}) AS "${name}.std"`,
          `quantile_disc(${c}, 0.5) AS "${name}.q50"`,
        );
      }
    }
    const [row] = await rows(this.connection, `SELECT ${selects.join(", ")} FROM ${scan(path, kind)}`);
    return row as ExactValues;
  }

  /**
   * The mid-rank of each value among the column's non-null values, (#below + #at-or-below) / 2 / n:
   * how close a reported median is to the true one, ties counted fairly.
   */
  async ranks(path: string, kind: FileKind, column: string, values: number[]): Promise<number[]> {
    if (values.length === 0) return [];
    const c = quoteIdent(column);
    const selects = values.map(
      (v, i) =>
        `(count(*) FILTER (WHERE ${c} < ${v}) + count(*) FILTER (WHERE ${c} <= ${v})) / 2.0 / count(${c}) AS r${i}`,
    );
    const [row] = await rows(this.connection, `SELECT ${selects.join(", ")} FROM ${scan(path, kind)}`);
    return values.map((_, i) => Number(row![`r${i}`]));
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

/** A SUMMARIZE row (values as DuckDB's JSON conversion gives them). */
export interface SummaryRow {
  column_name: string;
  column_type: string;
  min: string | null;
  max: string | null;
  approx_unique: number | string | null;
  avg: string | number | null;
  std: string | number | null;
  q25: string | number | null;
  q50: string | number | null;
  q75: string | number | null;
  count: number | string;
  null_percentage: number | string | null;
}

export interface ExactColumn {
  name: string;
  numeric: boolean;
}

/** `row_count` and `<column>.<metric>` → value. */
export type ExactValues = Record<string, string | number | boolean | null>;

async function rows(connection: DuckDBConnection, sql: string): Promise<Array<Record<string, unknown>>> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowObjectsJson() as Array<Record<string, unknown>>;
}

function scan(path: string, kind: FileKind): string {
  const file = `'${path.replaceAll("'", "''")}'`;
  return kind === "csv" ? `read_csv(${file})` : `read_parquet(${file})`;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
