/**
 * A scan's memory budget, whatever its width (issue 40). What a scan keeps live grows with its
 * attributes (each has a top-value and a pattern summary, a distinct counter and, when numeric, a
 * quantile sketch: ~300 KiB at the full sizes) and with its rows (the duplicate rows' set, at most
 * 16 MiB: profile-builder.ts MAX_DISTINCT_ROWS). The sketches of a scan share SKETCH_BUDGET: up to
 * FULL_SIZE_COLUMNS attributes each gets the full sizes (the profile of an ordinary table does not
 * change with this budget); a wider table's sketches each get SHARED_COLUMNS / width of their size, down to floors
 * (sketchSizes). Accuracy where they shrink, docs/resources/scans.md (Memory budget):
 *
 * - distinct counts: HyperLogLog of 2^p registers, standard error 1.04 / √(2^p), exact up to 2^p / 4
 *   values (p = 14 at full size: 0.81 %, exact to 4,096; p = 10 at the floor: 3.25 %, exact to 256);
 * - quantiles: KLL with k items at the top level, rank error ~ 1/k·(a few) (k = 512 at full size);
 * - top values: SpaceSaving counters (1,000 at full size): a value's count is exact while the
 *   attribute has at most as many distinct values, and every value is listed while it has at most
 *   min(MAX_LISTED_VALUES, counters); past that, the top 20 with counts over by at most rows / counters.
 *
 * A scan's memory is also what its batch of values holds while it is profiled: readers hand over at
 * most BATCH_VALUES values at once (formats/types.ts batchRowsFor), so a wide table comes in
 * batches of fewer rows.
 */

import { BATCH_VALUES } from "../formats/types";
import { HLL_PRECISION, MIN_HLL_PRECISION } from "./distinct";
import { KLL_DEFAULT_K } from "./kll";
import { SPACE_SAVING_DEFAULT_CAPACITY } from "./space-saving";

/** Most attributes a scan profiles (the interface's cap: interface.md, MAX_ATTRIBUTES). */
export const MAX_SCAN_COLUMNS = 2000;
/** Attributes whose sketches all get their full sizes within SKETCH_BUDGET. */
export const FULL_SIZE_COLUMNS = 100;
/**
 * Past FULL_SIZE_COLUMNS, each sketch gets SHARED_COLUMNS / columns of its full size: an attribute
 * also costs ~10 KiB whatever its sketches' sizes (its counters, its typed arrays' headers, a
 * summary's filter), so the sizes shrink faster than the width grows.
 */
export const SHARED_COLUMNS = 64;
/** Live bytes one scan's sketches take at most, at any width (measured: bench:profile:memory). */
export const SKETCH_BUDGET = 34 * 2 ** 20;
/**
 * Live bytes of one scan at most (documented budget, docs/resources/scans.md): its sketches, the
 * duplicate rows' set up to a few hundred thousand distinct rows, the breakdown, its working arrays.
 */
export const SCAN_MEMORY_BUDGET = 40 * 2 ** 20;

/** Floors of the sketches' sizes (at MAX_SCAN_COLUMNS attributes). */
const MIN_TOP_CAPACITY = 32;
const MIN_KLL_K = 32;

export interface SketchSizes {
  /** SpaceSaving counters of the top-value and the pattern summaries. */
  topCapacity: number;
  /** HyperLogLog register index bits (DistinctCounter). */
  hllPrecision: number;
  /** KLL accuracy parameter. */
  kllK: number;
}

/** The full sizes: those of a scan of at most FULL_SIZE_COLUMNS attributes. */
export const FULL_SKETCH_SIZES: SketchSizes = Object.freeze({
  topCapacity: SPACE_SAVING_DEFAULT_CAPACITY,
  hllPrecision: HLL_PRECISION,
  kllK: KLL_DEFAULT_K,
});

/**
 * The sketch sizes of a scan of `columns` attributes: the full sizes up to FULL_SIZE_COLUMNS, else
 * each scaled by SHARED_COLUMNS / columns (the register count by the nearest power of two
 * below), never under the floors.
 */
export function sketchSizes(columns: number): SketchSizes {
  if (!(columns > FULL_SIZE_COLUMNS)) return FULL_SKETCH_SIZES;
  const share = SHARED_COLUMNS / columns;
  return {
    topCapacity: Math.max(MIN_TOP_CAPACITY, Math.floor(SPACE_SAVING_DEFAULT_CAPACITY * share)),
    hllPrecision: Math.max(MIN_HLL_PRECISION, HLL_PRECISION + Math.floor(Math.log2(share))),
    kllK: Math.max(MIN_KLL_K, Math.floor(KLL_DEFAULT_K * share)),
  };
}

/**
 * Live bytes of one attribute's sketches at the full sizes (measured: 15 KiB for ten categories,
 * 200–330 KiB for unique values; 29.7 MiB in all for bench:profile:memory's 100 columns).
 */
const FULL_COLUMN_BYTES = 280 * 2 ** 10;
/**
 * A scan's own memory whatever its width: working arrays, the breakdown, the duplicate rows' set of
 * ~100,000 distinct rows (16 MiB at its cap of 1.4 M: what the isolate's headroom takes).
 */
const SCAN_BASE_BYTES = 5 * 2 ** 20;
/** Bytes a batch holds per value while it is profiled (a slice of its text, a share of the text, the column arrays). */
const BATCH_VALUE_BYTES = 32;
/** Rows of a file scan's batch at ordinary widths (scan/files.ts). */
const FILE_BATCH_ROWS = 2000;

/**
 * What a scan of `columns` attributes holds at its peak, garbage included, at most (undefined:
 * not known yet, the attribute cap's): its own memory, its sketches (SKETCH_BUDGET at most) and two
 * batches, the one profiled and the one before it not yet collected (at most BATCH_VALUES values
 * each). What the Worker admits scans by (jobs/admission.ts).
 */
export function scanMemoryEstimate(columns: number | undefined): number {
  const width = Math.min(MAX_SCAN_COLUMNS, Math.max(1, columns ?? MAX_SCAN_COLUMNS));
  const sketches = Math.min(SKETCH_BUDGET, width * FULL_COLUMN_BYTES);
  const batchValues = Math.min(BATCH_VALUES, width * FILE_BATCH_ROWS);
  return SCAN_BASE_BYTES + sketches + 2 * batchValues * BATCH_VALUE_BYTES;
}
