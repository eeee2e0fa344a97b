/**
 * 64-bit hashing for the sketches (distinct counting, duplicate ids and rows, sampling).
 *
 * Two 32-bit lanes run over the same 32-bit blocks: lane A is MurmurHash3 x86_32, lane B an
 * xxHash32 round; each gets its own avalanche finalizer, then the lanes are cross-mixed as in
 * MurmurHash3 x64_128. Strings are hashed over their UTF-16 code units two at a time (no
 * UTF-8 encoding, no allocation). The result lands in a HashScratch's `out` (hi, lo) instead of a
 * fresh object, so hot loops allocate nothing.
 */

/**
 * Where the hash functions leave their result, and their working memory. Each scan has its own
 * (ProfileScratch), so no other scan can overwrite a result before it is read.
 */
export class HashScratch {
  /** The last hash: [hi, lo] as signed 32-bit words. */
  readonly out = new Int32Array(2);
  /** A number's IEEE-754 bits, read as two words (hashNumber). */
  readonly number = new Float64Array(1);
  readonly numberWords = new Int32Array(this.number.buffer);
  /** UTF-8 of a column's text (hashTexts), grown on first use and as needed. */
  textBytes = new Uint8Array(0);
}

/** Seed for value identities (distinct counts, id tuples). */
export const VALUE_SEED = 0x2f6b_1d3a;
/** Seed for sampling decisions, independent of VALUE_SEED. */
export const SAMPLE_SEED = 0x5bd1_e995;
/** Seed for attribute names, which key their values in whole-row identities. */
export const NAME_SEED = 0x3c6e_f372;

const C1 = 0xcc9e2d51 | 0;
const C2 = 0x1b873593 | 0;
const P1 = 0x9e3779b1 | 0;
const P2 = 0x85ebca77 | 0;
const P3 = 0xc2b2ae3d | 0;
const C3 = 0xc2b2ae35 | 0;

function roundA(a: number, block: number): number {
  let k = Math.imul(block, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  a ^= k;
  a = (a << 13) | (a >>> 19);
  return (Math.imul(a, 5) + 0xe6546b64) | 0;
}

function roundB(b: number, block: number): number {
  b = (b + Math.imul(block, P2)) | 0;
  b = (b << 13) | (b >>> 19);
  return Math.imul(b, P1);
}

function fmixA(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, C3);
  return h ^ (h >>> 16);
}
function fmixB(h: number): number {
  h ^= h >>> 15;
  h = Math.imul(h, P2);
  h ^= h >>> 13;
  h = Math.imul(h, P3);
  return h ^ (h >>> 16);
}

function finish(a: number, b: number, len: number, out: Int32Array): void {
  a = fmixA(a ^ len);
  b = fmixB((b + len) | 0);
  a = (a + b) | 0;
  b = (b + a) | 0;
  out[0] = a;
  out[1] = b;
}

/** Hashes a string's UTF-16 code units into scratch.out. */
export function hashString(s: string, seed: number, scratch: HashScratch): void {
  const len = s.length;
  let a = seed;
  let b = (seed + P1) | 0;
  let i = 0;
  for (; i + 1 < len; i += 2) {
    const block = s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16);
    a = roundA(a, block);
    b = roundB(b, block);
  }
  if (i < len) {
    const block = s.charCodeAt(i);
    let k = Math.imul(block, C1);
    k = (k << 15) | (k >>> 17);
    a ^= Math.imul(k, C2);
    b = roundB(b, block ^ 0x7f4a_7c15);
  }
  finish(a, b, len << 1, scratch.out);
}

const textEncoder = new TextEncoder();

/**
 * hashString(values[i], seed) of each of the first n values into (hi[i], lo[i]), when every value
 * is a string, null or undefined (those are skipped) and all of the text is ASCII; false otherwise,
 * with nothing usable written. ASCII text's UTF-8 bytes are its UTF-16 code units, so the column is
 * joined and encoded at once (two native calls) and hashed from the bytes: a typed array read is
 * several times cheaper than charCodeAt, which made up most of hashing a CSV value.
 */
export function hashTexts(
  values: ArrayLike<unknown>,
  n: number,
  seed: number,
  hi: Int32Array,
  lo: Int32Array,
  scratch: HashScratch,
): boolean {
  if (!Array.isArray(values)) return false;
  let chars = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v === "string") chars += v.length;
    else if (v !== null && v !== undefined) return false;
  }
  const text = n === values.length ? values.join("") : values.slice(0, n).join("");
  if (text.length !== chars) return false;
  if (scratch.textBytes.length < chars)
    scratch.textBytes = new Uint8Array(Math.max(chars, 2 * scratch.textBytes.length, 1 << 16));
  const bytes = scratch.textBytes;
  const out = scratch.out;
  const { read, written } = textEncoder.encodeInto(text, bytes);
  if (read !== chars || written !== chars) return false;
  let p = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v !== "string") continue;
    const len = v.length;
    const end = p + len;
    let a = seed;
    let b = (seed + P1) | 0;
    for (; p + 1 < end; p += 2) {
      const block = bytes[p]! | (bytes[p + 1]! << 16);
      a = roundA(a, block);
      b = roundB(b, block);
    }
    if (p < end) {
      const block = bytes[p]!;
      let k = Math.imul(block, C1);
      k = (k << 15) | (k >>> 17);
      a ^= Math.imul(k, C2);
      b = roundB(b, block ^ 0x7f4a_7c15);
      p++;
    }
    finish(a, b, len << 1, out);
    hi[i] = out[0]!;
    lo[i] = out[1]!;
  }
  return true;
}

/** Hashes a number by its IEEE-754 bits (0 and -0 alike) into scratch.out. */
export function hashNumber(x: number, seed: number, scratch: HashScratch): void {
  scratch.number[0] = x === 0 ? 0 : x;
  const words = scratch.numberWords;
  const w0 = words[0]!;
  const w1 = words[1]!;
  // The distinct tag keeps a number from colliding systematically with a 4-char string.
  let a = roundA(seed ^ 0x6e75_6d62, w0);
  let b = roundB((seed + P1) ^ 0x6e75_6d62, w0);
  a = roundA(a, w1);
  b = roundB(b, w1);
  finish(a, b, 9, scratch.out);
}

/** Hashes all bytes of a binary value into scratch.out. */
export function hashBytes(view: ArrayBufferView, seed: number, scratch: HashScratch): void {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  const len = bytes.length;
  // The distinct tag keeps bytes from colliding systematically with text of the same code units.
  let a = seed ^ 0x6279_7465;
  let b = (seed + P1) ^ 0x6279_7465;
  let i = 0;
  for (; i + 3 < len; i += 4) {
    const block = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    a = roundA(a, block);
    b = roundB(b, block);
  }
  let tail = 0;
  for (let shift = 0; i < len; i++, shift += 8) tail |= bytes[i]! << shift;
  a = roundA(a, tail);
  b = roundB(b, tail);
  finish(a, b, len, scratch.out);
}

/** Hashes two 32-bit words (e.g. a row position) into scratch.out. */
export function hashWords(w0: number, w1: number, seed: number, scratch: HashScratch): void {
  let a = roundA(seed ^ 0x776f_7264, w0);
  let b = roundB((seed + P1) ^ 0x776f_7264, w0);
  a = roundA(a, w1);
  b = roundB(b, w1);
  finish(a, b, 10, scratch.out);
}

/** Folds a 64-bit hash (hi, lo) into a running 64-bit state (stateHi, stateLo); result in scratch.out. */
export function combineHash(stateHi: number, stateLo: number, hi: number, lo: number, scratch: HashScratch): void {
  let a = roundA(stateHi, hi);
  let b = roundB(stateLo, hi);
  a = roundA(a, lo);
  b = roundB(b, lo);
  finish(a, b, 16, scratch.out);
}

/** Hashes any profiled value into scratch.out: strings by text, numbers by bits, others by a canonical form. */
export function hashValue(v: unknown, seed: number, scratch: HashScratch): void {
  switch (typeof v) {
    case "string":
      hashString(v, seed, scratch);
      return;
    case "number":
      hashNumber(v, seed, scratch);
      return;
    case "boolean":
      hashWords(v ? 1 : 0, 0x626f_6f6c, seed, scratch);
      return;
    case "bigint":
      hashString(v.toString(), seed ^ 0x6269_6769, scratch);
      return;
    case "undefined":
      hashWords(0, 0x6e75_6c6c, seed, scratch);
      return;
    default:
      if (v === null) hashWords(0, 0x6e75_6c6c, seed, scratch);
      else if (v instanceof Date) hashNumber(v.getTime(), seed ^ 0x6461_7465, scratch);
      else hashString(String(v), seed, scratch);
  }
}
