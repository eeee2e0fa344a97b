/** Shared by attribute-stats (which fills it) and breakdown (which reads it). */

/**
 * What addColumn found in a batch: per row the index of its distinct value (-1 null, -2 a nested
 * or binary value), per distinct value its count and first row. Valid until the next addColumn.
 */
export interface ColumnCodes {
  codes: Int32Array;
  firsts: Int32Array;
  counts: Float64Array;
  distinct: number;
}
