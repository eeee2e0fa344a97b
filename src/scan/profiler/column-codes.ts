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

/**
 * addColumn's working arrays, and the ColumnCodes it returns (the same object): one per scan
 * (ProfileScratch), shared by the scan's attributes since they add one column at a time, and
 * grown to the largest batch. Another scan has its own, so codes returned by one scan's addColumn
 * stay as they are whatever another scan does meanwhile.
 */
export class ColumnScratch implements ColumnCodes {
  codes = new Int32Array(0);
  firsts = new Int32Array(0);
  counts = new Float64Array(0);
  types = new Uint8Array(0);
  numbers = new Float64Array(0);
  // As reserve() makes it (a holey array), so the field keeps one kind of array.
  shapes: Array<string | undefined> = new Array(0);
  shapeWeight = 1;
  timestamps = false;
  distinct = 0;
  /** Per distinct value of the batch: its hash (then its share of the row identity). */
  hi = new Int32Array(0);
  lo = new Int32Array(0);
  /** Open addressing over the distinct values (index + 1, 0 empty), at a load of at most 1/2. */
  table = new Int32Array(0);
  /** Per row: its text's hash, when hashTexts hashed the column. */
  textHi = new Int32Array(0);
  textLo = new Int32Array(0);
  /** Null rows found by a dictionary-coded column's first pass. */
  nulls = 0;
  /** Per dictionary index, the batch's distinct value (valid where its stamp is the current generation). */
  entryStamps = new Int32Array(0);
  entrySlots = new Int32Array(0);
  entryGeneration = 0;
  /** The number (NaN when none) of the distinct value addColumn profiled last. */
  readonly number = new Float64Array(1);

  /** Room for a batch of n rows. */
  reserve(n: number): void {
    if (this.codes.length >= n) return;
    const size = Math.max(n, 1024);
    let cells = 16;
    while (cells < size * 2) cells <<= 1;
    this.hi = new Int32Array(size);
    this.lo = new Int32Array(size);
    this.counts = new Float64Array(size);
    this.firsts = new Int32Array(size);
    this.types = new Uint8Array(size);
    this.numbers = new Float64Array(size);
    this.shapes = new Array(size);
    this.codes = new Int32Array(size);
    this.table = new Int32Array(cells);
    this.textHi = new Int32Array(size);
    this.textLo = new Int32Array(size);
  }

  /** Room for a dictionary of `size` entries. */
  reserveEntries(size: number): void {
    if (this.entryStamps.length >= size) return;
    const length = Math.max(size, 2 * this.entryStamps.length, 256);
    this.entryStamps = new Int32Array(length);
    this.entrySlots = new Int32Array(length);
    this.entryGeneration = 0;
  }
}
