/** Attribute types guessed from a sample of values, for the schema of text formats. */
import { type SchemaField, UNKNOWN_TYPE } from "../../contracts/profile";
import type { Row } from "./types";

const INTEGER = /^[+-]?(?:0|[1-9]\d*)$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Digits with a leading zero ("007", zip codes) are identifiers, not numbers. */
const LEADING_ZERO = /^[+-]?0\d/;
const BOOLEAN = /^(?:true|false)$/i;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?$/i;

/** The type a text value reads as: integer, number, boolean, date, timestamp or string. */
export function textType(text: string): string {
  if (INTEGER.test(text)) return "integer";
  if (NUMBER.test(text) && !(LEADING_ZERO.test(text) && !text.includes("."))) return "number";
  if (BOOLEAN.test(text)) return "boolean";
  if (DATE.test(text)) return Number.isNaN(Date.parse(text)) ? "string" : "date";
  if (TIMESTAMP.test(text)) return "timestamp";
  return "string";
}

/** The type of a value as JSON or Parquet gives it; strings are read as text for dates and timestamps only. */
export function valueType(value: unknown): string {
  switch (typeof value) {
    case "number":
      return Number.isInteger(value) ? "integer" : "number";
    case "bigint":
      return "integer";
    case "boolean":
      return "boolean";
    case "string": {
      const type = textType(value);
      return type === "date" || type === "timestamp" ? type : "string";
    }
    case "object":
      if (value instanceof Date) return "timestamp";
      return Array.isArray(value) ? "array" : "object";
    default:
      return "string";
  }
}

/** The narrowest type covering both: integer+number → number, date+timestamp → timestamp, else string. */
export function widerType(a: string, b: string): string {
  if (a === b) return a;
  const pair = new Set([a, b]);
  if (pair.has("integer") && pair.has("number")) return "number";
  if (pair.has("date") && pair.has("timestamp")) return "timestamp";
  return "string";
}

/**
 * Collects attribute names (in first-seen order) and their types from sampled rows.
 * Text formats declare no nullability, so every field is nullable.
 */
export class SchemaSampler {
  private readonly types = new Map<string, string | null>();

  constructor(
    names: readonly string[] = [],
    private readonly typeOf: (value: unknown) => string = valueType,
  ) {
    for (const name of names) this.types.set(name, null);
  }

  /** Takes one row into account. */
  add(row: Row): void {
    for (const name in row) {
      const value = row[name];
      const seen = this.types.get(name);
      if (value === null || value === undefined) {
        if (seen === undefined) this.types.set(name, null);
        continue;
      }
      const type = this.typeOf(value);
      this.types.set(name, seen === null || seen === undefined ? type : widerType(seen, type));
    }
  }

  /** The fields seen; a field with no non-null value in the sample has no type yet (UNKNOWN_TYPE). */
  fields(): SchemaField[] {
    return [...this.types].map(([name, type]) => ({ name, type: type ?? UNKNOWN_TYPE, nullable: true }));
  }
}
