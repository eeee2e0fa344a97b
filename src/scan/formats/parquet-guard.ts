/**
 * Checks of a Parquet data page's run-length/bit-packed hybrid streams (levels, dictionary
 * indexes, RLE booleans) before hyparquet decodes them. hyparquet's decoder trusts each run's
 * length and writes it into a plain array, so one corrupt run header (a count of 2^31) grows that
 * array by billions of values: the scan hangs until the Worker's CPU limit instead of failing.
 * The walk reads run headers only (not the values), as hyparquet reads them, and throws when the
 * runs would decode more values than the page holds or lie outside their bytes.
 */

/** A bit-packed run ends on a group of 8 values: the last may pad past the page's values. */
const PADDING = 8;

/**
 * Throws when the hybrid runs of `width`-bit values from `start` would decode more than `count`
 * values (a last bit-packed group may pad up to 7 more) or lie past `end`: the end of the bytes
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
    if (seen > count + PADDING) {
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
