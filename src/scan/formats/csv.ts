/**
 * Streaming CSV (RFC 4180) parser. Fed decoded text in chunks that may split anything (a quoted
 * field, a CRLF), it scans char codes and slices each field once; text is only concatenated when a
 * field spans chunks or holds a doubled quote.
 *
 * Conventions: the first record names the attributes; an empty unquoted field is null (missing), a
 * quoted "" is the empty string; blank lines are skipped; a record shorter than the header reads the
 * missing fields as null, a longer one drops (and counts) the extra fields.
 */
import { ConnectorError } from "../connectors/types";
import { MAX_VALUE_CHARS, recordError, tooManyAttributes, valueTooLong } from "./limits";
import { RowBuffer, type TextParser, where } from "./text";
import type { AttributeLimit, Row } from "./types";

const QUOTE = 34;
const LF = 10;
const CR = 13;

// Parser states between characters.
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
/** A quote inside a quoted field ended the last chunk: a doubled quote or the closing one. */
const QUOTE_PENDING = 3;
/** After the closing quote of a field. */
const AFTER_QUOTE = 4;
/** After a CR that ended a record: a following LF belongs to it. */
const AFTER_CR = 5;

/** The separator a user may name: one character, or "\t" written out / "tab". */
export function csvSeparator(separator: string | undefined): string {
  if (separator === undefined || separator === "") return ",";
  if (separator === "\\t" || separator.toLowerCase() === "tab") return "\t";
  if (separator.length !== 1 || separator === '"' || separator === "\n" || separator === "\r") {
    throw new ConnectorError(
      `CSV separator must be one character other than a quote or newline, got ${JSON.stringify(separator)}`,
      "invalid",
    );
  }
  return separator;
}

/** Header names made usable as attribute names: empty ones become "column_<n>", repeats get "_2", "_3"… */
export function uniqueNames(raw: ReadonlyArray<string | null>): string[] {
  const used = new Set<string>();
  const names: string[] = [];
  for (let k = 0; k < raw.length; k++) {
    const given = raw[k] ?? "";
    const base = given.trim() === "" ? `column_${k + 1}` : given;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    names.push(name);
  }
  return names;
}

export interface CsvParserOptions {
  separator?: string;
  columns?: string[];
  /** For error messages. */
  name?: string;
  /** The scan's attribute names: a header taking them past their limit is an input error. */
  attributes?: AttributeLimit;
  /** Collect records as columns (takeColumns) instead of row objects (take). */
  columnar?: boolean;
}

/** A streaming CSV parser producing one object per record, keyed by the (made unique) header names. */
export class CsvParser extends RowBuffer implements TextParser {
  /** Attribute names from the header record, once it has been read. */
  header: string[] | null = null;
  raggedRows = 0;
  droppedFields = 0;

  private readonly sep: number;
  private readonly sepText: string;
  private readonly columns?: string[];
  private readonly name?: string;
  private readonly attributes?: AttributeLimit;
  /** Output names and, per name, the index of its field in a record (-1: absent from the file). */
  private names: string[] = [];
  private indexes: number[] = [];
  private width = 0;

  private fields: Array<string | null> = [];
  private readonly columnar: boolean;
  /**
   * Columnar mode once the header is read (and each output name has its own field): fields go
   * straight into their column, not through `fields`. Per field index, its column (-1: none).
   */
  private direct = false;
  private fieldColumns: Int32Array = new Int32Array(0);
  /** Direct mode: fields of the current record so far, and whether its first one was null. */
  private fieldCount = 0;
  private firstNull = false;
  /** Direct mode: some output name is not in the header (its column is null in every record). */
  private absentColumns = false;
  /** Columnar mode: the values of the records not yet taken, one array per output name. */
  private columnValues: Array<Array<string | null>> = [];
  private columnRows = 0;
  private state = FIELD_START;
  /** Text of the current field carried from earlier chunks or before a doubled quote. */
  private pending = "";
  private quoted = false;
  /** Records completed so far, the header included (for error messages). */
  private records = 0;

  constructor(options: CsvParserOptions = {}) {
    super();
    this.sepText = csvSeparator(options.separator);
    this.sep = this.sepText.charCodeAt(0);
    this.columns = options.columns;
    this.name = options.name;
    this.attributes = options.attributes;
    this.columnar = options.columnar ?? false;
  }

  /** Columnar mode: records completed and not yet taken. */
  override get buffered(): number {
    return this.columnar ? this.columnRows : this.rows.length;
  }

  /** Columnar mode: hands over the completed records as columns (one array per name) and starts anew. */
  takeColumns(): { names: string[]; columns: Array<Array<string | null>>; length: number } {
    const rows = this.columnRows;
    const batch = { names: this.names, columns: this.columnValues, length: rows };
    // Direct mode: the fields of a record not ended yet move on with the next batch.
    this.columnValues = this.columnValues.map((column) => (column.length > rows ? column.splice(rows) : []));
    this.columnRows = 0;
    return batch;
  }

  push(s: string): void {
    const n = s.length;
    const sep = this.sep;
    const sepText = this.sepText;
    let state = this.state;
    let i = 0;
    let start = 0;
    // The next separator, line feed and carriage return at or after i (n when none): an unquoted
    // field ends at the first of them, each found by indexOf (a native scan) rather than a loop over
    // the field's characters, and looked up again only once passed (a quoted field may pass them).
    let nextLF = -1;
    let nextCR = -1;
    let nextSep = -1;
    while (i < n) {
      if (state === UNQUOTED) {
        if (nextLF < i) {
          nextLF = s.indexOf("\n", i);
          if (nextLF < 0) nextLF = n;
        }
        if (nextCR < i) {
          nextCR = s.indexOf("\r", i);
          if (nextCR < 0) nextCR = n;
        }
        if (nextSep < i) {
          nextSep = s.indexOf(sepText, i);
          if (nextSep < 0) nextSep = n;
        }
        const j = Math.min(nextSep, nextLF, nextCR);
        if (j === n) {
          this.carry(s, start, n);
          break;
        }
        const c = s.charCodeAt(j);
        this.endField(this.pending.length > 0 ? this.pending + s.slice(start, j) : s.slice(start, j));
        i = j + 1;
        state = this.afterTerminator(c);
      } else if (state === FIELD_START) {
        if (s.charCodeAt(i) === QUOTE) {
          this.quoted = true;
          state = QUOTED;
          i++;
        } else {
          state = UNQUOTED;
        }
        start = i;
      } else if (state === QUOTED) {
        const q = s.indexOf('"', i);
        if (q < 0) {
          this.carry(s, start, n);
          break;
        }
        if (q + 1 === n) {
          this.carry(s, start, q);
          state = QUOTE_PENDING;
          break;
        }
        if (s.charCodeAt(q + 1) === QUOTE) {
          // A doubled quote: keep one.
          this.carry(s, start, q + 1);
          i = q + 2;
          start = i;
        } else {
          this.carry(s, start, q);
          state = AFTER_QUOTE;
          i = q + 1;
        }
      } else if (state === QUOTE_PENDING) {
        if (s.charCodeAt(i) === QUOTE) {
          this.pending += '"';
          i++;
          start = i;
          state = QUOTED;
        } else {
          state = AFTER_QUOTE;
        }
      } else if (state === AFTER_QUOTE) {
        const c = s.charCodeAt(i);
        if (c === sep || c === LF || c === CR) {
          this.endField(this.pending);
          i++;
          state = this.afterTerminator(c);
        } else {
          // Text after a closing quote (`"a"b`) is not RFC 4180; keep it, as most readers do.
          state = UNQUOTED;
          start = i;
        }
      } else {
        // AFTER_CR
        if (s.charCodeAt(i) === LF) i++;
        state = FIELD_START;
      }
    }
    this.state = state;
  }

  finish(): void {
    switch (this.state) {
      case QUOTED:
        throw new ConnectorError(
          `${where(this.name)}CSV record ${this.records + 1}: a quoted field is not closed before the end of the file`,
          "invalid",
        );
      case UNQUOTED:
      case QUOTE_PENDING:
      case AFTER_QUOTE:
        this.endField(this.pending);
        this.endRecord();
        break;
      case FIELD_START:
        // The file ended right after a separator: that record's last field is empty.
        if (this.fieldsSoFar() > 0) {
          this.endField("");
          this.endRecord();
        }
        break;
    }
    this.state = AFTER_CR;
    if (this.header === null) this.setHeader([]);
  }

  private carry(s: string, start: number, end: number): void {
    if (end > start) this.pending += s.slice(start, end);
    // Also bounds the memory a broken file (an unbalanced quote) takes.
    if (this.pending.length > MAX_VALUE_CHARS) throw this.valueTooLong(" (wrong separator or an unbalanced quote?)");
  }

  /** The input error of a field longer than MAX_VALUE_CHARS, naming its record and attribute. */
  private valueTooLong(hint = ""): ConnectorError {
    const k = this.fieldsSoFar();
    const attribute = this.header?.[k] ?? `column_${k + 1}`;
    const record = this.header === null ? "CSV header" : `CSV record ${this.records + 1}`;
    return recordError(this.name, record, `${valueTooLong(attribute)}${hint}`);
  }

  /** Fields of the current record so far. */
  private fieldsSoFar(): number {
    return this.direct ? this.fieldCount : this.fields.length;
  }

  private endField(text: string): void {
    if (text.length > MAX_VALUE_CHARS) throw this.valueTooLong();
    const value = text.length === 0 && !this.quoted ? null : text;
    this.pending = "";
    this.quoted = false;
    if (!this.direct) {
      this.fields.push(value);
      return;
    }
    const f = this.fieldCount++;
    if (f === 0) this.firstNull = value === null;
    if (f < this.width) {
      const k = this.fieldColumns[f]!;
      if (k >= 0) this.columnValues[k]!.push(value);
    }
  }

  /** endRecord in direct mode: the record's fields are in their columns already. */
  private endDirectRecord(): void {
    const count = this.fieldCount;
    this.fieldCount = 0;
    if (count === 1 && this.firstNull) {
      // A blank line: not a record; its one (null) field is taken back.
      const k = this.width > 0 ? this.fieldColumns[0]! : -1;
      if (k >= 0) this.columnValues[k]!.pop();
      return;
    }
    this.records++;
    const width = this.width;
    if (count !== width) {
      this.raggedRows++;
      if (count > width) this.droppedFields += count - width;
    }
    const rows = this.columnRows + 1;
    if (count < width || this.absentColumns) {
      for (const column of this.columnValues) if (column.length < rows) column.push(null);
    }
    this.columnRows = rows;
  }

  private afterTerminator(c: number): number {
    if (c === this.sep) return FIELD_START;
    this.endRecord();
    return c === CR ? AFTER_CR : FIELD_START;
  }

  private endRecord(): void {
    if (this.direct) {
      this.endDirectRecord();
      return;
    }
    const fields = this.fields;
    // A blank line: not a record.
    if (fields.length === 1 && fields[0] === null) {
      fields.length = 0;
      return;
    }
    this.records++;
    if (this.header === null) {
      this.fields = [];
      this.setHeader(fields);
      return;
    }
    const width = this.width;
    if (fields.length !== width) {
      this.raggedRows++;
      if (fields.length > width) this.droppedFields += fields.length - width;
    }
    const names = this.names;
    const indexes = this.indexes;
    if (this.columnar) {
      const columns = this.columnValues;
      for (let k = 0; k < names.length; k++) {
        const index = indexes[k]!;
        columns[k]!.push(index >= 0 && index < fields.length ? fields[index]! : null);
      }
      this.columnRows++;
    } else {
      const row: Row = {};
      for (let k = 0; k < names.length; k++) {
        const index = indexes[k]!;
        row[names[k]!] = index >= 0 && index < fields.length ? fields[index] : null;
      }
      this.rows.push(row);
    }
    // The fields' array is reused: its values now live in the row or the columns.
    fields.length = 0;
  }

  private setHeader(fields: Array<string | null>): void {
    const header = uniqueNames(fields);
    const attributes = this.attributes;
    if (attributes && !(this.columns ?? header).every((name) => attributes.add(name))) {
      throw recordError(this.name, "CSV header", tooManyAttributes(attributes.max));
    }
    this.header = header;
    this.width = header.length;
    this.names = this.columns ?? header;
    this.indexes = this.names.map((name) => header.indexOf(name));
    this.columnValues = this.names.map(() => []);
    if (!this.columnar) return;
    const fieldColumns = new Int32Array(header.length).fill(-1);
    let oneToOne = true;
    this.indexes.forEach((index, k) => {
      if (index < 0) this.absentColumns = true;
      else if (fieldColumns[index] !== -1) oneToOne = false;
      else fieldColumns[index] = k;
    });
    this.fieldColumns = fieldColumns;
    this.direct = oneToOne;
  }
}
