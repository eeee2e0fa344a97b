/** Shared by attribute-stats (which fills it) and breakdown (which reads it). */

/**
 * What addColumn found in a batch: per row the index of its distinct value (-1 null, -2 a nested
 * or binary value), per distinct value its count, first row, type code (value-types.ts: T_INTEGER …
 * T_STRING, T_EMPTY for blank text), for numbers the number (NaN otherwise) and for text its shape
 * (patterns.ts; undefined otherwise). Valid until the next addColumn.
 */
export interface ColumnCodes {
  codes: Int32Array;
  firsts: Int32Array;
  counts: Float64Array;
  types: Uint8Array;
  numbers: Float64Array;
  shapes: Array<string | undefined>;
  /**
   * The rows each known shape stands for: 1, or in a batch whose patterns were sampled (mostly
   * distinct text, attribute-stats PATTERN_SAMPLE) the sampling weight, only sampled values
   * having a shape.
   */
  shapeWeight: number;
  /** True when the column's numbers are epoch milliseconds of instants (AttributeStats.addColumn). */
  timestamps: boolean;
  distinct: number;
}
