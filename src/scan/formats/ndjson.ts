/** Streaming NDJSON: one JSON object per line; blank lines are skipped; a bad line fails the scan. */
import { ConnectorError } from "../connectors/types";
import { JsonRecordLimits } from "./limits";
import { MAX_CARRY_CHARS, RowBuffer, type TextParser, tooLong, where } from "./text";
import type { AttributeLimit, Row } from "./types";

/** What a JSON value is, for error messages. */
export function jsonKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The row for a parsed record: as is, or only the requested attributes (absent ones null). */
export function projectRecord(record: Record<string, unknown>, columns: string[] | undefined): Row {
  if (!columns) return record;
  const row: Row = {};
  for (const column of columns) {
    const value = record[column];
    row[column] = value === undefined ? null : value;
  }
  return row;
}

/** True when the text has only JSON whitespace. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return false;
  }
  return true;
}

export interface JsonParserOptions {
  columns?: string[];
  /** For error messages. */
  name?: string;
  /** The scan's attribute names: more than they allow is an input error. */
  attributes?: AttributeLimit;
}

/** A streaming NDJSON parser: one row per non-blank line. */
export class NdjsonParser extends RowBuffer implements TextParser {
  readonly raggedRows = 0;
  readonly droppedFields = 0;
  /** Pieces of a line that spans chunks; joined once when its newline arrives. */
  private parts: string[] = [];
  private partsLength = 0;
  private line = 0;
  private readonly limits: JsonRecordLimits;

  constructor(private readonly options: JsonParserOptions = {}) {
    super();
    this.limits = new JsonRecordLimits(options.name, options.attributes);
  }

  push(s: string): void {
    let start = 0;
    for (;;) {
      const nl = s.indexOf("\n", start);
      if (nl < 0) {
        if (start < s.length) {
          this.parts.push(start === 0 ? s : s.slice(start));
          this.partsLength += s.length - start;
          if (this.partsLength > MAX_CARRY_CHARS) throw tooLong(this.options.name, `NDJSON line ${this.line + 1}`);
        }
        return;
      }
      let text = s.slice(start, nl);
      if (this.parts.length > 0) {
        text = this.parts.join("") + text;
        this.parts = [];
        this.partsLength = 0;
      }
      this.parseLine(text);
      start = nl + 1;
    }
  }

  finish(): void {
    if (this.parts.length > 0) {
      const text = this.parts.join("");
      this.parts = [];
      this.partsLength = 0;
      this.parseLine(text);
    }
  }

  private parseLine(text: string): void {
    this.line++;
    if (isBlank(text)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new ConnectorError(
        `${where(this.options.name)}NDJSON line ${this.line}: not valid JSON (${(error as Error).message})`,
        "invalid",
      );
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new ConnectorError(
        `${where(this.options.name)}NDJSON line ${this.line}: expected a JSON object, found ${jsonKind(value)}`,
        "invalid",
      );
    }
    const row = projectRecord(value as Record<string, unknown>, this.options.columns);
    this.limits.check(row, () => `NDJSON line ${this.line}`);
    this.rows.push(row);
  }
}
