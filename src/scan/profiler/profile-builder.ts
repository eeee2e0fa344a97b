/**
 * Streaming profiler: rows go in by batches, an AssetProfile comes out of one pass.
 *
 * Batches are processed column by column (each attribute's sketches stay hot).
 *
 * Whole-row duplicates: a row's identity is the XOR, over its non-null values, of each value's
 * hash (the one its attribute's sketches computed anyway) mixed with its attribute's name hash.
 * So key order does not matter, a missing key equals null (both add nothing), and the cost is one
 * combineHash per value. Exact up to 64-bit collisions (~n²/2^65 for n distinct rows).
 */

import { type AssetProfile, OTHER_SEGMENT, type SchemaField } from "../../contracts/profile";
import type { DictionaryCodes } from "../formats/types";
import { AttributeStats, isoTime } from "./attribute-stats";
import { Breakdown } from "./breakdown";
import { type SketchSizes, sketchSizes } from "./budget";
import { DuplicateCounter } from "./duplicates";
import { combineHash, type HashScratch, hashValue, hashWords, SAMPLE_SEED, VALUE_SEED } from "./hash";
import { ProfileScratch } from "./scratch";
import { classifyText, type ParsedText, T_DATE, T_INTEGER, T_NUMBER, T_TIMESTAMP } from "./value-types";

export interface ProfileBuilderOptions {
  /** Attributes whose tuple identifies a row: duplicates are counted over it. */
  idAttributes?: string[];
  /** Attribute whose maximum is the asset's freshness. */
  timestampAttribute?: string;
  /** Per attribute, the values that get their own sub-profile. */
  segments?: Record<string, Array<string | number | boolean>>;
  /** The source's declared schema: attributes, order and declared types. */
  declaredSchema?: SchemaField[];
  /** Percentage of rows profiled (1-100), chosen by a seeded hash of the id tuple or the row position. */
  sampleFraction?: number;
  /** Maximum number of rows profiled. */
  limit?: number;
  /** Position within the scan of the first row this builder sees (for position sampling of chunks). */
  rowOffset?: number;
  /** Infer types of string values from their text (CSV, default) or take strings as strings. */
  inferFromText?: boolean;
  /**
   * SpaceSaving counters per attribute for top values and patterns (default: 1000, fewer for a
   * table wider than FULL_SIZE_COLUMNS, profiler/budget.ts).
   */
  topCapacity?: number;
  /** Distinct rows held for duplicate_rows before it is given up (default MAX_DISTINCT_ROWS; 0: not counted). */
  maxDistinctRows?: number;
  /** Collect the investigator's breakdown (profiler/breakdown.ts); off unless asked. */
  breakdown?: boolean;
}

/**
 * Distinct rows held for `duplicate_rows`: past it the count stops and the profile leaves the
 * field out. It is below the 1.47 M at which HashSet64 would double from 2^21 slots, so the set
 * stays within 16 MiB (12 bytes a row at the cap; 24 MiB for a moment while it doubles at 734 k)
 * of a Worker's 128 MB, where the id tuples' set, a batch and the sketches need room too.
 */
export const MAX_DISTINCT_ROWS = 1_400_000;

type Row = Record<string, unknown>;

/** Rows held column by column: `columns[k][i]` is the value of `names[k]` in row i. */
export interface ColumnBatch {
  names: readonly string[];
  columns: ReadonlyArray<ArrayLike<unknown>>;
  length: number;
  /**
   * Per column, true when its numbers are a timestamp's epoch milliseconds (NaN: an instant no Date
   * holds), profiled as the Dates they stand for (a Parquet timestamp, read without a Date per value).
   */
  timestamps?: readonly boolean[];
  /** Per column, when its values came from one dictionary: each row's index into it (AttributeStats.addColumn). */
  dictionaries?: ReadonlyArray<DictionaryCodes | undefined>;
}

interface Segment {
  attribute: string;
  value: string;
  builder: ProfileBuilder;
  pending: Row[];
}

const TWO_POW_32 = 2 ** 32;

export class ProfileBuilder {
  private readonly options: ProfileBuilderOptions;
  private readonly attributes: AttributeStats[] = [];
  private readonly byName = new Map<string, AttributeStats>();
  private rowCount = 0;
  private rowsRead = 0;
  private truncated = false;
  private bytes = 0;
  private freshnessMs = Number.NEGATIVE_INFINITY;
  private readonly duplicates: DuplicateCounter | null;
  /** Whole-row duplicates; null when not counted or given up (past maxDistinctRows). */
  private rowDuplicates: DuplicateCounter | null;
  private readonly breakdown: Breakdown | null;
  private repeatedRows = new Int32Array(0);
  private segments: Segment[] = [];
  private segmentIndex = new Map<string, Map<string, Segment>>();
  private otherSegments = new Map<string, Segment>();
  private selection = new Int32Array(1024);
  /** Attribute indexes in the key order of the last row seen. */
  private keyOrder: number[] = [];
  /** A row batch transposed: one column per attribute, in attribute order (reused). */
  private rowColumns: unknown[][] = [];
  /** Per row of a batch, the XOR of its values' identities (whole-row duplicates). */
  private rowHi = new Int32Array(0);
  private rowLo = new Int32Array(0);
  /** The names of the last column batch and their attributes. */
  private batchNames: readonly string[] | null = null;
  private batchStats: AttributeStats[] = [];
  /** Keep a row when the high word of its sample hash is below this. */
  private readonly sampleThreshold: number;
  /** The scan's working memory, handed to every attribute's sketches. */
  private readonly scratch: ProfileScratch;
  /**
   * The sizes of every attribute's sketches, from the scan's width as first known (the declared
   * schema, the first batch's columns or the first row's keys): null until then (budget.ts).
   */
  private sizes: SketchSizes | null = null;

  /**
   * A builder for one scan. `scratch` is for a builder inside a scan (a segment's, which shares its
   * parent's); a scan's own builder makes its own, so no two scans share one.
   */
  constructor(options: ProfileBuilderOptions = {}, scratch: ProfileScratch = new ProfileScratch()) {
    this.options = options;
    this.scratch = scratch;
    const fraction = options.sampleFraction ?? 100;
    if (!(fraction > 0 && fraction <= 100)) throw new RangeError("sampleFraction must be in (0, 100]");
    this.sampleThreshold = fraction >= 100 ? TWO_POW_32 : Math.floor((fraction / 100) * TWO_POW_32);
    this.duplicates = options.idAttributes?.length ? new DuplicateCounter() : null;
    const maxDistinctRows = options.maxDistinctRows ?? MAX_DISTINCT_ROWS;
    this.rowDuplicates = maxDistinctRows > 0 ? new DuplicateCounter(maxDistinctRows) : null;
    this.breakdown = options.breakdown ? new Breakdown() : null;
    if (options.declaredSchema !== undefined) this.sizes = sketchSizes(options.declaredSchema.length);
    for (const field of options.declaredSchema ?? []) this.attribute(field.name, field.type);
    for (const [attribute, values] of Object.entries(options.segments ?? {})) {
      const byValue = new Map<string, Segment>();
      for (const raw of values) {
        const value = String(raw);
        if (byValue.has(value)) continue;
        const segment: Segment = {
          attribute,
          value,
          builder: new ProfileBuilder(this.segmentOptions(), scratch),
          pending: [],
        };
        byValue.set(value, segment);
        this.segments.push(segment);
      }
      // The attribute's other rows (other values, and none) are a segment too.
      const other: Segment = {
        attribute,
        value: OTHER_SEGMENT,
        builder: new ProfileBuilder(this.segmentOptions(), scratch),
        pending: [],
      };
      this.segments.push(other);
      this.otherSegments.set(attribute, other);
      this.segmentIndex.set(attribute, byValue);
    }
  }

  /** True once `limit` rows were profiled: the caller may stop reading. */
  get done(): boolean {
    return this.options.limit !== undefined && this.rowCount >= this.options.limit;
  }

  /** Rows profiled so far. */
  get rows(): number {
    return this.rowCount;
  }

  /** Says that rows were left out before they reached the builder (a limit applied by the caller). */
  markTruncated(): void {
    this.truncated = true;
  }

  /** Counts bytes read from the source (reported as the profile's `bytes`). */
  addBytes(bytes: number): void {
    this.bytes += bytes;
  }

  /** Profiles a batch of rows (after sampling and the limit). */
  add(rows: Row[]): void {
    const selected = this.select(rows);
    if (selected === 0) return;
    if (this.sizes === null) this.sizes = sketchSizes(Object.keys(rows[this.selection[0]!]!).length);
    const columns = this.transpose(rows, selected);
    this.addColumnsOf(this.attributes, columns, selected);
    if (this.segments.length > 0) this.addToSegments(rows, selected);
  }

  /**
   * Profiles a batch held column by column (what the file readers give): `columns[k][i]` is the
   * value of `names[k]` in row i. The same profile as `add` of those rows, without row objects.
   */
  addColumns(batch: ColumnBatch): void {
    const n = batch.length;
    if (n === 0) return;
    // Sampling, a limit reached inside the batch and segments pick rows: through rows.
    const limit = this.options.limit ?? Number.POSITIVE_INFINITY;
    if (this.sampleThreshold < TWO_POW_32 || this.rowCount + n > limit || this.segments.length > 0) {
      this.add(rowsOf(batch));
      return;
    }
    this.rowsRead += n;
    if (batch.names !== this.batchNames) {
      if (this.sizes === null) this.sizes = sketchSizes(batch.names.length);
      this.batchNames = batch.names;
      this.batchStats = batch.names.map((name) => this.byName.get(name) ?? this.attribute(name));
    }
    this.addColumnsOf(this.batchStats, batch.columns, n, batch.timestamps, batch.dictionaries);
  }

  /**
   * The profile's work on `n` rows held as columns, `columns[k]` the values of `stats[k]`: each
   * attribute's column, the row identities, ids, freshness, and the investigator's breakdown.
   */
  private addColumnsOf(
    stats: readonly AttributeStats[],
    columns: ReadonlyArray<ArrayLike<unknown>>,
    n: number,
    timestamps?: readonly boolean[],
    dictionaries?: ReadonlyArray<DictionaryCodes | undefined>,
  ): void {
    const rowDuplicates = this.rowDuplicates;
    let rowHi: Int32Array | null = null;
    let rowLo: Int32Array | null = null;
    if (rowDuplicates !== null) {
      if (this.rowHi.length < n) {
        this.rowHi = new Int32Array(n);
        this.rowLo = new Int32Array(n);
      }
      rowHi = this.rowHi;
      rowLo = this.rowLo;
      rowHi.fill(0, 0, n);
      rowLo.fill(0, 0, n);
    }
    const breakdown = this.breakdown;
    for (let k = 0; k < stats.length; k++) {
      const codes = stats[k]!.addColumn(columns[k]!, n, rowHi, rowLo, timestamps?.[k] === true, dictionaries?.[k]);
      breakdown?.addColumn(stats[k]!.name, columns[k]!, n, codes);
    }
    if (rowDuplicates !== null) {
      const repeated = breakdown !== null ? this.duplicateRows(n) : null;
      rowDuplicates.warm(rowLo!, n);
      let count = 0;
      for (let i = 0; i < n; i++)
        if (rowDuplicates.add(rowHi![i]!, rowLo![i]!) && repeated !== null) repeated[count++] = i;
      if (count > 0) breakdown?.addDuplicates("duplicate_rows", repeated!, count);
      if (!rowDuplicates.counting) this.rowDuplicates = null;
    }
    // Attributes absent from the batch (sparse JSON, new columns, other files) count its rows as missing.
    const expected = this.rowCount + n;
    for (const attribute of this.attributes)
      if (attribute.count < expected) attribute.addMissing(expected - attribute.count);
    if (this.duplicates !== null) {
      const ids = this.columnsOf(this.options.idAttributes!, stats, columns, timestamps);
      const repeated = breakdown !== null ? this.duplicateRows(n) : null;
      const hash = this.scratch.hash;
      const out = hash.out;
      let count = 0;
      for (let i = 0; i < n; i++) {
        idHash(ids, i, VALUE_SEED, hash);
        if (this.duplicates.add(out[0]!, out[1]!) && repeated !== null) repeated[count++] = i;
      }
      if (count > 0) breakdown?.addDuplicates("duplicate_ids", repeated!, count);
    }
    breakdown?.endColumns();
    const timestamp = this.options.timestampAttribute;
    if (timestamp !== undefined) {
      // Epoch milliseconds already where the column holds instants (NaN is never above max).
      const [times] = this.columnsOf([timestamp], stats, columns);
      const instants = timestamps?.[stats.findIndex((s) => s.name === timestamp)] === true;
      const parsed = this.scratch.parsed;
      let max = this.freshnessMs;
      if (times !== undefined) {
        for (let i = 0; i < n; i++) {
          const ms = instants ? ((times[i] as number | null) ?? Number.NaN) : epochMillis(times[i], parsed);
          if (ms > max) max = ms;
        }
      }
      this.freshnessMs = max;
    }
    this.rowCount += n;
  }

  /** An array for the indexes of a batch's duplicate rows (the breakdown copies what it keeps). */
  private duplicateRows(n: number): Int32Array {
    if (this.repeatedRows.length < n) this.repeatedRows = new Int32Array(n);
    return this.repeatedRows;
  }

  /**
   * The columns of the named attributes (undefined for one the batch lacks); with `timestamps`,
   * a column of instants as Dates (what their values are).
   */
  private columnsOf(
    names: readonly string[],
    stats: readonly AttributeStats[],
    columns: ReadonlyArray<ArrayLike<unknown>>,
    timestamps?: readonly boolean[],
  ): Array<ArrayLike<unknown> | undefined> {
    return names.map((name) => {
      const k = stats.findIndex((s) => s.name === name);
      if (k < 0) return undefined;
      return timestamps?.[k] === true ? instantsAsDates(columns[k]!) : columns[k];
    });
  }

  /** The selected rows as one column per attribute (attributes first met here are added). */
  private transpose(rows: Row[], selected: number): unknown[][] {
    const selection = this.selection;
    const columns = this.rowColumns;
    for (let a = 0; a < this.attributes.length; a++) {
      if (columns[a] === undefined) columns[a] = [];
      columns[a]!.fill(undefined, 0, selected);
    }
    // Row by row through for-in: V8 serves row[key] from the enum cache (a field load by
    // index), and consecutive rows of one source share their key order, so the attribute
    // is found by comparing with the previous row's order at the same position.
    const order = this.keyOrder;
    const attributes = this.attributes;
    for (let j = 0; j < selected; j++) {
      const row = rows[selection[j]!]!;
      let k = 0;
      for (const key in row) {
        let a = order[k];
        if (a === undefined || attributes[a]!.name !== key) {
          a = this.indexOf(key, selected);
          order[k] = a;
        }
        columns[a]![j] = row[key];
        k++;
      }
    }
    return columns;
  }

  /** The index of an attribute, added (with an empty column of `length` values) when new. */
  private indexOf(name: string, length: number): number {
    const known = this.byName.get(name);
    if (known !== undefined) return this.attributes.indexOf(known);
    this.attribute(name);
    const a = this.attributes.length - 1;
    this.rowColumns[a] = new Array(length).fill(undefined);
    return a;
  }

  /** Fills `selection` with the indexes of rows to profile; returns how many. */
  private select(rows: Row[]): number {
    const n = rows.length;
    if (this.selection.length < n) this.selection = new Int32Array(Math.max(n, this.selection.length * 2));
    const selection = this.selection;
    const limit = this.options.limit ?? Number.POSITIVE_INFINITY;
    const room = limit - this.rowCount;
    const offset = this.options.rowOffset ?? 0;
    const sampling = this.sampleThreshold < TWO_POW_32;
    const ids = this.options.idAttributes?.length ? this.options.idAttributes : null;
    const hash = this.scratch.hash;
    let selected = 0;
    for (let i = 0; i < n; i++) {
      const position = offset + this.rowsRead + i;
      if (sampling) {
        // By id tuple when there is one (stable under reordering), else by position.
        if (ids !== null) rowIdHash(rows[i]!, ids, SAMPLE_SEED, hash);
        else hashWords(position | 0, Math.floor(position / TWO_POW_32), SAMPLE_SEED, hash);
        if (hash.out[0]! >>> 0 >= this.sampleThreshold) continue;
      }
      if (selected >= room) {
        this.truncated = true;
        break;
      }
      selection[selected++] = i;
    }
    this.rowsRead += n;
    return selected;
  }

  private attribute(name: string, declaredType?: string): AttributeStats {
    const sizes = this.sizes ?? sketchSizes(1);
    const stats = new AttributeStats(name, this.scratch, {
      declaredType,
      inferFromText: this.options.inferFromText,
      topCapacity: this.options.topCapacity ?? sizes.topCapacity,
      hllPrecision: sizes.hllPrecision,
      kllK: sizes.kllK,
    });
    stats.addMissing(this.rowCount);
    this.attributes.push(stats);
    this.byName.set(name, stats);
    return stats;
  }

  private segmentOptions(): ProfileBuilderOptions {
    const { idAttributes, timestampAttribute, declaredSchema, inferFromText, topCapacity } = this.options;
    // Whole-row duplicates are left to the asset's profile: a set per segment would multiply the memory.
    return { idAttributes, timestampAttribute, declaredSchema, inferFromText, topCapacity, maxDistinctRows: 0 };
  }

  private addToSegments(rows: Row[], selected: number): void {
    const selection = this.selection;
    for (const [attribute, byValue] of this.segmentIndex) {
      for (let j = 0; j < selected; j++) {
        const row = rows[selection[j]!]!;
        const v = row[attribute];
        const listed = v === null || v === undefined ? undefined : byValue.get(typeof v === "string" ? v : String(v));
        (listed ?? this.otherSegments.get(attribute)!).pending.push(row);
      }
    }
    for (const segment of this.segments) {
      if (segment.pending.length === 0) continue;
      segment.builder.add(segment.pending);
      segment.pending = [];
    }
  }

  /** The asset's profile so far. */
  finish(): AssetProfile {
    const profile = this.finishOwn();
    if (this.segments.length > 0) {
      profile.segments = this.segments.map((s) => ({
        attribute: s.attribute,
        value: s.value,
        profile: s.builder.finishOwn(),
      }));
    }
    return profile;
  }

  private finishOwn(): AssetProfile {
    const attributes = this.attributes.map((stats) => stats.finish());
    const profile: AssetProfile = {
      row_count: this.rowCount,
      schema:
        this.options.declaredSchema ??
        attributes.map((a) => ({ name: a.name, type: a.inferred_type, nullable: a.nulls > 0 })),
      attributes,
      sampled: this.sampleThreshold < TWO_POW_32 || this.truncated,
    };
    if (this.bytes > 0) profile.bytes = this.bytes;
    if (this.options.timestampAttribute !== undefined && Number.isFinite(this.freshnessMs)) {
      profile.freshness = isoTime(this.freshnessMs, false);
    }
    if (this.duplicates !== null) profile.duplicate_count = this.duplicates.duplicates;
    if (this.rowDuplicates !== null) profile.duplicate_rows = this.rowDuplicates.duplicates;
    const breakdown = this.breakdown?.finish((name) => this.byName.get(name)?.typeFits());
    if (breakdown?.length) profile.breakdown = breakdown;
    return profile;
  }
}

/** Hashes the id tuple of row i of the id columns into hash.out. */
function idHash(ids: ReadonlyArray<ArrayLike<unknown> | undefined>, i: number, seed: number, hash: HashScratch): void {
  const out = hash.out;
  let hi = seed;
  let lo = ~seed;
  for (let k = 0; k < ids.length; k++) {
    hashValue(ids[k]?.[i], seed, hash);
    combineHash(hi, lo, out[0]!, out[1]!, hash);
    hi = out[0]!;
    lo = out[1]!;
  }
}

/** Hashes a row's id tuple into hash.out (as idHash does for columns). */
function rowIdHash(row: Row, ids: string[], seed: number, hash: HashScratch): void {
  const out = hash.out;
  let hi = seed;
  let lo = ~seed;
  for (let k = 0; k < ids.length; k++) {
    hashValue(row[ids[k]!], seed, hash);
    combineHash(hi, lo, out[0]!, out[1]!, hash);
    hi = out[0]!;
    lo = out[1]!;
  }
}

/** A column batch as row objects (instants as Dates). */
function rowsOf(batch: ColumnBatch): Row[] {
  const columns = batch.columns.map((column, k) => (batch.timestamps?.[k] === true ? instantsAsDates(column) : column));
  const rows: Row[] = new Array(batch.length);
  for (let i = 0; i < batch.length; i++) {
    const row: Row = {};
    for (let k = 0; k < batch.names.length; k++) row[batch.names[k]!] = columns[k]![i];
    rows[i] = row;
  }
  return rows;
}

/** A column of epoch milliseconds (or null) as Dates (NaN an invalid Date), nulls kept. */
function instantsAsDates(column: ArrayLike<unknown>): unknown[] {
  return Array.from(column, (v) => (typeof v === "number" ? new Date(v) : v));
}

/**
 * Epoch milliseconds of a timestamp value: Date, ISO text (parsed into `parsed`, the scan's), or a
 * number (epoch seconds below 1e11, milliseconds above); NaN when it is none of these.
 */
export function epochMillis(v: unknown, parsed: ParsedText): number {
  if (v === null || v === undefined) return Number.NaN;
  if (v instanceof Date) return v.getTime();
  if (typeof v === "bigint") v = Number(v);
  if (typeof v === "number") return Math.abs(v) < 1e11 ? v * 1000 : v;
  if (typeof v !== "string") return Number.NaN;
  const t = classifyText(v, parsed);
  if (t === T_DATE || t === T_TIMESTAMP) return parsed.value[0]!;
  if (t === T_INTEGER || t === T_NUMBER) return epochMillis(parsed.value[0]!, parsed);
  return Number.NaN;
}
