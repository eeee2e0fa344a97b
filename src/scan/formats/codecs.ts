import { decompress as decompressZstd } from "fzstd";
import type { Compressors } from "hyparquet";
import { decompressBrotli } from "hyparquet-compressors/src/brotli.js";
import { gunzip } from "hyparquet-compressors/src/gzip.js";
import { decompressLz4, decompressLz4Raw } from "hyparquet-compressors/src/lz4.js";
import { snappyUncompress } from "./snappy";

/**
 * Parquet decompressors that run in workerd. SNAPPY is our own JS decoder (snappy.ts; hyparquet's
 * built-in one took 11 % of a Parquet profile, hyparquet-compressors' is WebAssembly compiled at
 * runtime, which workerd forbids); fzstd is hyparquet-compressors' own ZSTD dependency.
 */
export const compressors: Compressors = {
  SNAPPY: snappyUncompress,
  GZIP: (input, length) => gunzip(input, new Uint8Array(length)),
  BROTLI: decompressBrotli,
  ZSTD: (input) => decompressZstd(input),
  LZ4: decompressLz4,
  LZ4_RAW: decompressLz4Raw,
};
