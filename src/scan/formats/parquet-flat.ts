/**
 * Flat Parquet columns (top-level, not repeated: a value or null per row) read page by page with
 * hyparquet's own page decoders, but placed row by row here: hyparquet's general assembly (Dremel
 * levels for any nesting) walked every value of every optional column through its nested-list
 * machinery, 15 % of a Parquet profile. Nested and repeated columns still go through parquetRead.
 */
import type { ColumnChunk, Compressors, DecodedArray, ParquetParsers, SchemaTree } from "hyparquet";
import { parquetHeader } from "hyparquet/src/column.js";
import { convert, convertWithDictionary, DEFAULT_PARSERS } from "hyparquet/src/convert.js";
import { decompressPage, readDataPage, readDataPageV2 } from "hyparquet/src/datapage.js";
import { readRleBitPackedHybrid } from "hyparquet/src/encoding.js";
import { readPlain } from "hyparquet/src/plain.js";
import type { ColumnDecoder, DataPageHeader, DataReader, PageHeader } from "hyparquet/src/types.js";
import {
  checkHybridValues,
  checkLevelsV2,
  checkPageCount,
  checkPageV1,
  HYBRID_VALUES,
  type MaxLevels,
} from "./parquet-guard";
import { type PlainTextScratch, readPlainText } from "./parquet-text";

/** True when a top-level column holds one value or null per row (its levels need no assembly). */
export function isFlatTopLevel(node: SchemaTree): boolean {
  return node.children.length === 0 && node.element.repetition_type !== "REPEATED";
}

/** Where a column chunk's bytes lie in the file (its dictionary page first, when it has one). */
export function chunkRange(chunk: ColumnChunk): { start: number; end: number } {
  const meta = chunk.meta_data;
  // As hyparquet: a chunk in another file is not read.
  if (chunk.file_path) throw new Error("parquet file_path not supported");
  if (meta === undefined) throw new Error("parquet column metadata is undefined");
  const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
  return { start, end: start + Number(meta.total_compressed_size) };
}

/**
 * One data page's values (nulls in place) and, for a dictionary-encoded page whose dictionary
 * holds values as the profiler takes them (numbers in a typed array, or text), each row's index
 * into that dictionary (-1 for null): the profiler then hashes each dictionary value once.
 */
export interface FlatRun {
  data: DecodedArray;
  codes?: Int32Array;
  dictionary?: DecodedArray;
}

/**
 * The values of one flat column chunk of `rows` rows, as decoded runs (one per data page, nulls in
 * place): typed arrays stay typed where a page has no nulls. A timestamp column's values are Dates,
 * or with `timestampsAsMillis` epoch milliseconds (a Float64Array where a page has no nulls; NaN for
 * an instant a Date cannot hold): the same instants without an object per value. PLAIN text pages
 * are gathered in `textScratch`, the file read's.
 */
export function readFlatChunk(
  bytes: ArrayBuffer,
  chunk: ColumnChunk,
  root: SchemaTree,
  node: SchemaTree,
  rows: number,
  compressors: Compressors,
  textScratch: PlainTextScratch,
  parsers?: Partial<ParquetParsers>,
  timestampsAsMillis = false,
): FlatRun[] {
  const meta = chunk.meta_data!;
  const decoder: ColumnDecoder = {
    pathInSchema: meta.path_in_schema,
    type: meta.type,
    element: node.element,
    schemaPath: [root, node],
    codec: meta.codec,
    compressors,
    parsers: { ...DEFAULT_PARSERS, ...parsers },
  };
  // As hyparquet reads levels: anything not REQUIRED has them.
  const optional = node.element.repetition_type !== "REQUIRED";
  const maxLevels: MaxLevels = { repetition: 0, definition: optional ? 1 : 0 };
  // Timestamps in ms or µs: hyparquet boxes each as a BigInt, then a Date; here the raw integers
  // are read as two 32-bit words and become Dates directly (same instants: µs truncate toward 0).
  const perMs = timestampUnit(node);
  if (perMs !== 0) {
    const raw: SchemaTree = {
      ...node,
      element: { ...node.element, converted_type: undefined, logical_type: undefined },
    };
    decoder.element = raw.element;
    decoder.schemaPath = [root, raw];
  }
  // Text columns' PLAIN pages are read here (parquet-text.ts), not a byte array and a decode per value.
  const text = parsers?.stringFromBytes === undefined && isPlainText(node.element);
  const requiredNode: SchemaTree = { ...node, element: { ...node.element, repetition_type: "REQUIRED" } };
  const required: ColumnDecoder = { ...decoder, element: requiredNode.element, schemaPath: [root, requiredNode] };
  const reader: DataReader = { view: new DataView(bytes), offset: 0 };
  const runs: FlatRun[] = [];
  let dictionary: DecodedArray | undefined;
  /** True when the dictionary's values are as the profiler takes them (see FlatRun). */
  let codable = false;
  /** A decoded page's values; a dictionary-encoded page's indexes are checked first, and kept when codable. */
  const lookUp = (dataPage: DecodedArray, encoding: DataPageHeader["encoding"]) => {
    let indexes: Int32Array | undefined;
    if (encoding.endsWith("_DICTIONARY")) {
      checkIndexes(dataPage, dictionary);
      // Taken before the lookup, which writes the values over the indexes.
      if (codable) indexes = Int32Array.from(dataPage as ArrayLike<number>);
    }
    return { values: convertWithDictionary(dataPage, dictionary, encoding, decoder), indexes };
  };
  let rowCount = 0;
  while (rowCount < rows && reader.offset < bytes.byteLength - 1) {
    let header = parquetHeader(reader);
    let page: Uint8Array = new Uint8Array(bytes, reader.offset, header.compressed_page_size);
    reader.offset += header.compressed_page_size;
    if (header.type === "DICTIONARY_PAGE") {
      const dph = header.dictionary_page_header;
      if (!dph) throw new Error("parquet dictionary page header is undefined");
      const plain = decompressPage(page, Number(header.uncompressed_page_size), meta.codec, compressors);
      const pageReader: DataReader = {
        view: new DataView(plain.buffer, plain.byteOffset, plain.byteLength),
        offset: 0,
      };
      dictionary = convert(readPlain(pageReader, meta.type, dph.num_values, node.element.type_length), decoder);
      codable = perMs === 0 && profiledAsIs(dictionary);
      continue;
    }
    let levels: number[] | undefined;
    let values: DecodedArray;
    let indexes: Int32Array | undefined;
    if (header.type === "DATA_PAGE") {
      const daph = header.data_page_header;
      if (!daph) throw new Error("parquet data page header is undefined");
      checkPageCount(daph.num_values, rows - rowCount, "row group");
      const plain = decompressPage(page, Number(header.uncompressed_page_size), meta.codec, compressors);
      checkPageV1(plain, daph, maxLevels, meta.type === "BOOLEAN");
      if (text && daph.encoding === "PLAIN") {
        ({ levels, values } = textPage(plain, daph, optional, textScratch));
      } else {
        const decoded = readDataPage(plain, daph, decoder);
        levels = decoded.definitionLevels;
        ({ values, indexes } = lookUp(decoded.dataPage, daph.encoding));
      }
    } else if (header.type === "DATA_PAGE_V2") {
      let daph2 = header.data_page_header_v2;
      if (!daph2) throw new Error("parquet data page header v2 is undefined");
      checkPageCount(daph2.num_values, rows - rowCount, "row group");
      // A page without nulls needs no levels: they are skipped, not decoded (a column read as required).
      const skip = daph2.num_nulls === 0 && daph2.repetition_levels_byte_length === 0;
      const levelBytes = checkLevelsV2(page, daph2, maxLevels, !skip);
      if (HYBRID_VALUES.has(daph2.encoding)) {
        // Values in runs are checked before hyparquet decodes them, so the page is decompressed
        // here and handed over as uncompressed.
        ({ page, header } = uncompressedV2(page, header, levelBytes, meta.codec, compressors));
        daph2 = header.data_page_header_v2!;
        checkHybridValues(page.subarray(levelBytes), daph2.encoding, daph2.num_values - daph2.num_nulls, true);
      }
      if (text && daph2.encoding === "PLAIN") {
        ({ levels, values } = textPageV2(page, header, optional && !skip, decoder, textScratch));
      } else {
        const decoded = skip
          ? readDataPageV2(
              page.subarray(daph2.definition_levels_byte_length),
              {
                ...header,
                uncompressed_page_size: header.uncompressed_page_size - daph2.definition_levels_byte_length,
                data_page_header_v2: { ...daph2, definition_levels_byte_length: 0 },
              },
              required,
            )
          : readDataPageV2(page, header, decoder);
        levels = decoded.definitionLevels;
        ({ values, indexes } = lookUp(decoded.dataPage, daph2.encoding));
      }
    } else {
      // Index pages and the like carry no values.
      continue;
    }
    if (perMs !== 0) values = timestampsAsMillis ? toMillis(values, perMs) : toDates(toMillis(values, perMs));
    const withNulls = optional && levels !== undefined && levels.length > 0;
    const data = withNulls ? placeNulls(levels!, values) : values;
    if (indexes !== undefined) {
      const codes = withNulls ? placeNullCodes(levels!, indexes) : indexes;
      runs.push({ data, codes, dictionary });
    } else {
      runs.push({ data });
    }
    rowCount += data.length;
  }
  return runs;
}

/**
 * Every index of a dictionary-encoded page names a value of its chunk's dictionary: hyparquet
 * would look an index past it up as undefined (a value no type allows) and, without a
 * dictionary page, hand the indexes over as the values.
 */
function checkIndexes(indexes: DecodedArray, dictionary: DecodedArray | undefined): void {
  if (dictionary === undefined) throw new Error("parquet page: dictionary-encoded values without a dictionary page");
  const size = dictionary.length;
  for (let i = 0; i < indexes.length; i++) {
    if (!((indexes[i] as number) < size)) {
      throw new Error(`parquet page: a dictionary index (${indexes[i]}) past its dictionary of ${size} values`);
    }
  }
}

/** A v2 page with its values decompressed, and its header saying so. */
function uncompressedV2(
  page: Uint8Array,
  header: PageHeader,
  levelBytes: number,
  codec: ColumnDecoder["codec"],
  compressors: Compressors,
): { page: Uint8Array; header: PageHeader } {
  const daph2 = header.data_page_header_v2!;
  if (daph2.is_compressed === false) return { page, header };
  const body = decompressPage(
    page.subarray(levelBytes),
    header.uncompressed_page_size - levelBytes,
    codec,
    compressors,
  );
  const whole = new Uint8Array(levelBytes + body.length);
  whole.set(page.subarray(0, levelBytes));
  whole.set(body, levelBytes);
  return { page: whole, header: { ...header, data_page_header_v2: { ...daph2, is_compressed: false } } };
}

/** True when a dictionary's values are what the profiler takes as they are: numbers in a typed array, or text. */
function profiledAsIs(dictionary: DecodedArray): boolean {
  if (dictionary instanceof Float64Array || dictionary instanceof Float32Array || dictionary instanceof Int32Array) {
    return true;
  }
  if (!Array.isArray(dictionary)) return false;
  for (let i = 0; i < dictionary.length; i++) if (typeof dictionary[i] !== "string") return false;
  return true;
}

/** Dictionary indexes spread over their rows as placeNulls spreads values: -1 for a null row. */
function placeNullCodes(levels: number[], indexes: Int32Array): Int32Array {
  const n = levels.length;
  if (indexes.length === n) return indexes;
  const out = new Int32Array(n);
  let j = 0;
  for (let i = 0; i < n; i++) out[i] = levels[i] === 1 ? indexes[j++]! : -1;
  return out;
}

/**
 * True when hyparquet's convert() turns the column's byte arrays into text with stringFromBytes
 * (UTF8 or ENUM, STRING or ENUM, or unannotated): the columns whose PLAIN pages readPlainText reads.
 */
function isPlainText(element: SchemaTree["element"]): boolean {
  const { type, converted_type: converted, logical_type: logical } = element;
  return (
    type === "BYTE_ARRAY" &&
    (converted === undefined || converted === "UTF8" || converted === "ENUM") &&
    (logical === undefined || logical.type === "STRING" || logical.type === "ENUM")
  );
}

/** A PLAIN text page v1 (levels and values, decompressed): definition levels when optional, texts. */
function textPage(plain: Uint8Array, daph: DataPageHeader, optional: boolean, scratch: PlainTextScratch): TextPage {
  const reader: DataReader = { view: new DataView(plain.buffer, plain.byteOffset, plain.byteLength), offset: 0 };
  const levels = optional ? definitionLevels(reader, daph.num_values) : undefined;
  const present = levels === undefined ? daph.num_values : countPresent(levels);
  return { levels, values: readPlainText(plain.subarray(reader.offset), present, scratch) };
}

/** A PLAIN text page v2: levels stay uncompressed ahead of the values, read only when `withLevels`. */
function textPageV2(
  page: Uint8Array,
  header: PageHeader,
  withLevels: boolean,
  decoder: ColumnDecoder,
  scratch: PlainTextScratch,
): TextPage {
  const daph2 = header.data_page_header_v2!;
  const levelBytes = daph2.repetition_levels_byte_length + daph2.definition_levels_byte_length;
  let levels: number[] | undefined;
  if (withLevels) {
    levels = new Array(daph2.num_values);
    const reader: DataReader = {
      view: new DataView(page.buffer, page.byteOffset, page.byteLength),
      offset: daph2.repetition_levels_byte_length,
    };
    readRleBitPackedHybrid(reader, 1, levels, daph2.definition_levels_byte_length);
  }
  let body = page.subarray(levelBytes);
  if (daph2.is_compressed !== false) {
    body = decompressPage(body, header.uncompressed_page_size - levelBytes, decoder.codec, decoder.compressors);
  }
  return { levels, values: readPlainText(body, daph2.num_values - daph2.num_nulls, scratch) };
}

interface TextPage {
  levels: number[] | undefined;
  values: string[];
}

/** A v1 page's definition levels (bit width 1 for a flat column, a 4-byte length first). */
function definitionLevels(reader: DataReader, count: number): number[] {
  const levels: number[] = new Array(count);
  readRleBitPackedHybrid(reader, 1, levels);
  return levels;
}

function countPresent(levels: number[]): number {
  let present = 0;
  for (let i = 0; i < levels.length; i++) present += levels[i] === 1 ? 1 : 0;
  return present;
}

/** Integer units per millisecond of an INT64 timestamp column in ms (1) or µs (1000), else 0. */
export function timestampUnit(node: SchemaTree): number {
  const { type, converted_type: converted, logical_type: logical } = node.element;
  if (type !== "INT64") return 0;
  if (logical?.type === "TIMESTAMP") return logical.unit === "MILLIS" ? 1 : logical.unit === "MICROS" ? 1000 : 0;
  if (logical !== undefined) return 0;
  return converted === "TIMESTAMP_MILLIS" ? 1 : converted === "TIMESTAMP_MICROS" ? 1000 : 0;
}

const TWO_POW_32 = 2 ** 32;

/** The largest instant a Date holds, in epoch milliseconds (ECMAScript's TimeClip). */
const MAX_DATE_MS = 8.64e15;

/**
 * Raw timestamps (a BigInt64Array, or bigints from a dictionary) as epoch milliseconds: what
 * `new Date` of the integer makes of each (µs truncate toward 0, NaN past a Date's range, no -0).
 */
function toMillis(values: DecodedArray, perMs: number): Float64Array {
  const n = values.length;
  const out = new Float64Array(n);
  if (values instanceof BigInt64Array) {
    const words = new Int32Array(values.buffer, values.byteOffset, n * 2);
    for (let i = 0; i < n; i++) {
      const high = words[2 * i + 1]!;
      const low = words[2 * i]! >>> 0;
      // Exact below 2^53 (in µs, until the year 2255); beyond it through the bigint, as hyparquet.
      const ms =
        Math.abs(high) < 0x200000
          ? perMs === 1
            ? high * TWO_POW_32 + low
            : Math.trunc((high * TWO_POW_32 + low) / perMs)
          : bigintMillis(values[i]!, perMs);
      out[i] = Math.abs(ms) <= MAX_DATE_MS ? ms + 0 : Number.NaN;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const ms = bigintMillis(values[i] as bigint, perMs);
      out[i] = Math.abs(ms) <= MAX_DATE_MS ? ms + 0 : Number.NaN;
    }
  }
  return out;
}

function bigintMillis(v: bigint, perMs: number): number {
  return Number(perMs === 1 ? v : v / BigInt(perMs));
}

/** Epoch milliseconds as Dates (an invalid Date for NaN). */
function toDates(millis: Float64Array): Date[] {
  const out: Date[] = new Array(millis.length);
  for (let i = 0; i < millis.length; i++) out[i] = new Date(millis[i]!);
  return out;
}

/** Values spread over their rows: a definition level of 0 is a null row, 1 the next value. */
function placeNulls(levels: number[], values: DecodedArray): DecodedArray {
  const n = levels.length;
  if (values.length === n) return values;
  const out: unknown[] = new Array(n);
  let j = 0;
  for (let i = 0; i < n; i++) out[i] = levels[i] === 1 ? values[j++] : null;
  return out as DecodedArray;
}
