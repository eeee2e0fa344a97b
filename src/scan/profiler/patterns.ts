/**
 * Value shapes: ASCII and other letters become 'a' (lower) or 'A' (upper), digits '9',
 * any other character stays itself; a run of the same class collapses to one character
 * ("john.doe@example.com" → "a.a@a.a", "AB-1234" → "A-9"). Shapes longer than
 * MAX_PATTERN_LENGTH are cut and end in "…" so free text cannot blow up memory.
 *
 * The shape is written into a reusable buffer and interned through a small hash table, so a
 * value whose shape was seen before costs one pass over its characters and no allocation.
 * Shares come from a SpaceSaving summary over the interned shapes (keyed by their 64-bit
 * hash, computed once per interned shape). The buffer, the table and the tally (see
 * PatternCounter.tally) are a scan's (PatternScratch, in its ProfileScratch), shared by the
 * counters of its attributes.
 */

import { HashScratch, hashString } from "./hash";
import { FoldScratch, rankByCount, SpaceSaving, type SpaceSavingState } from "./space-saving";

/** The notation of shapes in words, for the alerts that show them. */
export const PATTERN_LEGEND =
  'A = upper-case letters, a = lower-case letters, 9 = digits (each a run of one or more); any other character stands for itself; "…" ends a cut shape';

/** Longest shape kept, in characters (before the ellipsis). */
export const MAX_PATTERN_LENGTH = 64;
const ELLIPSIS = 0x2026;
const LOWER = 0x61;
const UPPER = 0x41;
const DIGIT = 0x39;

/**
 * Class of each non-ASCII BMP code unit, filled on first use (0 = not computed yet). The one table
 * of the module that is written to, shared by every scan: an entry is a function of its code unit
 * alone, so whoever fills it writes the same value (computing all 65,536 at start-up would cost
 * the Worker's start).
 */
const wideClass = new Uint16Array(0x10000);

/** Class of each ASCII code unit. */
const asciiClass = Uint16Array.from({ length: 0x80 }, (_, c) =>
  c >= 0x61 && c <= 0x7a ? LOWER : c >= 0x41 && c <= 0x5a ? UPPER : c >= 0x30 && c <= 0x39 ? DIGIT : c,
);

function classOf(c: number): number {
  if (c < 0x80) return asciiClass[c]!;
  let cls = wideClass[c]!;
  if (cls === 0) {
    const ch = String.fromCharCode(c);
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    if (lower === upper) cls = c;
    else cls = ch === lower ? LOWER : UPPER;
    wideClass[c] = cls;
  }
  return cls;
}

/** A shape being built: its characters, length and FNV-1a hash (shapeInto). */
class ShapeBuffer {
  readonly chars = new Uint16Array(MAX_PATTERN_LENGTH + 1);
  /** [length, hash]. */
  readonly state = new Int32Array(2);
}

/** Writes the shape of s into `into`; returns its length. */
function shapeInto(s: string, into: ShapeBuffer): number {
  const buffer = into.chars;
  let length = 0;
  let previous = -1;
  let hash = 0x811c9dc5 | 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const cls = classOf(s.charCodeAt(i));
    if (cls === previous) continue;
    previous = cls;
    if (length === MAX_PATTERN_LENGTH) {
      buffer[length++] = ELLIPSIS;
      hash = Math.imul(hash ^ ELLIPSIS, 0x01000193);
      break;
    }
    buffer[length++] = cls;
    hash = Math.imul(hash ^ cls, 0x01000193);
  }
  into.state[0] = length;
  into.state[1] = hash;
  return length;
}

/** The shape of one value, as a new string (for tests and one-off use). */
export function shapeOf(s: string): string {
  const into = new ShapeBuffer();
  const length = shapeInto(s, into);
  return String.fromCharCode(...into.chars.subarray(0, length));
}

const INTERN_SIZE = 4096;

const PATTERN_SEED = 0x7061_7474;

/** Maps shape buffers to canonical strings (and their 64-bit hashes) without building a string per value. */
class ShapeInterner {
  private hashes = new Int32Array(INTERN_SIZE);
  private strings: Array<string | undefined> = new Array(INTERN_SIZE);
  private wideHi = new Int32Array(INTERN_SIZE);
  private wideLo = new Int32Array(INTERN_SIZE);
  private used = 0;

  /** Interns the shape in `shape`; returns its cell (see stringAt, hiAt, loAt). */
  intern(shape: ShapeBuffer, hash: HashScratch): number {
    const mask = INTERN_SIZE - 1;
    const bufferHash = shape.state[1]!;
    let i = bufferHash & mask;
    for (;;) {
      const candidate = this.strings[i];
      if (candidate === undefined) break;
      if (this.hashes[i] === bufferHash && sameAs(candidate, shape)) return i;
      i = (i + 1) & mask;
    }
    // A cache only: when half full, start over rather than grow.
    if (this.used >= INTERN_SIZE >> 1) {
      this.strings = new Array(INTERN_SIZE);
      this.used = 0;
      i = bufferHash & mask;
    }
    const made = String.fromCharCode.apply(null, shape.chars.subarray(0, shape.state[0]!) as unknown as number[]);
    this.strings[i] = made;
    this.hashes[i] = bufferHash;
    hashString(made, PATTERN_SEED, hash);
    this.wideHi[i] = hash.out[0]!;
    this.wideLo[i] = hash.out[1]!;
    this.used++;
    return i;
  }

  stringAt(cell: number): string {
    return this.strings[cell]!;
  }

  hiAt(cell: number): number {
    return this.wideHi[cell]!;
  }

  loAt(cell: number): number {
    return this.wideLo[cell]!;
  }
}

function sameAs(candidate: string, shape: ShapeBuffer): boolean {
  const length = shape.state[0]!;
  if (candidate.length !== length) return false;
  const chars = shape.chars;
  for (let i = 0; i < length; i++) if (candidate.charCodeAt(i) !== chars[i]) return false;
  return true;
}

/** The shape a NUMBER_SHAPE code stands for (what shapeOf gives the number's text). */
function numberShape(code: number): string {
  const sign = ["", "-", "+"][code % 3]!;
  const integer = Math.floor(code / 3) % 2 === 1 ? "9" : "";
  const point = Math.floor(code / 6) % 2 === 1 ? "." : "";
  const fraction = Math.floor(code / 12) % 2 === 1 ? "9" : "";
  const letter = ["", "a", "A"][Math.floor(code / 24) % 3]!;
  const exponentSign = ["", "-", "+"][Math.floor(code / 72) % 3]!;
  return `${sign}${integer}${point}${fraction}${letter}${exponentSign}${letter ? "9" : ""}`;
}

/** The shape a TIME_SHAPE code stands for (what shapeOf gives the text). */
function timeShape(code: number): string {
  if (code === 0) return "9-9-9";
  const c = code - 1;
  const separator = ["A", "a", " "][c % 3]!;
  const seconds = Math.floor(c / 3) % 2 === 1 ? ":9" : "";
  const fraction = ["", ".9", ",9"][Math.floor(c / 6) % 3]!;
  const offset = ["", "A", "a", "+9", "-9", "+9:9", "-9:9"][Math.floor(c / 18)]!;
  return `9-9-9${separator}9:9${seconds}${fraction}${offset}`;
}

export interface PatternState {
  total: number;
  summary: SpaceSavingState;
}

/** Number shape codes (value-types NUMBER_SHAPE): sign × digits × point × fraction × exponent letter × sign. */
const NUMBER_CODES = 216;
/** Time shape codes (value-types TIME_SHAPE). */
const TIME_CODES = 127;
/**
 * Tally slots of the shapes known without looking at the text: number codes, then time codes,
 * then "a" (booleans). Typed numbers and dates take their number or time code's slot.
 */
const TALLY_SLOTS = NUMBER_CODES + TIME_CODES + 1;
export const SLOT_INTEGER = 3;
export const SLOT_NEGATIVE_INTEGER = 4;
export const SLOT_DECIMAL = 21;
export const SLOT_NEGATIVE_DECIMAL = 22;
/** "9-9-9A9:9:9.9A", the shape of an ISO timestamp with milliseconds and "Z" (a Date's text). */
export const SLOT_ISO_TIMESTAMP = NUMBER_CODES + 28;
export const SLOT_LETTERS = NUMBER_CODES + TIME_CODES;

/**
 * What the pattern counters of one scan share (one per ProfileScratch): the shape buffer and the
 * interned shapes, the last known shape's hash, and the tally. Counters add one column at a time,
 * so one of each serves all of a scan's attributes; another scan has its own, so nothing here is
 * ever touched by two scans.
 */
export class PatternScratch {
  readonly shape = new ShapeBuffer();
  readonly interner = new ShapeInterner();
  readonly hash = new HashScratch();
  /** Working arrays of the counters' summaries when they fold (SpaceSaving). */
  readonly fold = new FoldScratch();
  /** The shape addShape hashed last, and its hash. */
  lastShape: string | null = null;
  readonly lastHash = new Int32Array(2);
  /** Per tally slot, its shape and the shape's hash, made on first use. */
  private readonly slotShapes: Array<string | undefined> = new Array(TALLY_SLOTS);
  readonly slotHi = new Int32Array(TALLY_SLOTS);
  readonly slotLo = new Int32Array(TALLY_SLOTS);
  /**
   * The tally (see PatternCounter.tally): one for all of the scan's counters (4 KB per attribute
   * otherwise, times every segment's attributes). The counter whose shapes it holds flushes them
   * before another one tallies, or before it is read.
   */
  readonly tallies = new Float64Array(TALLY_SLOTS);
  readonly tallied = new Int32Array(TALLY_SLOTS);
  talliedCount = 0;
  tallyOwner: PatternCounter | null = null;

  /** The shape of a tally slot (its hash in slotHi, slotLo). */
  slotShape(slot: number): string {
    let shape = this.slotShapes[slot];
    if (shape === undefined) {
      shape = slot < NUMBER_CODES ? numberShape(slot) : slot < SLOT_LETTERS ? timeShape(slot - NUMBER_CODES) : "a";
      hashString(shape, PATTERN_SEED, this.hash);
      this.slotHi[slot] = this.hash.out[0]!;
      this.slotLo[slot] = this.hash.out[1]!;
      this.slotShapes[slot] = shape;
    }
    return shape;
  }
}

/** Counts value shapes; shares are over the values counted here. */
export class PatternCounter {
  private summary: SpaceSaving<string>;
  private readonly scratch: PatternScratch;

  /** `scratch`: the scan's (ProfileScratch.patterns), shared by its counters. */
  constructor(scratch: PatternScratch, capacity?: number) {
    this.scratch = scratch;
    this.summary = new SpaceSaving<string>(capacity, scratch.fold);
  }

  /**
   * Counts a shape known by its slot (SLOT_*, or a number or time code's), `weight` times, in a
   * tally that flushTally() hands to the summary: a batch of numbers costs one summary update per
   * shape, not per value. The same counts as adding each at once, unless the summary evicts.
   */
  tally(slot: number, weight: number): void {
    const scratch = this.scratch;
    if (scratch.tallyOwner !== this) {
      scratch.tallyOwner?.flushTally();
      scratch.tallyOwner = this;
    }
    const tallies = scratch.tallies;
    if (tallies[slot] === 0) scratch.tallied[scratch.talliedCount++] = slot;
    tallies[slot]! += weight;
  }

  /** tally() of a number's text by its value-types NUMBER_SHAPE code. */
  tallyNumber(code: number, weight: number): void {
    this.tally(code, weight);
  }

  /** tally() of a date's or timestamp's text by its value-types TIME_SHAPE code. */
  tallyTime(code: number, weight: number): void {
    this.tally(NUMBER_CODES + code, weight);
  }

  /** Adds the tallied shapes to the summary, in the order first tallied. */
  flushTally(): void {
    const scratch = this.scratch;
    if (scratch.tallyOwner !== this) return;
    scratch.tallyOwner = null;
    const { tallies, tallied, slotHi, slotLo } = scratch;
    for (let k = 0; k < scratch.talliedCount; k++) {
      const slot = tallied[k]!;
      const shape = scratch.slotShape(slot);
      this.summary.add(slotHi[slot]!, slotLo[slot]!, shape, tallies[slot]!);
      tallies[slot] = 0;
    }
    scratch.talliedCount = 0;
  }

  /** Counts the shape of a text value seen `weight` times; returns the shape. */
  addText(s: string, weight = 1): string {
    const scratch = this.scratch;
    shapeInto(s, scratch.shape);
    const interner = scratch.interner;
    const cell = interner.intern(scratch.shape, scratch.hash);
    const shape = interner.stringAt(cell);
    this.summary.add(interner.hiAt(cell), interner.loAt(cell), shape, weight);
    return shape;
  }

  /** Counts an already known shape (typed values: "9", "9.9", …) seen `weight` times. */
  addShape(shape: string, weight = 1): void {
    const scratch = this.scratch;
    const last = scratch.lastHash;
    // A column repeats its shape: the last one's hash is kept (one comparison, no rehash).
    if (shape !== scratch.lastShape) {
      hashString(shape, PATTERN_SEED, scratch.hash);
      scratch.lastShape = shape;
      last[0] = scratch.hash.out[0]!;
      last[1] = scratch.hash.out[1]!;
    }
    this.summary.add(last[0]!, last[1]!, shape, weight);
  }

  /** Values counted. */
  get total(): number {
    this.flushTally();
    return this.summary.total;
  }

  /** The `limit` most common shapes with their share of the values counted. */
  top(limit: number): Array<{ pattern: string; share: number }> {
    this.flushTally();
    const total = this.summary.total;
    if (total === 0) return [];
    const shapes: string[] = [];
    const counts: number[] = [];
    this.summary.forEach((shape, count) => {
      shapes.push(shape);
      counts.push(count);
    });
    return rankByCount(shapes, counts, limit).map(({ text, count }) => ({ pattern: text, share: count / total }));
  }

  /** Folds another counter in. */
  merge(other: PatternCounter): void {
    this.flushTally();
    other.flushTally();
    this.summary.merge(other.summary);
  }

  /** JSON-safe state. */
  toState(): PatternState {
    this.flushTally();
    return { total: this.summary.total, summary: this.summary.toState() };
  }

  /** Rebuilds a counter from toState(), sharing `scratch` (a scan's) as the constructor does. */
  static fromState(state: PatternState, scratch: PatternScratch): PatternCounter {
    const counter = new PatternCounter(scratch);
    counter.summary = SpaceSaving.fromState<string>(state.summary, state.total, scratch.fold);
    return counter;
  }
}
