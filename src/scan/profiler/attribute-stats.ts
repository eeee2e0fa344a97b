/**
 * Everything the profiler accumulates for one attribute: exact counters and moments, plus
 * the sketches (distinct, quantiles, top values, patterns). One `add` per value, no
 * allocation on the common paths.
 *
 * Each add also leaves the value's 64-bit hash in valueHi/valueLo, for the builder's whole-row
 * duplicates, where nameHi/nameLo key it by attribute (two stores: the sketches hash the value
 * anyway).
 *
 * Memory per attribute at the full sizes: counters ~200 B; distinct ≤ 64 KB while exact (≤ 4096
 * hashes), then 16 KB of HLL registers; KLL ~12 KB (numeric values only); two SpaceSaving summaries
 * of up to `topCapacity` keys each (values are cut to MAX_TOP_VALUE_LENGTH characters). A wide
 * table's scan gives them smaller sizes (profiler/budget.ts).
 */

import type { AttributeProfile, ValueType } from "../../contracts/profile";
import { QUANTILE_POINTS } from "../../contracts/profile";
import type { DictionaryCodes } from "../formats/types";
import type { ColumnCodes, ColumnScratch } from "./column-codes";
import { DistinctCounter } from "./distinct";
import {
  combineHash,
  type HashScratch,
  hashBytes,
  hashNumber,
  hashString,
  hashTexts,
  hashWords,
  NAME_SEED,
  VALUE_SEED,
} from "./hash";
import { KllSketch } from "./kll";
import { ownString } from "./own-string";
import {
  PatternCounter,
  SLOT_DECIMAL,
  SLOT_INTEGER,
  SLOT_ISO_TIMESTAMP,
  SLOT_LETTERS,
  SLOT_NEGATIVE_DECIMAL,
  SLOT_NEGATIVE_INTEGER,
} from "./patterns";
import type { ProfileScratch } from "./scratch";
import { rankByCount, SpaceSaving } from "./space-saving";
import { StepTracker } from "./step";
import {
  classifyText,
  fitsType,
  mapDeclaredType,
  type ParsedText,
  T_BOOLEAN,
  T_DATE,
  T_EMPTY,
  T_INTEGER,
  T_NUMBER,
  T_STRING,
  T_TIMESTAMP,
  TYPE_NAMES,
} from "./value-types";

/** Top values and patterns reported per attribute. */
export const TOP_REPORTED = 20;
/**
 * Every value is reported, with its exact count, when an attribute has at most this many (airports,
 * states, product codes), so the categorical policies see a rare value surge, not only the top ones.
 */
export const MAX_LISTED_VALUES = 256;
/** Longer values are cut (with "…") before they become top-value keys. */
export const MAX_TOP_VALUE_LENGTH = 200;

/**
 * Text patterns of a mostly distinct batch (more distinct values than half its rows, of at least
 * PATTERN_SAMPLE_MIN_ROWS) are counted for one value in PATTERN_SAMPLE, chosen by
 * value hash, each weighted PATTERN_SAMPLE: shares stay unbiased estimates (standard error
 * √(share·(1−share)·PATTERN_SAMPLE / values): at most 0.45 points over 100,000 values, 0.14 over
 * 1 M) at an eighth of the cost of shaping every e-mail or comment. Typed values and parsed numbers and dates
 * are always counted: their shape costs nothing.
 */
export const PATTERN_SAMPLE = 8;
export const PATTERN_SAMPLE_MIN_ROWS = 512;

/**
 * What a top-value counter remembers of its value, turned into text only when reported: an
 * instant is its epoch milliseconds (addInstant).
 */
type TopKey = string | number;

export interface AttributeOptions {
  declaredType?: string;
  /** Infer types from string values (CSV); false keeps strings as strings (typed JSON). */
  inferFromText?: boolean;
  /** SpaceSaving counters for top values and for patterns. */
  topCapacity?: number;
  /** HyperLogLog precision of the distinct count (DistinctCounter; default 14). */
  hllPrecision?: number;
  /** KLL accuracy parameter of the quantiles (default KLL_DEFAULT_K). */
  kllK?: number;
}

export class AttributeStats {
  readonly name: string;
  /** Hash (NAME_SEED) of the name. */
  readonly nameHi: number;
  readonly nameLo: number;
  readonly declaredType: string | undefined;
  private readonly inferFromText: boolean;
  count = 0;
  nulls = 0;
  empties = 0;
  /** Hash (VALUE_SEED) of the value last added; (0, 0) when it was missing. */
  valueHi = 0;
  valueLo = 0;
  private readonly typeCounts = new Float64Array(TYPE_NAMES.length);
  private numericCount = 0;
  private mean = 0;
  private m2 = 0;
  private numericMin = Number.POSITIVE_INFINITY;
  private numericMax = Number.NEGATIVE_INFINITY;
  private kll: KllSketch | null = null;
  private readonly step = new StepTracker();
  private timeMin = Number.POSITIVE_INFINITY;
  private timeMax = Number.NEGATIVE_INFINITY;
  private trueCount = 0;
  private textMin: string | undefined = undefined;
  private textMax: string | undefined = undefined;
  /** First code units of textMin and textMax (past every code unit while unset). */
  private textMinFirst = 0x10000;
  private textMaxFirst = -1;
  /** False while textMin or textMax may be a slice of the current batch's text. */
  private textRangeOwned = true;
  private lengthSum = 0;
  private lengthCount = 0;
  private readonly distinct: DistinctCounter;
  private readonly kllK: number | undefined;
  private readonly values: SpaceSaving<TopKey>;
  private readonly patterns: PatternCounter;
  /** Text patterns sampled (see PATTERN_SAMPLE): the batch being added is mostly distinct. */
  private samplePatterns = false;
  /** The shape addText found for the text it profiled last (undefined when it did not shape it). */
  private textShape: string | undefined = undefined;
  /** The number the distinct value added last stands for (NaN when none): the scan's ColumnScratch.number. */
  private readonly distinctNumber: Float64Array;
  /** The scan's working memory (shared with its other attributes, never with another scan). */
  private readonly hash: HashScratch;
  private readonly parsed: ParsedText;
  private readonly column: ColumnScratch;

  /** `scratch`: the scan's (ProfileScratch), which addColumn fills and returns. */
  constructor(name: string, scratch: ProfileScratch, options: AttributeOptions = {}) {
    this.name = name;
    this.hash = scratch.hash;
    this.parsed = scratch.parsed;
    this.column = scratch.column;
    this.distinctNumber = scratch.column.number;
    hashString(name, NAME_SEED, this.hash);
    this.nameHi = this.hash.out[0]!;
    this.nameLo = this.hash.out[1]!;
    this.declaredType = options.declaredType;
    this.inferFromText = options.inferFromText ?? true;
    this.distinct = new DistinctCounter(options.hllPrecision);
    this.kllK = options.kllK;
    this.values = new SpaceSaving<TopKey>(options.topCapacity, scratch.fold);
    this.patterns = new PatternCounter(scratch.patterns, options.topCapacity);
  }

  /** Records `rows` missing values at once (rows seen before the attribute first appeared). */
  addMissing(rows: number): void {
    this.count += rows;
    this.nulls += rows;
  }

  /**
   * Records the first `n` values of a column (a batch). Each value is hashed once; equal values
   * of the batch are counted together (a small table keyed by the hash), and every sketch then
   * sees each distinct value once with its count as weight: type inference, patterns, top values
   * and the distinct count run per distinct value, not per row.
   *
   * When `rowHi`/`rowLo` are given, each non-null value's hash mixed with the attribute's name
   * hash is XORed into its row's entry (the whole-row identity of the builder).
   *
   * With `timestamps` the column's numbers are epoch milliseconds of instants (a Parquet timestamp
   * read without a Date per value, NaN an invalid one): profiled exactly as the Dates they stand for.
   * With `dictionary` the rows are also indexes into a dictionary of numbers or text (a Parquet
   * dictionary page): each dictionary value is hashed once per batch, not once per row.
   *
   * The codes returned are the scan's ColumnScratch: valid until the scan's next addColumn.
   */
  addColumn(
    values: ArrayLike<unknown>,
    n: number,
    rowHi: Int32Array | null,
    rowLo: Int32Array | null,
    timestamps = false,
    dictionary?: DictionaryCodes,
  ): ColumnCodes {
    const batch = this.column;
    batch.reserve(n);
    const { hi, lo, counts, firsts, table, codes } = batch;
    const hash = this.hash;
    const out = hash.out;
    table.fill(0);
    let distinct = 0;
    let nulls = 0;
    let others = 0;
    // A typed array of numbers (Parquet without nulls) holds no null and no other type: hashed by
    // its own access site, so the generic one below stays specialised to plain arrays.
    const typed = isNumberArray(values) ? values : null;
    // Timestamps hash as the Dates they stand for (hashScalar).
    const numberSeed = timestamps ? DATE_SEED : VALUE_SEED;
    const coded = dictionary !== undefined && !timestamps;
    if (coded) distinct = this.dedupeCoded(dictionary, n, batch);
    // A column of ASCII text (CSV) is hashed in one pass over its bytes (same hashes).
    const texts =
      !coded && typed === null && !timestamps && hashTexts(values, n, VALUE_SEED, batch.textHi, batch.textLo, hash);
    const { textHi, textLo } = batch;
    for (let i = coded ? n : 0; i < n; i++) {
      let h: number;
      let l: number;
      if (typed !== null) {
        const x = typed[i]!;
        if (timestamps && Number.isNaN(x)) {
          // An instant no Date holds: as an invalid Date, profiled as text.
          codes[i] = -2;
          others++;
          continue;
        }
        hashNumber(x, numberSeed, hash);
        h = out[0]!;
        l = out[1]!;
      } else {
        const v = values[i];
        if (v === null || v === undefined) {
          nulls++;
          codes[i] = -1;
          continue;
        }
        if (texts) {
          h = textHi[i]!;
          l = textLo[i]!;
        } else if (timestamps && typeof v === "number" && !Number.isNaN(v)) {
          hashNumber(v, DATE_SEED, hash);
          h = out[0]!;
          l = out[1]!;
        } else if (!timestamps && hashScalar(v, hash)) {
          h = out[0]!;
          l = out[1]!;
        } else {
          // Nested or binary values (rare): one by one, with their own identity.
          codes[i] = -2;
          others++;
          continue;
        }
      }
      const d = intern(batch, h, l, i, distinct);
      if (d === distinct) distinct++;
      codes[i] = d;
    }
    if (coded) nulls = batch.nulls;
    this.count += n - nulls;
    this.addMissing(nulls);
    this.samplePatterns = n >= PATTERN_SAMPLE_MIN_ROWS && distinct * 2 > n;
    batch.shapeWeight = this.samplePatterns ? PATTERN_SAMPLE : 1;
    // Room for the batch's values in the sketches at once (not doubling step after step).
    this.distinct.reserve(distinct);
    this.values.reserve(distinct);
    this.values.uniqueUntilFlush();
    // Count by count, in order of first appearance (ties in the sketches stay deterministic).
    const { types, numbers, shapes } = batch;
    const number = this.distinctNumber;
    for (let d = 0; d < distinct; d++) {
      this.textShape = undefined;
      number[0] = Number.NaN;
      if (timestamps) types[d] = this.addInstant(values[firsts[d]!] as number, hi[d]!, lo[d]!, counts[d]!);
      else types[d] = this.addDistinct(values[firsts[d]!], hi[d]!, lo[d]!, counts[d]!);
      numbers[d] = number[0]!;
      shapes[d] = this.textShape;
    }
    // The batch's values missing from a full top-value summary go in together (and no slice of
    // the batch's text stays queued).
    this.values.flush();
    const rows = rowHi !== null && rowLo !== null;
    if (rows) {
      // The row identity's share of each distinct value, mixed once per distinct value.
      for (let d = 0; d < distinct; d++) {
        combineHash(this.nameHi, this.nameLo, hi[d]!, lo[d]!, hash);
        hi[d] = out[0]!;
        lo[d] = out[1]!;
      }
    }
    batch.distinct = distinct;
    batch.timestamps = timestamps;
    if (!rows && others === 0) {
      this.patterns.flushTally();
      this.ownTextRange();
      return batch;
    }
    for (let i = 0; i < n; i++) {
      const d = codes[i]!;
      if (d >= 0) {
        if (rows) {
          rowHi![i]! ^= hi[d]!;
          rowLo![i]! ^= lo[d]!;
        }
      } else if (d === -2) {
        this.addObject(timestamps ? new Date(Number.NaN) : (values[i] as object));
        if (rows && (this.valueHi | this.valueLo) !== 0) {
          combineHash(this.nameHi, this.nameLo, this.valueHi, this.valueLo, hash);
          rowHi![i]! ^= out[0]!;
          rowLo![i]! ^= out[1]!;
        }
      }
    }
    this.patterns.flushTally();
    this.ownTextRange();
    return batch;
  }

  /**
   * addColumn's first pass for a dictionary-coded column: each row's distinct value (codes, counts,
   * firsts, hi/lo as the values' own hashes would give them), with each dictionary value hashed at
   * its first row of the batch. Returns the number of distinct values; the nulls go in batch.nulls.
   */
  private dedupeCoded(dictionary: DictionaryCodes, n: number, batch: ColumnScratch): number {
    const { counts, codes } = batch;
    const rows = dictionary.codes;
    const entries = dictionary.dictionary;
    batch.reserveEntries(entries.length);
    const { entryStamps: stamps, entrySlots: slots } = batch;
    const stamp = ++batch.entryGeneration;
    const hash = this.hash;
    const out = hash.out;
    let distinct = 0;
    let nulls = 0;
    for (let i = 0; i < n; i++) {
      const c = rows[i]!;
      if (c < 0) {
        nulls++;
        codes[i] = -1;
        continue;
      }
      if (stamps[c] === stamp) {
        const d = slots[c]!;
        counts[d]!++;
        codes[i] = d;
        continue;
      }
      // Numbers and text hash as the values themselves would (hashScalar; hashTexts agrees on ASCII).
      const v = entries[c];
      if (typeof v === "number") hashNumber(v, VALUE_SEED, hash);
      else hashString(v as string, VALUE_SEED, hash);
      const d = intern(batch, out[0]!, out[1]!, i, distinct);
      if (d === distinct) distinct++;
      codes[i] = d;
      stamps[c] = stamp;
      slots[c] = d;
    }
    batch.nulls = nulls;
    return distinct;
  }

  /** The text minimum and maximum as strings of their own, not slices of the batch's text (see ownString). */
  private ownTextRange(): void {
    if (this.textRangeOwned) return;
    if (this.textMin !== undefined) this.textMin = ownString(this.textMin);
    if (this.textMax !== undefined) this.textMax = ownString(this.textMax);
    this.textRangeOwned = true;
  }

  /** One distinct value (hashed into hi, lo by hashScalar) seen `w` times; returns its type code. */
  private addDistinct(v: unknown, hi: number, lo: number, w: number): number {
    switch (typeof v) {
      case "string":
        return this.addText(v, this.inferFromText, hi, lo, w);
      case "number":
        return this.addNumber(v, hi, lo, w);
      case "boolean":
        return this.addBoolean(v, hi, lo, w);
      case "bigint":
        return this.addBigInt(v, hi, lo, w);
      default:
        return this.addDate(v as Date, hi, lo, w);
    }
  }

  /** Returns the text's type code; a number's value goes to distinctNumber, a text's shape to textShape. */
  private addText(s: string, infer: boolean, hi: number, lo: number, w: number): number {
    this.lengthSum += s.length * w;
    this.lengthCount += w;
    this.distinct.add(hi, lo);
    this.values.add(hi, lo, s.length > MAX_TOP_VALUE_LENGTH ? `${s.slice(0, MAX_TOP_VALUE_LENGTH)}…` : s, w);
    const parsed = this.parsed;
    let t = classifyText(s, parsed);
    if (t === T_EMPTY) {
      this.empties += w;
      return T_EMPTY;
    }
    if (!infer) t = T_STRING;
    this.typeCounts[t]! += w;
    // Numbers, dates and timestamps: the shape their parse found, no second pass over the text.
    if (t === T_INTEGER || t === T_NUMBER) this.patterns.tallyNumber(parsed.numberShape[0]!, w);
    else if (t === T_DATE || t === T_TIMESTAMP) this.patterns.tallyTime(parsed.timeShape[0]!, w);
    else if (!this.samplePatterns) this.textShape = this.patterns.addText(s, w);
    else if ((hi & (PATTERN_SAMPLE - 1)) === 0) this.textShape = this.patterns.addText(s, w * PATTERN_SAMPLE);
    switch (t) {
      case T_INTEGER:
      case T_NUMBER: {
        const x = parsed.value[0]!;
        this.distinctNumber[0] = x;
        this.addNumeric(x, w);
        this.step.addDecimal(x, parsed.decimals[0]!);
        return t;
      }
      case T_DATE:
      case T_TIMESTAMP:
        this.addTime(parsed.value[0]!);
        return t;
      case T_BOOLEAN:
        this.trueCount += parsed.value[0]! * w;
        return t;
      default: {
        // The first code unit settles most comparisons of distinct text (s is not empty here).
        const c = s.charCodeAt(0);
        if (c <= this.textMinFirst && (this.textMin === undefined || s < this.textMin)) {
          this.textMin = s;
          this.textMinFirst = c;
          this.textRangeOwned = false;
        }
        if (c >= this.textMaxFirst && (this.textMax === undefined || s > this.textMax)) {
          this.textMax = s;
          this.textMaxFirst = c;
          this.textRangeOwned = false;
        }
        return t;
      }
    }
  }

  private addNumber(x: number, hi: number, lo: number, w: number): number {
    const integral = Number.isInteger(x);
    this.distinctNumber[0] = x;
    this.typeCounts[integral ? T_INTEGER : T_NUMBER]! += w;
    this.distinct.add(hi, lo);
    this.values.add(hi, lo, x === 0 ? 0 : x, w);
    const magnitude = Math.abs(x);
    if (integral && magnitude < 1e21) this.patterns.tally(x < 0 ? SLOT_NEGATIVE_INTEGER : SLOT_INTEGER, w);
    else if (magnitude >= 1e-6 && magnitude < 1e21)
      this.patterns.tally(x < 0 ? SLOT_NEGATIVE_DECIMAL : SLOT_DECIMAL, w);
    else this.patterns.addText(String(x), w);
    this.addNumeric(x, w);
    this.step.addFloat(x);
    return integral ? T_INTEGER : T_NUMBER;
  }

  private addBoolean(b: boolean, hi: number, lo: number, w: number): number {
    this.typeCounts[T_BOOLEAN]! += w;
    this.distinct.add(hi, lo);
    this.values.add(hi, lo, b ? "true" : "false", w);
    this.patterns.tally(SLOT_LETTERS, w);
    if (b) this.trueCount += w;
    return T_BOOLEAN;
  }

  private addBigInt(v: bigint, hi: number, lo: number, w: number): number {
    const text = v.toString();
    this.distinctNumber[0] = Number(v);
    this.typeCounts[T_INTEGER]! += w;
    this.distinct.add(hi, lo);
    this.values.add(hi, lo, text, w);
    this.patterns.tally(v < 0n ? SLOT_NEGATIVE_INTEGER : SLOT_INTEGER, w);
    for (let k = 0; k < w; k++) this.addNumeric(Number(v), 1);
    this.step.addDecimal(Number(v), 0);
    return T_INTEGER;
  }

  private addDate(v: Date, hi: number, lo: number, w: number): number {
    return this.addInstant(v.getTime(), hi, lo, w);
  }

  /**
   * A valid instant as epoch milliseconds (a Date's, or a column of instants'). Its top-value key
   * is the number: topValues tells it from a plain number by its hash (DATE_SEED), so no Date is
   * made or kept per value.
   */
  private addInstant(ms: number, hi: number, lo: number, w: number): number {
    this.typeCounts[T_TIMESTAMP]! += w;
    this.distinct.add(hi, lo);
    this.values.add(hi, lo, ms, w);
    this.patterns.tally(SLOT_ISO_TIMESTAMP, w);
    this.addTime(ms);
    return T_TIMESTAMP;
  }

  /** Nested JSON, binary values and invalid dates: profiled as text, never inferred as a scalar type. */
  private addObject(v: object): void {
    if (v instanceof Date) {
      this.addTextValue("Invalid Date");
      return;
    }
    if (!ArrayBuffer.isView(v)) {
      this.addTextValue(safeJson(v));
      return;
    }
    this.addTextValue(bytesToHex(v));
    // The hex text stops at 64 bytes: the value's identity is all of its bytes.
    hashBytes(v, VALUE_SEED, this.hash);
    this.valueHi = this.hash.out[0]!;
    this.valueLo = this.hash.out[1]!;
  }

  /** A text value (not inferred) with its hash as the value's identity. */
  private addTextValue(s: string): void {
    hashString(s, VALUE_SEED, this.hash);
    const hi = this.hash.out[0]!;
    const lo = this.hash.out[1]!;
    this.valueHi = hi;
    this.valueLo = lo;
    this.addText(s, false, hi, lo, 1);
  }

  /** A numeric value seen `w` times (Welford's update with weights: West 1979). */
  private addNumeric(x: number, w: number): void {
    // NaN and ±Infinity count as numbers but cannot enter moments or quantiles.
    if (!Number.isFinite(x)) return;
    const n = this.numericCount + w;
    this.numericCount = n;
    const delta = x - this.mean;
    this.mean += w === 1 ? delta / n : (delta * w) / n;
    this.m2 += w * delta * (x - this.mean);
    if (x < this.numericMin) this.numericMin = x;
    if (x > this.numericMax) this.numericMax = x;
    if (this.kll === null) this.kll = new KllSketch(this.kllK);
    this.kll.add(x, w);
  }

  private addTime(ms: number): void {
    if (ms < this.timeMin) this.timeMin = ms;
    if (ms > this.timeMax) this.timeMax = ms;
  }

  /** The dominant type code of the non-null, non-empty values (integers and numbers pool). */
  private inferredType(): number {
    const tc = this.typeCounts;
    const numeric = tc[T_INTEGER]! + tc[T_NUMBER]!;
    let best = tc[T_NUMBER]! > 0 ? T_NUMBER : T_INTEGER;
    let bestCount = numeric;
    for (const t of [T_BOOLEAN, T_DATE, T_TIMESTAMP, T_STRING]) {
      if (tc[t]! > bestCount) {
        best = t;
        bestCount = tc[t]!;
      }
    }
    if (bestCount > 0) return best;
    return this.declaredType !== undefined ? TYPE_NAMES.indexOf(mapDeclaredType(this.declaredType)) : T_STRING;
  }

  /** The type code values are judged against: the declared type's, else the inferred one. */
  private expectedType(inferred: number): number {
    return this.declaredType !== undefined ? TYPE_NAMES.indexOf(mapDeclaredType(this.declaredType)) : inferred;
  }

  /** Whether a value of type code t is of the attribute's type (what type_mismatches counts against). */
  typeFits(): (t: number) => boolean {
    const expected = this.expectedType(this.inferredType());
    const declared = this.declaredType !== undefined;
    return (t) => fitsType(t, expected, declared);
  }

  /** The attribute's profile. */
  finish(): AttributeProfile {
    const inferred = this.inferredType();
    const declared = this.declaredType !== undefined;
    const expected = this.expectedType(inferred);
    const typeCounts: Partial<Record<ValueType, number>> = {};
    let mismatches = 0;
    for (let t = 0; t < this.typeCounts.length; t++) {
      const c = this.typeCounts[t]!;
      if (c === 0) continue;
      typeCounts[TYPE_NAMES[t]!] = c;
      if (!fitsType(t, expected, declared)) mismatches += c;
    }
    const profile: AttributeProfile = {
      name: this.name,
      inferred_type: TYPE_NAMES[inferred]!,
      count: this.count,
      nulls: this.nulls,
      empties: this.empties,
      distinct: this.distinct.estimate(),
      distinct_exact: this.distinct.isExact,
      top_values: this.topValues(),
      type_counts: typeCounts,
      type_mismatches: mismatches,
      patterns: this.patterns.top(TOP_REPORTED),
    };
    if (declared) profile.declared_type = this.declaredType;
    this.setRange(profile, inferred);
    if (inferred === T_STRING && this.lengthCount > 0) profile.mean_length = this.lengthSum / this.lengthCount;
    return profile;
  }

  private setRange(profile: AttributeProfile, inferred: number): void {
    switch (inferred) {
      case T_INTEGER:
      case T_NUMBER:
        if (this.numericCount === 0) return;
        profile.min = this.numericMin;
        profile.max = this.numericMax;
        profile.mean = this.mean;
        // Sample standard deviation, as SQL's stddev_samp (undefined for one value).
        if (this.numericCount > 1) profile.stddev = Math.sqrt(this.m2 / (this.numericCount - 1));
        profile.quantiles = this.kll!.quantiles(QUANTILE_POINTS);
        if (this.step.step !== undefined) profile.step = this.step.step;
        return;
      case T_DATE:
      case T_TIMESTAMP:
        if (this.timeMin > this.timeMax) return;
        profile.min = isoTime(this.timeMin, inferred === T_DATE);
        profile.max = isoTime(this.timeMax, inferred === T_DATE);
        return;
      case T_BOOLEAN: {
        const booleans = this.typeCounts[T_BOOLEAN]!;
        if (booleans === 0) return;
        profile.min = this.trueCount < booleans ? "false" : "true";
        profile.max = this.trueCount > 0 ? "true" : "false";
        return;
      }
      default:
        if (this.textMin !== undefined) profile.min = this.textMin;
        if (this.textMax !== undefined) profile.max = this.textMax;
    }
  }

  private topValues(): Array<{ value: string; count: number }> {
    let texts: string[] = [];
    let counts: number[] = [];
    let allText = true;
    this.values.forEach((key, count, hi, lo) => {
      if (typeof key === "string") texts.push(key);
      else {
        allText = false;
        texts.push(isInstantKey(key, hi, lo, this.hash) ? isoTime(key, false) : String(key));
      }
      counts.push(count);
    });
    if (!allText) {
      // A typed number and its text form (or 0 and -0) are one value once shown as strings.
      const merged = new Map<string, number>();
      for (let i = 0; i < texts.length; i++) merged.set(texts[i]!, (merged.get(texts[i]!) ?? 0) + counts[i]!);
      texts = [...merged.keys()];
      counts = [...merged.values()];
    }
    const every = !this.values.overflowed && texts.length <= MAX_LISTED_VALUES;
    return rankByCount(texts, counts, every ? texts.length : TOP_REPORTED).map(({ text, count }) => ({
      value: text,
      count,
    }));
  }
}

/** The seed a valid Date's instant is hashed with (hashScalar): not a plain number's. */
const DATE_SEED = VALUE_SEED ^ 0x6461_7465;

/** True when a number top-value key was an instant's (addInstant): its hash is the Date's. */
function isInstantKey(key: number, hi: number, lo: number, hash: HashScratch): boolean {
  hashNumber(key, DATE_SEED, hash);
  return hash.out[0] === hi && hash.out[1] === lo;
}

/**
 * Hashes a scalar value (VALUE_SEED) into hash.out: strings by text, numbers by bits, booleans,
 * bigints by their decimal text (so 5n is "5"), valid dates by instant. False, with hash.out
 * untouched, for anything else (nested, binary, an invalid date).
 */
function hashScalar(v: unknown, hash: HashScratch): boolean {
  switch (typeof v) {
    case "string":
      hashString(v, VALUE_SEED, hash);
      return true;
    case "number":
      hashNumber(v, VALUE_SEED, hash);
      return true;
    case "boolean":
      hashWords(v ? 1 : 0, 0x626f_6f6c, VALUE_SEED, hash);
      return true;
    case "bigint":
      hashString(v.toString(), VALUE_SEED, hash);
      return true;
    default: {
      if (!(v instanceof Date)) return false;
      const ms = v.getTime();
      if (Number.isNaN(ms)) return false;
      hashNumber(ms, DATE_SEED, hash);
      return true;
    }
  }
}

/** True for the typed arrays whose elements are numbers (not bigints, not bytes as values). */
function isNumberArray(values: ArrayLike<unknown>): values is ArrayLike<number> {
  return (
    values instanceof Float64Array ||
    values instanceof Float32Array ||
    values instanceof Int32Array ||
    values instanceof Uint32Array ||
    values instanceof Int16Array ||
    values instanceof Uint16Array ||
    values instanceof Int8Array
  );
}

/**
 * The index of the batch's distinct value hashed (h, l), counted once more; a value not seen yet
 * becomes distinct value number `distinct`, first seen at row i (the caller then counts it).
 */
function intern(batch: ColumnScratch, h: number, l: number, i: number, distinct: number): number {
  const table = batch.table;
  const mask = table.length - 1;
  let cell = l & mask;
  for (;;) {
    const d = table[cell]! - 1;
    if (d < 0) {
      batch.hi[distinct] = h;
      batch.lo[distinct] = l;
      batch.counts[distinct] = 1;
      batch.firsts[distinct] = i;
      table[cell] = distinct + 1;
      return distinct;
    }
    if (batch.lo[d] === l && batch.hi[d] === h) {
      batch.counts[d]!++;
      return d;
    }
    cell = (cell + 1) & mask;
  }
}

/** ISO 8601 UTC text of epoch milliseconds (date only when `dateOnly`). */
export function isoTime(ms: number, dateOnly: boolean): string {
  const iso = new Date(ms).toISOString();
  return dateOnly ? iso.slice(0, iso.indexOf("T")) : iso;
}

function safeJson(v: object): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

function bytesToHex(view: ArrayBufferView): string {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, Math.min(view.byteLength, 64));
  let hex = "0x";
  for (let i = 0; i < bytes.length; i++) hex += bytes[i]!.toString(16).padStart(2, "0");
  return view.byteLength > 64 ? `${hex}…` : hex;
}
