/**
 * Snappy decompression for Parquet pages, in place of hyparquet's built-in decoder (snappyjs) when
 * reading: the benchmark's pages are ~20 M elements of 1–8 bytes per 108 MB (literals of 1–4 bytes,
 * copies of 4–7), where a native copy call per element costs more than it saves (tried before) and a
 * byte loop per element (snappyjs) ends in a mispredicted exit. Here an element of up to 8 bytes is
 * two unaligned 32-bit moves, whatever its length, and the output has 16 bytes of slack for the
 * overshoot (the next element overwrites it). A copy whose offset is at least 4 is moved 4 bytes at
 * a time front to back, which repeats a pattern as byte-by-byte copying does; offsets of 1–3 go byte
 * by byte. Bounds are checked per element: a corrupt page throws, never reads or writes outside.
 */

/** Slack after the output for the overshoot of 32-bit moves (at most 8 bytes past an element's end). */
const SLACK = 16;

/** Decompresses a raw Snappy block (a varint length, then literals and copies) of `length` bytes. */
export function snappyUncompress(input: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length + SLACK);
  const outView = new DataView(out.buffer);
  const inView = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const size = input.length;
  let pos = 0;
  // The preamble (the uncompressed length as a varint) is skipped: `length` comes from the page header.
  while (pos < size && input[pos++]! >= 0x80);
  let op = 0;
  while (pos < size) {
    const tag = input[pos++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let n = (tag >>> 2) + 1;
      if (n > 60) {
        // 1 to 4 little-endian bytes of length − 1 follow.
        const bytes = n - 60;
        if (pos + bytes > size) throw new Error("snappy: literal length runs past the input");
        n = input[pos]!;
        if (bytes > 1) n |= input[pos + 1]! << 8;
        if (bytes > 2) n |= input[pos + 2]! << 16;
        if (bytes > 3) n |= input[pos + 3]! << 24;
        n = (n >>> 0) + 1;
        pos += bytes;
      }
      if (n > size - pos || n > length - op) throw new Error("snappy: literal runs past the input or output");
      if (n <= 8 && pos + 8 <= size) {
        outView.setInt32(op, inView.getInt32(pos, true), true);
        outView.setInt32(op + 4, inView.getInt32(pos + 4, true), true);
      } else if (n <= 64 && pos + n + 3 <= size) {
        for (let k = 0; k < n; k += 4) outView.setInt32(op + k, inView.getInt32(pos + k, true), true);
      } else {
        out.set(input.subarray(pos, pos + n), op);
      }
      pos += n;
      op += n;
      continue;
    }
    let n: number;
    let offset: number;
    if (kind === 1) {
      if (pos >= size) throw new Error("snappy: copy runs past the input");
      n = ((tag >>> 2) & 7) + 4;
      offset = ((tag >>> 5) << 8) | input[pos]!;
      pos += 1;
    } else if (kind === 2) {
      if (pos + 1 >= size) throw new Error("snappy: copy runs past the input");
      n = (tag >>> 2) + 1;
      offset = input[pos]! | (input[pos + 1]! << 8);
      pos += 2;
    } else {
      if (pos + 3 >= size) throw new Error("snappy: copy runs past the input");
      n = (tag >>> 2) + 1;
      offset = (input[pos]! | (input[pos + 1]! << 8) | (input[pos + 2]! << 16) | (input[pos + 3]! << 24)) >>> 0;
      pos += 4;
    }
    if (offset === 0 || offset > op || n > length - op) throw new Error("snappy: copy out of range");
    const from = op - offset;
    if (offset >= 4) {
      // Each 4-byte read lies wholly before the bytes it is written to, or was written just before.
      outView.setInt32(op, outView.getInt32(from, true), true);
      outView.setInt32(op + 4, outView.getInt32(from + 4, true), true);
      for (let k = 8; k < n; k += 4) outView.setInt32(op + k, outView.getInt32(from + k, true), true);
    } else {
      for (let k = 0; k < n; k++) out[op + k] = out[from + k]!;
    }
    op += n;
  }
  if (op !== length) throw new Error(`snappy: ${op} bytes decompressed, the page says ${length}`);
  return out.subarray(0, length);
}
