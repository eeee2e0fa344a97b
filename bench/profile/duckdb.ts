/**
 * The peer: DuckDB (@duckdb/node-api, in this process) profiling the same files with SUMMARIZE,
 * and, untimed, the exact reference values the accuracy cross-check compares both engines with.
 */
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";
import { QUANTILE_POINTS } from "../../src/contracts/profile";
import { TOP_REPORTED } from "../../src/scan/profiler/attribute-stats";
import { MAX_PATTERN_LENGTH } from "../../src/scan/profiler/patterns";

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

  /** The columns DuckDB reads from the file, with the types it gives them (for ourMetrics). */
  async describe(path: string, kind: FileKind): Promise<DescribedColumn[]> {
    const described = await rows(this.connection, `DESCRIBE SELECT * FROM ${scan(path, kind)}`);
    return described.map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
  }

  /**
   * The peer of equal work: in one query, per column, the metrics our profile reports without the
   * investigator (ourMetricsSql), one row fully materialized; `only` one group of them. Returns the row count.
   */
  async ourMetrics(path: string, kind: FileKind, columns: DescribedColumn[], only?: MetricGroup): Promise<number> {
    const [row] = await rows(this.connection, ourMetricsSql(scan(path, kind), columns, only));
    return Number(row!.row_count);
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

export interface DescribedColumn {
  name: string;
  type: string;
}

const NUMERIC_TYPE =
  /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL)/;

/**
 * What a SQL author would write for the metrics of an AssetProfile (src/scan/profile.ts) of `from`,
 * leaving out the investigator's breakdown and `step` (no SQL aggregate gives a value grid):
 * - every column: count, nulls, approx_count_distinct, min, max, approx_top_k of TOP_REPORTED values;
 * - numeric: mean, sample stddev, approx_quantile at QUANTILE_POINTS, negatives (a pattern's sign);
 * - text: empties, mean length, values castable to each type we infer (integer, number, boolean,
 *   date, timestamp), and the top shapes as patterns.ts makes them (letter runs 'a'/'A', digit runs
 *   '9', cut at MAX_PATTERN_LENGTH);
 * - boolean: trues; whole rows: duplicates, as count(*) − distinct row hashes (ours is a 64-bit hash set too).
 * DuckDB's CSV sniffer types the columns as it reads, the work our type inference does per value.
 */
export function ourMetricsSql(from: string, columns: DescribedColumn[], only?: MetricGroup): string {
  const selects = ourMetricsSelects(columns)
    .filter(({ group }) => only === undefined || group === only)
    .map(({ sql }) => sql);
  return `SELECT count(*) AS row_count, ${selects.join(", ")} FROM ${from}`;
}

/** The parts of ourMetricsSql, for a breakdown of where DuckDB's time goes. */
export const METRIC_GROUPS = [
  "counts and moments",
  "quantiles",
  "top values",
  "type casts",
  "patterns",
  "duplicate rows",
] as const;
export type MetricGroup = (typeof METRIC_GROUPS)[number];

function ourMetricsSelects(columns: DescribedColumn[]): Array<{ group: MetricGroup; sql: string }> {
  const selects: Array<{ group: MetricGroup; sql: string }> = [];
  const add = (group: MetricGroup, ...sql: string[]) => {
    for (const one of sql) selects.push({ group, sql: one });
  };
  const points = `[${QUANTILE_POINTS.join(", ")}]`;
  columns.forEach(({ name, type }, k) => {
    const c = quoteIdent(name);
    add(
      "counts and moments",
      `count(${c}) AS c${k}_count`,
      `approx_count_distinct(${c}) AS c${k}_distinct`,
      `min(${c}) AS c${k}_min`,
      `max(${c}) AS c${k}_max`,
    );
    add("top values", `approx_top_k(${c}, ${TOP_REPORTED}) AS c${k}_top`);
    if (NUMERIC_TYPE.test(type)) {
      add("counts and moments", `avg(${c}) AS c${k}_mean`, `stddev_samp(${c}) AS c${k}_stddev`);
      add("quantiles", `approx_quantile(${c}, ${points}) AS c${k}_quantiles`);
      add("patterns", `count_if(${c} < 0) AS c${k}_negative`);
    } else if (type === "VARCHAR") {
      const shape = `left(regexp_replace(regexp_replace(regexp_replace(${c}, '\\p{Ll}+', 'a', 'g'), '\\p{Lu}+', 'A', 'g'), '\\d+', '9', 'g'), ${MAX_PATTERN_LENGTH})`;
      add("counts and moments", `count_if(trim(${c}) = '') AS c${k}_empties`, `avg(length(${c})) AS c${k}_mean_length`);
      add(
        "type casts",
        ...["BIGINT", "DOUBLE", "BOOLEAN", "DATE", "TIMESTAMP"].map(
          (cast) => `count_if(TRY_CAST(${c} AS ${cast}) IS NOT NULL) AS c${k}_${cast.toLowerCase()}`,
        ),
      );
      add("patterns", `approx_top_k(${shape}, ${TOP_REPORTED}) AS c${k}_patterns`);
    } else if (type === "BOOLEAN") {
      add("counts and moments", `count_if(${c}) AS c${k}_trues`);
    }
  });
  add(
    "duplicate rows",
    `count(*) - count(DISTINCT hash(${columns.map(({ name }) => quoteIdent(name)).join(", ")})) AS duplicate_rows`,
  );
  return selects;
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
