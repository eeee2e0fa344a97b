/**
 * Which columns of one data file make the table's current schema (Iceberg table spec, "Schema
 * Evolution" and "Column Projection"): a column is its field id, so a file written before a
 * rename holds it under its old name, and a file holding a dropped column's name under another id
 * does not hold the current column of that name. A column the file lacks is, in this order, its
 * identity partition's value from the manifest (writers may leave partition columns out of the
 * files), its initial default (format v3), or null. A file written without field ids is matched
 * through the table's name mapping (`schema.name-mapping.default`), else by name.
 */

import { ConnectorError } from "../connectors/types";
import { plainValue, timeOfDay } from "../formats/parquet";
import type { ColumnProjection } from "../formats/projection";
import type { AvroValue } from "./avro";
import type { IcebergColumn, IcebergDataFile, IcebergMetadata } from "./table";

const MS_PER_DAY = 86_400_000;

/** The projection of a data file whose top-level Parquet columns are `fileColumns`. */
export function icebergProjection(
  table: Pick<IcebergMetadata, "columns" | "nameMapping">,
  fileColumns: ReadonlyArray<{ name: string; fieldId?: number }>,
  file: Pick<IcebergDataFile, "key" | "partition" | "spec">,
): ColumnProjection {
  const withIds = fileColumns.some((c) => c.fieldId !== undefined);
  const byName = new Map(table.columns.map((c) => [c.name, c.id]));
  const idOf = (c: { name: string; fieldId?: number }) =>
    withIds ? c.fieldId : table.nameMapping ? table.nameMapping.get(c.name) : byName.get(c.name);
  const fileNameOf = new Map<number, string>();
  for (const c of fileColumns) {
    const id = idOf(c);
    if (id !== undefined && !fileNameOf.has(id)) fileNameOf.set(id, c.name);
  }
  const projection: ColumnProjection = { read: [], names: [], constants: [] };
  for (const column of table.columns) {
    const inFile = fileNameOf.get(column.id);
    if (inFile !== undefined) {
      projection.read.push(inFile);
      projection.names.push(column.name);
      continue;
    }
    const identity = file.spec.find((f) => f.sourceId === column.id && f.transform === "identity");
    const value =
      identity && identity.name in file.partition
        ? partitionValue(column, file.partition[identity.name]!, file.key)
        : column.initialDefault !== undefined
          ? defaultValue(column, file.key)
          : null;
    projection.constants.push({ name: column.name, value });
  }
  return projection;
}

/** An identity partition's value (Avro, as the manifest stores it) as the Parquet reader gives the column's values. */
function partitionValue(column: IcebergColumn, value: AvroValue, key: string): unknown {
  if (value === null) return null;
  const type = typeof column.type === "string" ? column.type : column.type.type;
  if (type === "date" && typeof value === "number") return new Date(value * MS_PER_DAY);
  if (type.startsWith("timestamp") && (typeof value === "number" || typeof value === "bigint")) {
    // Micro- (or, timestamp_ns, nano-) seconds since the epoch.
    const perMs = type.endsWith("_ns") ? 1_000_000n : 1000n;
    return new Date(Number(BigInt(value) / perMs));
  }
  if (type.startsWith("decimal") && value instanceof Uint8Array) return decimalOf(value, scaleOf(type));
  if (type === "time" && (typeof value === "number" || typeof value === "bigint")) return timeOfDay(value, "MICROS");
  if (type === "uuid" && value instanceof Uint8Array && value.length === 16) return uuidText(value);
  // Bytes (binary, fixed, uuid) as the reader gives them (base64); big longs as their decimal text.
  if (["boolean", "int", "long", "float", "double", "string", "binary"].includes(type) || type.startsWith("fixed")) {
    return plainValue(value);
  }
  throw unsupported(column, key, "its identity partition value");
}

/** A column's initial default (its JSON single-value form) as the Parquet reader gives the column's values. */
function defaultValue(column: IcebergColumn, key: string): unknown {
  const value = column.initialDefault;
  if (value === null) return null;
  const type = typeof column.type === "string" ? column.type : column.type.type;
  // A uuid's default is its text, as the reader gives a UUID-annotated column.
  if (["boolean", "int", "long", "float", "double", "string", "uuid"].includes(type)) return value;
  if (typeof value === "string") {
    if (type === "date") return new Date(Date.parse(`${value}T00:00:00Z`));
    if (type.startsWith("timestamp")) {
      // ISO 8601 with micro- or nanoseconds, "+00:00" for timestamptz: milliseconds are what a Date keeps.
      const m = /^(\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?)\d*(.*)$/.exec(value);
      if (m) return new Date(Date.parse(`${m[1]}${m[2] || "Z"}`));
    }
    if (type.startsWith("decimal")) return Number(value);
    // Times of day as the Parquet reader writes them: "HH:MM:SS", a fraction only when not zero.
    if (type === "time") return value.replace(/\.0*$/, "");
    // fixed and binary: the reader's base64 of the bytes (the default is their hex).
    if ((type === "binary" || type.startsWith("fixed")) && /^(?:[0-9a-f]{2})*$/i.test(value)) {
      return btoa(String.fromCharCode(...(value.match(/../g) ?? []).map((h) => Number.parseInt(h, 16))));
    }
  }
  throw unsupported(column, key, "its initial default");
}

function unsupported(column: IcebergColumn, file: string, what: string): ConnectorError {
  const type = typeof column.type === "string" ? column.type : column.type.type;
  return new ConnectorError(
    `the data file ${file} does not hold the column ${column.name} (${type}), and ${what} of that type cannot be read in a light scan`,
    "unsupported",
  );
}

/** 16 bytes as a uuid's text (8-4-4-4-12 lowercase hex). */
function uuidText(bytes: Uint8Array): string {
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function scaleOf(type: string): number {
  return Number(/^decimal\(\s*\d+\s*,\s*(\d+)\s*\)$/.exec(type)?.[1] ?? 0);
}

/** A decimal's unscaled two's-complement big-endian bytes, as a number (what the Parquet reader gives). */
function decimalOf(bytes: Uint8Array, scale: number): number {
  let unscaled = 0n;
  for (const b of bytes) unscaled = (unscaled << 8n) | BigInt(b);
  if (bytes.length > 0 && bytes[0]! & 0x80) unscaled -= 1n << BigInt(bytes.length * 8);
  return Number(unscaled) / 10 ** scale;
}
