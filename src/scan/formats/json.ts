/**
 * Streaming JSON: a top-level array of objects, split into its elements by an incremental scanner
 * that tracks strings, escapes and depth, each element JSON.parsed on its own; or, when the first
 * non-space character is "{", NDJSON.
 */
import { ConnectorError } from "../connectors/types";
import { JsonRecordLimits, MAX_RECORD_DEPTH, recordError } from "./limits";
import { type JsonParserOptions, jsonKind, NdjsonParser, projectRecord } from "./ndjson";
import { MAX_CARRY_CHARS, RowBuffer, type TextParser, tooLong, where } from "./text";
import type { Row } from "./types";

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const LF = 10;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

// Where the scanner is relative to the top-level array.
const BEFORE = 0;
const INSIDE = 1;
const AFTER = 2;

/** A streaming parser of one top-level JSON array of objects. */
export class JsonArrayParser extends RowBuffer implements TextParser {
  readonly raggedRows = 0;
  readonly droppedFields = 0;
  private phase = BEFORE;
  /** Nesting inside the current element (0: between elements). */
  private depth = 0;
  private inString = false;
  /** The last chunk ended inside a string on an unpaired backslash. */
  private escaped = false;
  /** Text of the current element from earlier chunks. */
  private parts: string[] = [];
  private partsLength = 0;
  private elements = 0;
  private line = 1;
  private elementLine = 1;
  private readonly limits: JsonRecordLimits;

  constructor(private readonly options: JsonParserOptions = {}) {
    super();
    this.limits = new JsonRecordLimits(options.name, options.attributes);
  }

  push(s: string): void {
    const n = s.length;
    let i = 0;
    let start = 0;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        const q = s.indexOf('"', i);
        if (q < 0) {
          // The string goes on in the next chunk; an odd run of backslashes at the end escapes its first char.
          let k = n - 1;
          while (k >= i && s.charCodeAt(k) === BACKSLASH) k--;
          this.escaped = (n - 1 - k) % 2 === 1;
          i = n;
          break;
        }
        let k = q - 1;
        while (k >= i && s.charCodeAt(k) === BACKSLASH) k--;
        // An odd run of backslashes before the quote escapes it.
        if ((q - 1 - k) % 2 === 0) this.inString = false;
        i = q + 1;
        continue;
      }
      const c = s.charCodeAt(i);
      if (this.phase === INSIDE) {
        if (c === QUOTE) {
          this.inString = true;
        } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
          // Refused while scanning: a record 10,000 levels deep is never parsed or walked.
          if (++this.depth > MAX_RECORD_DEPTH) {
            throw recordError(
              this.options.name,
              `JSON element ${this.elements + 1} (line ${this.line})`,
              `nests objects and arrays deeper than ${MAX_RECORD_DEPTH} levels, the most a record may have`,
            );
          }
        } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
          if (this.depth > 0) {
            this.depth--;
          } else if (c === CLOSE_BRACKET) {
            this.endElement(s, start, i, true);
            this.phase = AFTER;
          } else {
            throw this.invalid(`unbalanced "}" on line ${this.line}`);
          }
        } else if (c === COMMA && this.depth === 0) {
          this.endElement(s, start, i, false);
          start = i + 1;
        } else if (c === LF) {
          this.line++;
        }
      } else if (c === LF) {
        this.line++;
      } else if (isSpace(c)) {
        // whitespace around the array
      } else if (this.phase === BEFORE && c === OPEN_BRACKET) {
        this.phase = INSIDE;
        start = i + 1;
        this.elementLine = this.line;
      } else if (this.phase === BEFORE) {
        throw this.invalid(`expected "[" on line ${this.line}`);
      } else {
        throw this.invalid(`unexpected text after the closing "]" on line ${this.line}`);
      }
      i++;
    }
    if (this.phase === INSIDE && start < n) {
      this.parts.push(start === 0 ? s : s.slice(start));
      this.partsLength += n - start;
      if (this.partsLength > MAX_CARRY_CHARS) throw tooLong(this.options.name, `JSON element ${this.elements + 1}`);
    }
  }

  finish(): void {
    if (this.phase === INSIDE) throw this.invalid("the top-level array is not closed (truncated file?)");
  }

  private endElement(s: string, start: number, end: number, closing: boolean): void {
    let text = s.slice(start, end);
    if (this.parts.length > 0) {
      text = this.parts.join("") + text;
      this.parts = [];
      this.partsLength = 0;
    }
    // The element's line: where the comma before it was, plus the line breaks before its first character.
    let line = this.elementLine;
    for (let k = 0; k < text.length && isSpace(text.charCodeAt(k)); k++) if (text.charCodeAt(k) === LF) line++;
    this.elementLine = this.line;
    if (text.trim() === "") {
      // "[]" is an empty array; anything else empty is a stray comma.
      if (closing && this.elements === 0) return;
      throw this.invalid(`element ${this.elements + 1} (line ${line}) is empty (a stray comma?)`);
    }
    this.elements++;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw this.invalid(`element ${this.elements} (line ${line}) is not valid JSON (${(error as Error).message})`);
    }
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw this.invalid(`element ${this.elements} (line ${line}): expected a JSON object, found ${jsonKind(value)}`);
    }
    const row = projectRecord(value as Record<string, unknown>, this.options.columns);
    const element = this.elements;
    this.limits.check(row, () => `JSON element ${element} (line ${line})`);
    this.rows.push(row);
  }

  private invalid(message: string): ConnectorError {
    return new ConnectorError(`${where(this.options.name)}JSON: ${message}`, "invalid");
  }
}

/** A JSON parser that decides on its first non-space character: "[" an array of objects, "{" NDJSON. */
export class JsonParser implements TextParser {
  private inner: TextParser | null = null;
  /** Leading whitespace seen before the decision, replayed so line numbers stay right. */
  private leading: string[] = [];

  constructor(private readonly options: JsonParserOptions = {}) {}

  get buffered(): number {
    return this.inner?.buffered ?? 0;
  }

  get raggedRows(): number {
    return 0;
  }

  get droppedFields(): number {
    return 0;
  }

  take(): Row[] {
    return this.inner?.take() ?? [];
  }

  push(s: string): void {
    if (this.inner) {
      this.inner.push(s);
      return;
    }
    let i = 0;
    while (i < s.length && isSpace(s.charCodeAt(i))) i++;
    if (i === s.length) {
      this.leading.push(s);
      return;
    }
    const c = s.charCodeAt(i);
    if (c === OPEN_BRACKET) {
      this.inner = new JsonArrayParser(this.options);
    } else if (c === OPEN_BRACE) {
      this.inner = new NdjsonParser(this.options);
    } else {
      throw new ConnectorError(
        `${where(this.options.name)}JSON: expected an array of objects or one object per line, found ${JSON.stringify(s.charAt(i))}`,
        "invalid",
      );
    }
    for (const text of this.leading) this.inner.push(text);
    this.leading = [];
    this.inner.push(s);
  }

  finish(): void {
    this.inner?.finish();
  }
}
