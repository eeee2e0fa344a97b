/** The file formats the streaming readers understand. */
export const FILE_FORMATS = ["csv", "ndjson", "json", "parquet"] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

/** The bytes of one file: streamed front to back (text formats) or read by range (Parquet). */
export interface RecordSource {
  /** For error messages, e.g. the object key. */
  name?: string;
  /** Size in bytes. */
  size: number;
  stream(): Promise<ReadableStream<Uint8Array>>;
  readRange(offset: number, length: number): Promise<Uint8Array>;
}

/** A row: attribute name → value (string/number/boolean/Date/null, or nested JSON/Parquet values as is). */
export type Row = Record<string, unknown>;

export interface RecordBatch {
  rows: Row[];
  /** Bytes consumed from the source so far (for progress). */
  bytes: number;
  /** CSV only, so far: records whose field count differed from the header's. */
  raggedRows: number;
  /** CSV only, so far: fields beyond the header's width, dropped. */
  droppedFields: number;
}

/**
 * A column's rows as indexes into a dictionary of distinct values (Parquet dictionary pages):
 * `dictionary[codes[i]]` is row i's value, -1 a null.
 */
export interface DictionaryCodes {
  codes: Int32Array;
  dictionary: ArrayLike<unknown>;
}

/** A batch of rows held column by column: `columns[k][i]` is the value of `names[k]` in row i. */
export interface ColumnRecordBatch {
  names: readonly string[];
  columns: ReadonlyArray<ArrayLike<unknown>>;
  length: number;
  /** Per column, true when its numbers are a timestamp's epoch milliseconds (NaN: an invalid instant). */
  timestamps?: readonly boolean[];
  /** Per column, when its values came from one dictionary: each row's index into it (-1 null). */
  dictionaries?: ReadonlyArray<DictionaryCodes | undefined>;
  /** Bytes consumed from the source so far (for progress). */
  bytes: number;
  raggedRows: number;
  droppedFields: number;
}

/** Distinct attribute names with a limit (limits.ts AttributeNames). */
export interface AttributeLimit {
  readonly max: number;
  /** Adds a name; false when it is one more than the limit allows. */
  add(name: string): boolean;
}

export interface ReadOptions {
  /** CSV field separator: one character, default ",". "\\t" and "tab" also mean a tab. */
  separator?: string;
  /** Rows per batch (default 1,000). */
  batchSize?: number;
  /** Only these attributes, in this order; one the file lacks reads as null. */
  columns?: string[];
  /**
   * The attribute names met so far, shared by the files of one scan: a record that takes them past
   * their limit is an input error. Unset: no limit.
   */
  attributes?: AttributeLimit;
}

export interface SchemaOptions extends ReadOptions {
  /** Records sampled to name and type the attributes of text formats (default 1,000). */
  sampleSize?: number;
}

export const DEFAULT_BATCH_SIZE = 1000;
/**
 * Values (rows × columns) a reader hands over in one batch at most: a wide table comes in batches
 * of fewer rows, so that what a batch holds while it is profiled does not grow with the width
 * (issue 40; 2,000 rows of 100 columns, what a file scan reads at ordinary widths).
 */
export const BATCH_VALUES = 200_000;

/** Rows in a batch of a table of `columns` columns: at most `rows`, at most BATCH_VALUES values, at least 16 rows. */
export function batchRowsFor(rows: number, columns: number): number {
  return Math.max(Math.min(rows, 16), Math.min(rows, Math.floor(BATCH_VALUES / Math.max(1, columns))));
}
export const DEFAULT_SAMPLE_SIZE = 1000;
