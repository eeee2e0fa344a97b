/**
 * Limits on the records a scan profiles. A record past one is an input error (an "invalid"
 * ConnectorError naming the file, the record and the attribute): the job fails with a reason the
 * user can act on, rather than the Worker running out of stack or memory.
 */
import { ConnectorError } from "../connectors/types";
import { where } from "./text";
import type { AttributeLimit, Row } from "./types";

/** Attributes one scan profiles at most: as many as an asset's schema holds (MAX_SCHEMA_ATTRIBUTES). */
export const MAX_ATTRIBUTES = 2000;

/** Longest value, in UTF-16 code units (1 Mi: 1 MiB of ASCII); a nested JSON value counts as its JSON text. */
export const MAX_VALUE_CHARS = 1024 * 1024;

/** Deepest nesting of objects and arrays in a JSON record; the record itself is level 1. */
export const MAX_RECORD_DEPTH = 64;

const MI = 1024 * 1024;

/** An input error about one record of a file: `record` says which ("NDJSON line 3", "CSV record 7"). */
export function recordError(file: string | undefined, record: string, message: string): ConnectorError {
  return new ConnectorError(`${where(file)}${record}: ${message}`, "invalid");
}

export function valueTooLong(attribute: string): string {
  return `the value of ${JSON.stringify(attribute)} is longer than ${MAX_VALUE_CHARS / MI} Mi characters, the most one value may have`;
}

export function tooManyAttributes(max: number): string {
  return `the data has more than ${max} attributes, the most one asset may have: split it into assets of fewer attributes`;
}

function tooDeep(attribute: string): string {
  return `${JSON.stringify(attribute)} nests objects and arrays deeper than ${MAX_RECORD_DEPTH} levels, the most a record may have`;
}

/**
 * The first problem of a nested value at `depth` (its record is level 1): too deep, or too long,
 * the profiler taking it as its JSON text, of which `size` counts a lower bound (strings, names,
 * brackets). Recursion stops at the depth limit.
 */
function nestedProblem(value: object, depth: number, size: { chars: number }): "deep" | "long" | undefined {
  if (depth > MAX_RECORD_DEPTH) return "deep";
  size.chars += 2;
  const array = Array.isArray(value);
  const items: unknown[] = array ? value : Object.values(value);
  if (!array) for (const key in value) size.chars += key.length + 3;
  for (const item of items) {
    if (typeof item === "string") size.chars += item.length + 2;
    else if (typeof item === "object" && item !== null) {
      const problem = nestedProblem(item, depth + 1, size);
      if (problem) return problem;
    } else size.chars += 1;
    if (size.chars > MAX_VALUE_CHARS) return "long";
  }
  return size.chars > MAX_VALUE_CHARS ? "long" : undefined;
}

/**
 * The distinct attribute names of one scan, over all its files, with the most it may have: the
 * readers add each name they meet and refuse the record that goes past the limit.
 */
export class AttributeNames implements AttributeLimit {
  private readonly names = new Set<string>();

  constructor(readonly max: number = MAX_ATTRIBUTES) {}

  /** Adds a name; false when it is one more than the limit allows. */
  add(name: string): boolean {
    if (this.names.has(name)) return true;
    this.names.add(name);
    return this.names.size <= this.max;
  }
}

/**
 * Checks the rows of a JSON format: every value at most MAX_VALUE_CHARS long, nesting at most
 * MAX_RECORD_DEPTH, and (with `attributes`) no more distinct attributes than those allow.
 */
export class JsonRecordLimits {
  /** The keys of the last row, by position: consecutive rows mostly share them, so the set is rarely asked. */
  private order: string[] = [];

  constructor(
    private readonly file: string | undefined,
    private readonly attributes: AttributeLimit | undefined,
  ) {}

  /** Throws the input error of the row, if it has one; `record` names it for the message. */
  check(row: Row, record: () => string): void {
    const attributes = this.attributes;
    let k = 0;
    for (const key in row) {
      const value = row[key];
      if (typeof value === "string") {
        if (value.length > MAX_VALUE_CHARS) throw recordError(this.file, record(), valueTooLong(key));
      } else if (typeof value === "object" && value !== null) {
        const problem = nestedProblem(value, 2, { chars: 0 });
        if (problem) {
          throw recordError(this.file, record(), problem === "deep" ? tooDeep(key) : valueTooLong(key));
        }
      }
      if (attributes !== undefined && this.order[k] !== key) {
        this.order[k] = key;
        if (!attributes.add(key)) throw recordError(this.file, record(), tooManyAttributes(attributes.max));
      }
      k++;
    }
  }
}
