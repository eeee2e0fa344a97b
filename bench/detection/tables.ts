/**
 * bench/detection: the tables' columns (with the kind that says which corruptions apply) and the
 * pairs that may swap, and their CSV text, apart from how data.ts reads the rows (DuckDB), so test/
 * can use them too.
 */

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

export const FLIGHT_COLUMNS: ColumnSpec[] = [
  { name: "date", kind: "timestamp" },
  { name: "delay", kind: "integer", unit: "min" },
  { name: "distance", kind: "integer", unit: "mi" },
  { name: "origin", kind: "category" },
  { name: "destination", kind: "category" },
];

export const FLIGHT_SWAPS: Array<readonly [string, string]> = [
  ["delay", "distance"],
  ["origin", "destination"],
];

/** Birdstrikes columns kept: the free-text and near-unique ones (airport, model, species) stay out. */
export const BIRD_COLUMNS: Array<ColumnSpec & { source: string }> = [
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

export const BIRD_SWAPS: Array<readonly [string, string]> = [
  ["cost_total", "speed"],
  ["phase", "damage"],
];

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
