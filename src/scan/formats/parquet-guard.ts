/**
 * Checks of a Parquet data page's run-length/bit-packed hybrid streams (levels, dictionary
 * indexes, RLE booleans) before hyparquet decodes them. hyparquet's decoder trusts each run's
 * length and writes it into a plain array, so one corrupt run header (a count of 2^31) grows that
 * array by billions of values: the scan hangs until the Worker's CPU limit instead of failing.
 * The walk reads run headers only (not the values), as hyparquet reads them, and throws when the
 * runs would decode more values than the page holds or lie outside their bytes.
 */

import type { ColumnMetaData, Compressors } from "hyparquet";
import { parquetHeader } from "hyparquet/src/column.js";
import { decompressPage } from "hyparquet/src/datapage.js";
import type { DataPageHeader, DataPageHeaderV2, DataReader } from "hyparquet/src/types.js";

/** A bit-packed run ends on a group of 8 values: the last may pad past the page's values. */
const PADDING = 8;

/**
 * Throws when the hybrid runs of `width`-bit values from `start` would decode more than `count`
 * values (a last bit-packed run may pad past them, within its bytes) or lie past `end`: the end of the bytes
 * the decoder reads from, which stops it there. Runs that end before `count` values are left to
 * the decoder, which fails on reading past `end`.
 */
export function checkHybrid(bytes: Uint8Array, start: number, end: number, width: number, count: number): void {
  if (!(width >= 0 && width <= 32)) throw new Error(`parquet page: a bit width of ${width}`);
  if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= bytes.length)) {
    throw new Error("parquet page: the bounds of its levels or indexes lie outside the page");
  }
  const valueBytes = (width + 7) >> 3;
  let at = start;
  let seen = 0;
  while (seen < count && at < end) {
    // The run header, a ULEB128 varint read as hyparquet reads it (32-bit shifts).
    let header = 0;
    let shift = 0;
    for (;;) {
      if (at >= end) return;
      const byte = bytes[at++]!;
      header |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) break;
      shift += 7;
    }
    let values: number;
    if (header & 1) {
      const groups = header >> 1;
      if (groups < 0) throw new Error("parquet page: a bit-packed run of negative length");
      values = groups * 8;
      at += groups * width;
    } else {
      values = header >>> 1;
      at += valueBytes;
    }
    seen += values;
    // A last bit-packed run may pad past the page by whole groups (DuckDB writes a run of 32 groups
    // for the page's last values): its bytes, checked below to lie in the stream, bound what it decodes.
    const padded = header & 1 && width > 0 && seen - values < count;
    if (seen > count + PADDING && !padded) {
      throw new Error(`parquet page: encoded levels or indexes hold more than the page's ${count} values`);
    }
    if (at > end) throw new Error("parquet page: encoded levels or indexes run past the page");
  }
}

/** The 4-byte little-endian length before a v1 page's hybrid stream, checked to fit the page; the stream's end. */
export function prefixedEnd(bytes: Uint8Array, at: number): number {
  if (at + 4 > bytes.length) throw new Error("parquet page: ends before a length of its levels");
  const length = (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
  const end = at + 4 + length;
  if (end > bytes.length) throw new Error("parquet page: its levels run past the page");
  return end;
}

/** Encodings whose values are hybrid runs: dictionary indexes, and booleans in RLE. */
export const HYBRID_VALUES = new Set(["RLE", "RLE_DICTIONARY", "PLAIN_DICTIONARY"]);

/**
 * Values in hybrid runs: RLE booleans behind a 4-byte length, or dictionary indexes behind their
 * bit width (0: every value is the dictionary's first, no runs read). `count` may exceed the
 * values (a v1 page's nulls are not counted first): it bounds what the runs may claim.
 */
export function checkHybridValues(body: Uint8Array, encoding: string, count: number, boolean: boolean): void {
  if (encoding === "RLE" && boolean) {
    prefixedEnd(body, 0);
    checkHybrid(body, 4, body.length, 1, count);
    return;
  }
  if (body.length === 0) throw new Error("parquet page: ends before its values");
  const width = body[0]!;
  if (width > 0) checkHybrid(body, 1, body.length, width, count);
}

/** The highest repetition and definition levels of a column (0: the page has no such levels). */
export interface MaxLevels {
  repetition: number;
  definition: number;
}

/** Bits of a level up to `max` (hyparquet's bitWidth). */
function levelWidth(max: number): number {
  return 32 - Math.clz32(max);
}

/**
 * A page's value count, at most what is left of its scope: a flat column's row group (a value or
 * null per row), or a nested column's chunk.
 */
export function checkPageCount(values: number, left: number, scope: "row group" | "column chunk"): number {
  if (!(values >= 0 && values <= left)) {
    const unit = scope === "row group" ? "rows" : "values";
    throw new Error(`parquet page: ${values} values where its ${scope} has ${left} ${unit} left`);
  }
  return values;
}

/**
 * A decompressed v1 page's hybrid streams as readDataPage (and the flat reader's textPage) read
 * them: levels behind their 4-byte lengths, repetition then definition, then the values.
 */
export function checkPageV1(plain: Uint8Array, daph: DataPageHeader, levels: MaxLevels, boolean: boolean): void {
  let at = 0;
  for (const max of [levels.repetition, levels.definition]) {
    if (max === 0) continue;
    const end = prefixedEnd(plain, at);
    checkHybrid(plain, at + 4, plain.length, levelWidth(max), daph.num_values);
    at = end;
  }
  if (HYBRID_VALUES.has(daph.encoding)) checkHybridValues(plain.subarray(at), daph.encoding, daph.num_values, boolean);
}

/**
 * A v2 page's level lengths, and the levels hyparquet will read (`definition`: false when the flat
 * reader skips them on a page without nulls); the byte length of its levels.
 */
export function checkLevelsV2(page: Uint8Array, daph2: DataPageHeaderV2, levels: MaxLevels, definition = true): number {
  const repetition = daph2.repetition_levels_byte_length;
  const end = repetition + daph2.definition_levels_byte_length;
  if (!(repetition >= 0 && end >= repetition && end <= page.length)) {
    throw new Error("parquet page: the lengths of its levels are missing or run past the page");
  }
  // hyparquet reads them from the whole page, so runs past their lengths would be read too.
  if (levels.repetition > 0) checkHybrid(page, 0, page.length, levelWidth(levels.repetition), daph2.num_values);
  if (definition && levels.definition > 0) {
    checkHybrid(page, repetition, page.length, levelWidth(levels.definition), daph2.num_values);
  }
  return end;
}

/**
 * The pages of a column chunk hyparquet is about to read itself (a nested column's leaf, read by
 * parquetRead), checked as the flat reader checks its own. Compressed pages are decompressed to be
 * walked and hyparquet decompresses them again (nested columns only, so the flat columns' reading
 * costs nothing more).
 */
export function checkChunkPages(
  chunk: Uint8Array,
  meta: ColumnMetaData,
  levels: MaxLevels,
  compressors: Compressors,
): void {
  const reader: DataReader = { view: new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength), offset: 0 };
  const total = Number(meta.num_values);
  let seen = 0;
  while (seen < total && reader.offset < chunk.byteLength - 1) {
    const header = parquetHeader(reader);
    const size = header.compressed_page_size;
    if (!(size >= 0 && reader.offset + size <= chunk.byteLength)) {
      throw new Error("parquet page: runs past its column chunk");
    }
    const page = chunk.subarray(reader.offset, reader.offset + size);
    reader.offset += size;
    if (header.type === "DATA_PAGE") {
      const daph = header.data_page_header;
      if (!daph) throw new Error("parquet data page header is undefined");
      seen += checkPageCount(daph.num_values, total - seen, "column chunk");
      const plain = decompressPage(page, Number(header.uncompressed_page_size), meta.codec, compressors);
      checkPageV1(plain, daph, levels, meta.type === "BOOLEAN");
    } else if (header.type === "DATA_PAGE_V2") {
      const daph2 = header.data_page_header_v2;
      if (!daph2) throw new Error("parquet data page header v2 is undefined");
      seen += checkPageCount(daph2.num_values, total - seen, "column chunk");
      const levelBytes = checkLevelsV2(page, daph2, levels);
      if (HYBRID_VALUES.has(daph2.encoding)) {
        const body =
          daph2.is_compressed === false
            ? page.subarray(levelBytes)
            : decompressPage(
                page.subarray(levelBytes),
                header.uncompressed_page_size - levelBytes,
                meta.codec,
                compressors,
              );
        checkHybridValues(body, daph2.encoding, daph2.num_values - daph2.num_nulls, true);
      }
    }
  }
}
