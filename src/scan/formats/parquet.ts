/**
 * Parquet through hyparquet: the footer first (one ranged read, cached), then one row group at a time,
 * only the requested columns' chunks, decoded column-wise and turned into row objects a batch at a time,
 * so memory holds one row group's columns and one batch of rows.
 */
import {
  type AsyncBuffer,
  type ColumnChunk,
  type DecodedArray,
  type FileMetaData,
  parquetMetadataAsync,
  parquetRead,
  parquetSchema,
  type SchemaElement,
  type SchemaTree,
} from "hyparquet";
import { getMaxDefinitionLevel, getMaxRepetitionLevel, getSchemaPath } from "hyparquet/src/schema.js";
import type { SchemaField } from "../../contracts/profile";
import { ConnectorError } from "../connectors/types";
import { compressors } from "./codecs";
import { MAX_RECORD_DEPTH, MAX_VALUE_CHARS, recordError, tooManyAttributes, valueTooLong } from "./limits";
import { chunkRange, isFlatTopLevel, readFlatChunk, timestampUnit } from "./parquet-flat";
import { checkChunkPages } from "./parquet-guard";
import { PlainTextScratch } from "./parquet-text";
import { where } from "./text";
import {
  batchRowsFor,
  type ColumnRecordBatch,
  DEFAULT_BATCH_SIZE,
  type DictionaryCodes,
  type ReadOptions,
  type RecordBatch,
  type RecordSource,
  type Row,
} from "./types";

/** Bytes read from the end of the file for the footer; most footers fit, hyparquet reads more if not. */
export const FOOTER_FETCH_SIZE = 64 * 1024;

/** An AsyncBuffer over a RecordSource's ranged reads, counting bytes and caching the footer read. */
class RangeBuffer implements AsyncBuffer {
  readonly byteLength: number;
  bytesRead = 0;
  /** Errors thrown by the source itself (passed on as they are, unlike decoding errors). */
  readonly sourceErrors = new WeakSet<object>();
  private cache: { start: number; bytes: Uint8Array } | null = null;

  constructor(private readonly source: RecordSource) {
    this.byteLength = source.size;
  }

  /** Reads the last `size` bytes into the cache. */
  async loadFooter(size: number): Promise<void> {
    const start = Math.max(0, this.byteLength - size);
    this.cache = { start, bytes: await this.read(start, this.byteLength) };
  }

  /**
   * hyparquet asks for the ranges of a row group's chunks at once and may stop awaiting them at the
   * first that fails: the others' failures are handled here, so none is an unhandled rejection.
   */
  slice(start: number, end = this.byteLength): Promise<ArrayBuffer> {
    const bytes = this.range(start, end);
    bytes.catch(() => {});
    return bytes;
  }

  private async range(start: number, end: number): Promise<ArrayBuffer> {
    // A corrupt footer can place a chunk anywhere: a range outside the file is the file's fault, not
    // a short read of an object that changed (which would be retried).
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= this.byteLength)) {
      throw new ConnectorError(
        `${where(this.source.name)}Parquet: its footer places data at bytes ${start}–${end} of a ${this.byteLength}-byte file`,
        "invalid",
      );
    }
    const cache = this.cache;
    if (cache && start >= cache.start && end <= cache.start + cache.bytes.byteLength) {
      return cache.bytes.slice(start - cache.start, end - cache.start).buffer as ArrayBuffer;
    }
    const bytes = await this.read(start, end);
    if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes.buffer as ArrayBuffer;
    return bytes.slice().buffer as ArrayBuffer;
  }

  private async read(start: number, end: number): Promise<Uint8Array> {
    let bytes: Uint8Array;
    try {
      bytes = await this.source.readRange(start, end - start);
    } catch (error) {
      if (typeof error === "object" && error !== null) this.sourceErrors.add(error);
      throw error;
    }
    if (bytes.byteLength !== end - start) {
      const error = new ConnectorError(
        `${where(this.source.name)}short read: ${bytes.byteLength} of ${end - start} bytes at offset ${start} (object changed during the scan?)`,
        "transient",
      );
      this.sourceErrors.add(error);
      throw error;
    }
    this.bytesRead += bytes.byteLength;
    return bytes;
  }
}

/**
 * The file as parquetRead reads nested columns from it: each of their column chunks (leaves under
 * the `nested` top-level names) is checked page by page (parquet-guard.ts) as its bytes arrive,
 * before hyparquet decodes them, within whichever range hyparquet fetches them in.
 */
function checkedFile(
  file: RangeBuffer,
  metadata: FileMetaData,
  chunks: ColumnChunk[],
  nested: ReadonlySet<string>,
): AsyncBuffer {
  const leaves = chunks.flatMap((chunk) => {
    const path = chunk.meta_data?.path_in_schema;
    if (!path || !nested.has(path[0]!)) return [];
    const schemaPath = getSchemaPath(metadata.schema, path);
    return [
      {
        ...chunkRange(chunk),
        meta: chunk.meta_data!,
        levels: { repetition: getMaxRepetitionLevel(schemaPath), definition: getMaxDefinitionLevel(schemaPath) },
        checked: false,
      },
    ];
  });
  return {
    byteLength: file.byteLength,
    slice: (start: number, end = file.byteLength) => {
      const checked = file.slice(start, end).then((bytes) => {
        for (const leaf of leaves) {
          if (leaf.checked || leaf.start < start || leaf.end > end) continue;
          const chunk = new Uint8Array(bytes, leaf.start - start, leaf.end - leaf.start);
          checkChunkPages(chunk, leaf.meta, leaf.levels, compressors);
          leaf.checked = true;
        }
        return bytes;
      });
      // As RangeBuffer.slice: a failure hyparquet stops awaiting is not an unhandled rejection.
      checked.catch(() => {});
      return checked;
    },
  };
}

/** Connector and source errors pass; anything else hyparquet throws means a bad or unsupported file. */
function asConnectorError(error: unknown, file: RangeBuffer, name: string | undefined): unknown {
  if (error instanceof ConnectorError) return error;
  if (typeof error === "object" && error !== null && file.sourceErrors.has(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const kind = /not supported|unsupported/i.test(message) ? "unsupported" : "invalid";
  return new ConnectorError(`${where(name)}Parquet: ${message}`, kind);
}

/** How deep the schema's groups nest (top-level columns are level 1), walked without recursion. */
export function schemaDepth(schema: readonly SchemaElement[]): number {
  // Pre-order list: each group is followed by its num_children children (and theirs).
  const open: number[] = [];
  let deepest = 0;
  for (let i = 0; i < schema.length; i++) {
    while (open.length > 0 && open[open.length - 1] === 0) open.pop();
    if (open.length > 0) open[open.length - 1]!--;
    deepest = Math.max(deepest, open.length);
    const children = schema[i]!.num_children ?? 0;
    if (children > 0) open.push(children);
  }
  return deepest;
}

async function openParquet(source: RecordSource): Promise<{ file: RangeBuffer; metadata: FileMetaData }> {
  // Header magic, footer length and footer magic need at least 12 bytes.
  if (source.size < 12) {
    throw new ConnectorError(`${where(source.name)}not a Parquet file (only ${source.size} bytes)`, "invalid");
  }
  const file = new RangeBuffer(source);
  try {
    await file.loadFooter(FOOTER_FETCH_SIZE);
    const metadata = await parquetMetadataAsync(file, { initialFetchSize: FOOTER_FETCH_SIZE });
    // Groups nested this deep would take the schema tree and the value conversion, both recursive, past the stack.
    if (schemaDepth(metadata.schema) > MAX_RECORD_DEPTH) {
      throw new ConnectorError(
        `${where(source.name)}Parquet: the schema nests groups deeper than ${MAX_RECORD_DEPTH} levels, the most a record may have`,
        "invalid",
      );
    }
    return { file, metadata };
  } catch (error) {
    throw asConnectorError(error, file, source.name);
  }
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/**
 * A decoded value as the profiler takes it: bigint → number when safe (else its decimal string),
 * bytes → base64, undefined → null, Date as is, nested values converted throughout.
 */
export function plainValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === "bigint") return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  if (typeof value !== "object" || value === null || value instanceof Date) return value;
  if (value instanceof Uint8Array) return base64(value);
  if (Array.isArray(value)) return value.map(plainValue);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = plainValue(item);
  return out;
}

const TIME_UNITS_PER_MS = { MILLIS: 1n, MICROS: 1000n, NANOS: 1000000n } as const;

/** Time of day (TIME columns arrive as integers in their unit) as "HH:MM:SS[.fraction]". */
export function timeOfDay(value: unknown, unit: keyof typeof TIME_UNITS_PER_MS): unknown {
  if (typeof value !== "number" && typeof value !== "bigint") return plainValue(value);
  const perSecond = TIME_UNITS_PER_MS[unit] * 1000n;
  const total = BigInt(value);
  const seconds = total / perSecond;
  const fraction = total % perSecond;
  const pad = (n: bigint, width: number) => n.toString().padStart(width, "0");
  const hms = `${pad(seconds / 3600n, 2)}:${pad((seconds / 60n) % 60n, 2)}:${pad(seconds % 60n, 2)}`;
  return fraction === 0n ? hms : `${hms}.${pad(fraction, perSecond.toString().length - 1)}`;
}

function timeUnit(element: SchemaElement): keyof typeof TIME_UNITS_PER_MS | null {
  if (element.logical_type?.type === "TIME") return element.logical_type.unit;
  if (element.converted_type === "TIME_MILLIS") return "MILLIS";
  if (element.converted_type === "TIME_MICROS") return "MICROS";
  return null;
}

/** The attribute type of a top-level Parquet column, from its physical and logical (or converted) type. */
export function parquetFieldType(node: SchemaTree): string {
  const element = node.element;
  const logical = element.logical_type?.type;
  const converted = element.converted_type;
  if (node.children.length > 0) {
    if (logical === "LIST" || converted === "LIST" || element.repetition_type === "REPEATED") return "array";
    return "object";
  }
  if (element.repetition_type === "REPEATED") return "array";
  if (logical === "DECIMAL" || converted === "DECIMAL" || logical === "FLOAT16") return "number";
  if (logical === "DATE" || converted === "DATE") return "date";
  if (logical === "TIMESTAMP" || converted === "TIMESTAMP_MILLIS" || converted === "TIMESTAMP_MICROS") {
    return "timestamp";
  }
  if (logical === "TIME" || converted === "TIME_MILLIS" || converted === "TIME_MICROS") return "string";
  if (logical === "JSON" || converted === "JSON" || logical === "GEOMETRY" || logical === "GEOGRAPHY") return "object";
  switch (element.type) {
    case "BOOLEAN":
      return "boolean";
    case "INT32":
    case "INT64":
      return "integer";
    case "INT96":
      return "timestamp";
    case "FLOAT":
    case "DOUBLE":
      return "number";
    case "BYTE_ARRAY":
      // Unannotated byte arrays are decoded as UTF-8 text, as most writers mean them.
      return logical === "BSON" || converted === "BSON" ? "binary" : "string";
    case "FIXED_LEN_BYTE_ARRAY":
      return logical === "UUID" ? "string" : "binary";
    default:
      return "string";
  }
}

/** The schema of a Parquet file, from its footer alone. */
export async function parquetSchemaFields(source: RecordSource, options: ReadOptions = {}): Promise<SchemaField[]> {
  const { metadata } = await openParquet(source);
  const fields = parquetSchema(metadata).children.map((node) => ({
    name: node.element.name,
    type: parquetFieldType(node),
    nullable: node.element.repetition_type !== "REQUIRED",
  }));
  if (!options.columns) return fields;
  const wanted = new Set(options.columns);
  return fields.filter((field) => wanted.has(field.name));
}

/** The top-level columns of a Parquet file and their field ids (Iceberg's column identity), from its footer. */
export async function parquetColumnIds(source: RecordSource): Promise<Array<{ name: string; fieldId?: number }>> {
  const { metadata } = await openParquet(source);
  return parquetSchema(metadata).children.map((node) => ({
    name: node.element.name,
    ...(node.element.field_id !== undefined ? { fieldId: node.element.field_id } : {}),
  }));
}

/** One column's decoded runs within a row group, by absolute row (with dictionary indexes: see FlatRun). */
interface ColumnRuns {
  runs: Array<{ rowStart: number; data: DecodedArray; codes?: Int32Array; dictionary?: DecodedArray }>;
}

/** Rows of a Parquet file, one row group at a time, in batches of at most `batchSize`. */
export async function* readParquet(source: RecordSource, options: ReadOptions = {}): AsyncGenerator<RecordBatch> {
  for await (const batch of readParquetColumns(source, options)) {
    const { names, columns, length } = batch;
    const rows: Row[] = new Array(length);
    for (let r = 0; r < length; r++) {
      const row: Row = {};
      for (let k = 0; k < names.length; k++) row[names[k]!] = columns[k]![r];
      rows[r] = row;
    }
    yield { rows, bytes: batch.bytes, raggedRows: 0, droppedFields: 0 };
  }
}

/**
 * The columns of a Parquet file, one row group at a time, in batches of at most `batchSize` rows:
 * hyparquet decodes column-wise, and the values go on as columns (a typed array's slice is a view,
 * not a copy), converted as the profiler takes them (plainValue, times of day as text). With
 * `forProfiler` (readColumns), flat timestamp columns hold epoch milliseconds instead of Dates and
 * dictionary-encoded columns also carry their rows' codes (the batch's `timestamps` and `dictionaries`).
 */
export async function* readParquetColumns(
  source: RecordSource,
  options: ReadOptions = {},
  forProfiler = false,
): AsyncGenerator<ColumnRecordBatch> {
  const { file, metadata } = await openParquet(source);
  const root = parquetSchema(metadata);
  const top = root.children;
  const byName = new Map(top.map((node) => [node.element.name, node]));
  const names = options.columns ?? top.map((node) => node.element.name);
  const batchSize = batchRowsFor(options.batchSize ?? DEFAULT_BATCH_SIZE, names.length);
  const attributes = options.attributes;
  if (attributes && !names.every((name) => attributes.add(name))) {
    throw recordError(source.name, "Parquet schema", tooManyAttributes(attributes.max));
  }
  // Requested columns the file lacks read as null, as in the text formats.
  const present = names.filter((name) => byName.has(name));
  const convert = names.map((name): ((value: unknown) => unknown) | null => {
    const node = byName.get(name);
    const unit = node && node.children.length === 0 ? timeUnit(node.element) : null;
    return unit ? (value) => timeOfDay(value, unit) : null;
  });
  // Text columns: a value longer than MAX_VALUE_CHARS is an input error, as in the text formats.
  const text = names.map((name) => {
    const node = byName.get(name);
    return node !== undefined && node.children.length === 0 && parquetFieldType(node) === "string";
  });

  // Flat columns are read page by page here (parquet-flat.ts); nested ones through parquetRead.
  const flat = present.filter((name) => isFlatTopLevel(byName.get(name)!));
  const nested = present.filter((name) => !isFlatTopLevel(byName.get(name)!));
  // For the profiler, flat timestamp columns hold epoch milliseconds, not Dates (parquet-flat.ts).
  const timestamps = forProfiler
    ? names.map((name) => {
        const node = byName.get(name);
        return node !== undefined && isFlatTopLevel(node) && timestampUnit(node) !== 0;
      })
    : undefined;

  // This read's own: another scan's read of Parquet in the isolate never shares it.
  const textScratch = new PlainTextScratch();
  let groupStart = 0;
  for (const rowGroup of metadata.row_groups) {
    const groupRows = Number(rowGroup.num_rows);
    const groupEnd = groupStart + groupRows;
    if (groupRows === 0) continue;
    const columns = new Map<string, ColumnRuns>(present.map((name) => [name, { runs: [] }]));
    for (const name of flat) {
      const chunk = rowGroup.columns.find(
        (c) => c.meta_data?.path_in_schema?.length === 1 && c.meta_data.path_in_schema[0] === name,
      );
      if (chunk === undefined) continue;
      try {
        const { start, end } = chunkRange(chunk);
        const bytes = await file.slice(start, end);
        let rowStart = groupStart;
        const node = byName.get(name)!;
        for (const run of readFlatChunk(
          bytes,
          chunk,
          root,
          node,
          groupRows,
          compressors,
          textScratch,
          undefined,
          forProfiler,
        )) {
          const raw = run.data;
          const data = raw instanceof BigInt64Array || raw instanceof BigUint64Array ? (safeNumbers(raw) ?? raw) : raw;
          columns.get(name)!.runs.push({ rowStart, data, codes: run.codes, dictionary: run.dictionary });
          rowStart += data.length;
        }
      } catch (error) {
        throw asConnectorError(error, file, source.name);
      }
    }
    if (nested.length > 0) {
      try {
        await parquetRead({
          file: checkedFile(file, metadata, rowGroup.columns, new Set(nested)),
          metadata,
          columns: nested,
          rowStart: groupStart,
          rowEnd: groupEnd,
          compressors,
          onChunk: (chunk) => {
            columns.get(chunk.columnName)?.runs.push({ rowStart: chunk.rowStart, data: chunk.columnData });
          },
        });
      } catch (error) {
        throw asConnectorError(error, file, source.name);
      }
    }
    const runs = names.map((name) => {
      const column = columns.get(name);
      return column ? column.runs.sort((a, b) => a.rowStart - b.rowStart) : null;
    });

    for (let batchStart = groupStart; batchStart < groupEnd; batchStart += batchSize) {
      const batchEnd = Math.min(batchStart + batchSize, groupEnd);
      const count = batchEnd - batchStart;
      const values: Array<ArrayLike<unknown>> = new Array(names.length);
      let dictionaries: Array<DictionaryCodes | undefined> | undefined;
      for (let k = 0; k < names.length; k++) {
        const column = batchColumn(runs[k] ?? null, batchStart, count, convert[k]!);
        if (text[k]) checkText(column, count, source.name, names[k]!, batchStart);
        values[k] = column;
        const coded = forProfiler && convert[k] === null ? batchCodes(runs[k] ?? null, batchStart, count) : undefined;
        if (coded !== undefined) {
          dictionaries ??= new Array(names.length);
          dictionaries[k] = coded;
        }
      }
      yield {
        names,
        columns: values,
        length: count,
        bytes: file.bytesRead,
        raggedRows: 0,
        droppedFields: 0,
        ...(timestamps !== undefined ? { timestamps } : {}),
        ...(dictionaries !== undefined ? { dictionaries } : {}),
      };
    }
    groupStart = groupEnd;
  }
}

/** 64-bit integers as numbers (what plainValue makes of each), or null when one is not a safe integer. */
function safeNumbers(data: BigInt64Array | BigUint64Array): Float64Array | null {
  const out = new Float64Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (v < MIN_SAFE || v > MAX_SAFE) return null;
    out[i] = Number(v);
  }
  return out;
}

/** True when a decoded value is not as the profiler takes it (see plainValue). */
function needsPlain(value: unknown): boolean {
  return (
    value === undefined ||
    typeof value === "bigint" ||
    (typeof value === "object" && value !== null && !(value instanceof Date))
  );
}

/**
 * The values of rows [start, start + count) of one column: a view of the decoded run when the
 * rows sit in one run of values the profiler takes as they are, else a converted copy.
 */
function batchColumn(
  runs: ColumnRuns["runs"] | null,
  start: number,
  count: number,
  convert: ((value: unknown) => unknown) | null,
): ArrayLike<unknown> {
  if (runs === null) return new Array(count).fill(null);
  let run = 0;
  while (run < runs.length && start >= runs[run]!.rowStart + runs[run]!.data.length) run++;
  const first = runs[run];
  if (
    convert === null &&
    first !== undefined &&
    start >= first.rowStart &&
    start + count <= first.rowStart + first.data.length
  ) {
    const data = first.data;
    const from = start - first.rowStart;
    if (ArrayBuffer.isView(data)) {
      // Typed arrays of numbers need nothing; 64-bit integers become numbers.
      if (!(data instanceof BigInt64Array || data instanceof BigUint64Array)) return data.subarray(from, from + count);
    } else {
      let plain = true;
      for (let i = from; i < from + count; i++) {
        if (needsPlain(data[i])) {
          plain = false;
          break;
        }
      }
      if (plain) return data.slice(from, from + count);
    }
  }
  const toPlain = convert ?? plainValue;
  const out: unknown[] = new Array(count);
  for (let r = 0; r < count; r++) {
    const row = start + r;
    let value: unknown = null;
    while (run < runs.length && row >= runs[run]!.rowStart + runs[run]!.data.length) run++;
    const current = runs[run];
    if (current && row >= current.rowStart) value = toPlain(current.data[row - current.rowStart]);
    out[r] = value;
  }
  return out;
}

/**
 * The dictionary indexes of rows [start, start + count) of one column, when every run they lie in
 * was dictionary-encoded with the same dictionary (a view when they lie in one run).
 */
function batchCodes(runs: ColumnRuns["runs"] | null, start: number, count: number): DictionaryCodes | undefined {
  if (runs === null) return undefined;
  let run = 0;
  while (run < runs.length && start >= runs[run]!.rowStart + runs[run]!.data.length) run++;
  const first = runs[run];
  if (first?.codes === undefined || first.dictionary === undefined || start < first.rowStart) return undefined;
  const from = start - first.rowStart;
  if (from + count <= first.codes.length) {
    return { codes: first.codes.subarray(from, from + count), dictionary: first.dictionary };
  }
  const codes = new Int32Array(count);
  let row = start;
  for (; run < runs.length && row < start + count; run++) {
    const current = runs[run]!;
    if (current.codes === undefined || current.dictionary !== first.dictionary || row < current.rowStart)
      return undefined;
    const end = Math.min(start + count, current.rowStart + current.codes.length);
    codes.set(current.codes.subarray(row - current.rowStart, end - current.rowStart), row - start);
    row = end;
  }
  return row === start + count ? { codes, dictionary: first.dictionary } : undefined;
}

/** A text value longer than MAX_VALUE_CHARS is an input error, as in the text formats. */
function checkText(
  column: ArrayLike<unknown>,
  count: number,
  name: string | undefined,
  attribute: string,
  start: number,
): void {
  for (let r = 0; r < count; r++) {
    const value = column[r];
    if (typeof value === "string" && value.length > MAX_VALUE_CHARS) {
      throw recordError(name, `Parquet row ${start + r + 1}`, valueTooLong(attribute));
    }
  }
}
