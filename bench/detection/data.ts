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

/** Which corruptions make sense for a column. */
export type ColumnKind = "timestamp" | "integer" | "number" | "category" | "text";

export interface ColumnSpec {
  name: string;
  kind: ColumnKind;
  /** Unit written after a number turned into text ("12 min"). */
  unit?: string;
}

export interface Batch {
  /** The day or period, e.g. 2001-01-05. */
  key: string;
  rows: string[][];
}

export interface Table {
  name: string;
  columns: ColumnSpec[];
  /** Pairs of columns of the same kind whose values may be swapped. */
  swapPairs: Array<readonly [string, string]>;
  batches: Batch[];
}

const FLIGHT_BATCH_ROWS = 10_000;

const FLIGHT_COLUMNS: ColumnSpec[] = [
  { name: "date", kind: "timestamp" },
  { name: "delay", kind: "integer", unit: "min" },
  { name: "distance", kind: "integer", unit: "mi" },
  { name: "origin", kind: "category" },
  { name: "destination", kind: "category" },
];

/** Birdstrikes columns kept: the free-text and near-unique ones (airport, model, species) stay out. */
const BIRD_COLUMNS: Array<ColumnSpec & { source: string }> = [
  { name: "flight_date", source: "Flight Date", kind: "timestamp" },
  { name: "operator", source: "Aircraft Airline Operator", kind: "category" },
  { name: "origin_state", source: "Origin State", kind: "category" },
  { name: "phase", source: "Phase of flight", kind: "category" },
  { name: "damage", source: "Effect Amount of damage", kind: "category" },
  { name: "wildlife_size", source: "Wildlife Size", kind: "category" },
  { name: "time_of_day", source: "Time of day", kind: "category" },
  { name: "cost_total", source: "Cost Total $", kind: "integer", unit: "USD" },
  { name: "speed", source: "Speed IAS in knots", kind: "integer", unit: "kn" },
];

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
    swapPairs: [
      ["delay", "distance"],
      ["origin", "destination"],
    ],
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
    swapPairs: [
      ["cost_total", "speed"],
      ["phase", "damage"],
    ],
    batches: await readBatches(sql, columns.length),
  };
}

/** A CSV field: quoted when it holds a separator, a quote or a line break. */
function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** The CSV text of a batch: header, then one line per row. */
export function toCsv(columns: readonly ColumnSpec[], rows: readonly string[][]): string {
  const lines = [columns.map((c) => field(c.name)).join(",")];
  for (const row of rows) lines.push(row.map(field).join(","));
  return `${lines.join("\n")}\n`;
}
