/**
 * bench/detection: the real data, cut into batches with DuckDB. Each table is a list of columns
 * (with the kind that says which corruptions apply) and a list of batches in time order, every
 * value already the text it will have in the CSV ("" for a missing value).
 *
 * - flights (vega-datasets flights-3m.parquet, US flights Jan–Jun 2001): one batch per calendar
 *   day, a deterministic sample of FLIGHT_BATCH_ROWS rows of that day (ORDER BY hash of the row),
 *   in time order; days with fewer rows are left out (only 2001-07-01, 6 rows).
 * - birdstrikes (vega-datasets birdstrikes.csv, 10,000 strikes 1990–2002): one batch per calendar
 *   year, every row of the year, in date order.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { type Batch, BIRD_COLUMNS, BIRD_SWAPS, FLIGHT_COLUMNS, FLIGHT_SWAPS, type Table } from "./tables";

export type { Batch, ColumnKind, ColumnSpec, Table } from "./tables";
export { toCsv } from "./tables";

const FLIGHT_BATCH_ROWS = 10_000;

/** The data directory of the installed vega-datasets package. */
function vegaData(): string {
  const require = createRequire(import.meta.url);
  // The package exports only its build/ entry; data/ sits next to build/.
  return join(dirname(require.resolve("vega-datasets")), "..", "data");
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Runs `sql` and groups its rows (all VARCHAR, `batch` first) into batches, in order. */
async function readBatches(sql: string, width: number): Promise<Batch[]> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(sql);
    const batches: Batch[] = [];
    let current: Batch | undefined;
    for (const row of reader.getRows()) {
      const key = String(row[0]);
      if (current?.key !== key) {
        current = { key, rows: [] };
        batches.push(current);
      }
      const values = new Array<string>(width);
      for (let i = 0; i < width; i++) values[i] = row[i + 1] === null ? "" : String(row[i + 1]);
      current.rows.push(values);
    }
    return batches;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The flights table: one batch per full day. */
export async function loadFlights(): Promise<Table> {
  const file = join(vegaData(), "flights-3m.parquet");
  const cols = "date, delay, distance, origin, destination";
  const sql = `
    WITH f AS (SELECT *, date::DATE AS day FROM read_parquet(${literal(file)})),
         sampled AS (
           SELECT * FROM f
           WHERE day IN (SELECT day FROM f GROUP BY day HAVING count(*) >= ${FLIGHT_BATCH_ROWS})
           QUALIFY row_number() OVER (PARTITION BY day ORDER BY hash(${cols}), ${cols}) <= ${FLIGHT_BATCH_ROWS})
    SELECT strftime(day, '%Y-%m-%d') AS batch, strftime(date, '%Y-%m-%dT%H:%M:%S') AS date,
           delay::VARCHAR, distance::VARCHAR, origin, destination
    FROM sampled ORDER BY day, date, hash(${cols})`;
  return {
    name: "flights",
    columns: FLIGHT_COLUMNS,
    swapPairs: FLIGHT_SWAPS,
    batches: await readBatches(sql, FLIGHT_COLUMNS.length),
  };
}

/** The birdstrikes table: one batch per year. */
export async function loadBirdstrikes(): Promise<Table> {
  const file = join(vegaData(), "birdstrikes.csv");
  const selects = BIRD_COLUMNS.map((c) =>
    c.kind === "timestamp" ? `strftime(${quote(c.source)}, '%Y-%m-%d')` : `${quote(c.source)}::VARCHAR`,
  );
  const date = quote("Flight Date");
  const sql = `
    SELECT year(${date})::VARCHAR AS batch, ${selects.join(", ")}
    FROM read_csv(${literal(file)}, header = true)
    ORDER BY year(${date}), ${date}, hash(COLUMNS(*))`;
  const columns = BIRD_COLUMNS.map(({ source: _, ...spec }) => spec);
  return {
    name: "birdstrikes",
    columns,
    swapPairs: BIRD_SWAPS,
    batches: await readBatches(sql, columns.length),
  };
}
