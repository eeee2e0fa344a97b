/**
 * A file's columns as a table wants them: some of the file's columns read under other names, and
 * columns the file does not hold filled with one value for all its rows. Iceberg needs it: a
 * column is identified by its field id, not its name (a file written before a rename holds the old
 * name), a column added later is absent from older files (null, or its initial default), and an
 * identity partition's value may live in the manifest rather than in the file.
 */

import type { ColumnRecordBatch, RecordBatch, Row } from "./types";

export interface ColumnProjection {
  /** The file's columns to read (readers take them as `ReadOptions.columns`). */
  read: string[];
  /** The name each read column takes, same order. */
  names: string[];
  /** Columns the file does not hold: the same value in every row. */
  constants: Array<{ name: string; value: unknown }>;
}

/** A column batch of the file's `read` columns as the projection names them, with its constant columns. */
export function projectColumns(batch: ColumnRecordBatch, projection: ColumnProjection): ColumnRecordBatch {
  if (projection.constants.length === 0 && sameNames(batch.names, projection)) return batch;
  const at = new Map(batch.names.map((name, k) => [name, k]));
  const picked = projection.read.map((name) => at.get(name));
  const filled = projection.constants.map(({ value }) => new Array(batch.length).fill(value));
  const pick = <T>(values: ReadonlyArray<T> | undefined, absent: T) =>
    values === undefined
      ? undefined
      : [...picked.map((k) => (k === undefined ? absent : values[k]!)), ...filled.map(() => absent)];
  return {
    ...batch,
    names: [...projection.names, ...projection.constants.map((c) => c.name)],
    columns: [
      ...picked.map((k) => (k === undefined ? new Array(batch.length).fill(null) : batch.columns[k]!)),
      ...filled,
    ],
    timestamps: pick(batch.timestamps, false),
    dictionaries: pick(batch.dictionaries, undefined),
  };
}

/** A row batch of the file's `read` columns as the projection names them, with its constant columns. */
export function projectRows(batch: RecordBatch, projection: ColumnProjection): RecordBatch {
  const rows = batch.rows.map((row) => {
    const out: Row = {};
    projection.read.forEach((name, k) => {
      out[projection.names[k]!] = row[name] ?? null;
    });
    for (const { name, value } of projection.constants) out[name] = value;
    return out;
  });
  return { ...batch, rows };
}

function sameNames(names: readonly string[], projection: ColumnProjection): boolean {
  return (
    names.length === projection.read.length &&
    projection.read.every((name, k) => name === projection.names[k] && names[k] === name)
  );
}
