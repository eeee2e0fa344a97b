/**
 * Distinct counting: an exact set of 64-bit value hashes while small, then HyperLogLog
 * (precision 14 by default: 16,384 one-byte registers, standard error 0.81 %) with Ertl's improved
 * estimator ("New cardinality estimation algorithms for HyperLogLog sketches", 2017), which
 * needs neither bias tables nor a linear-counting switch.
 *
 * A wide table's scan asks for fewer registers (profiler/budget.ts): precision p has 2^p registers,
 * standard error 1.04 / √(2^p), and counts exactly up to 2^p / 4 values.
 */

import { base64ToBytes, bytesToBase64 } from "./codec";
import { HashSet64 } from "./hash-set64";

/** Register index bits by default. */
export const HLL_PRECISION = 14;
/** Fewest register index bits a counter takes (1,024 registers, standard error 3.25 %). */
export const MIN_HLL_PRECISION = 10;
/** Exact counting up to this many distinct values by default (2^precision / 4). */
export const EXACT_DISTINCT_LIMIT = 4096;

export interface DistinctState {
  exact?: string;
  hll?: string;
}

export class DistinctCounter {
  /** Register index bits once the count is a sketch. */
  readonly precision: number;
  /** Exact counting up to this many distinct values. */
  readonly exactLimit: number;
  private exact: HashSet64 | null = new HashSet64();
  private registers: Uint8Array | null = null;

  constructor(precision = HLL_PRECISION) {
    if (!(Number.isInteger(precision) && precision >= MIN_HLL_PRECISION && precision <= HLL_PRECISION))
      throw new RangeError(`precision must be an integer from ${MIN_HLL_PRECISION} to ${HLL_PRECISION}`);
    this.precision = precision;
    this.exactLimit = (1 << precision) / 4;
  }

  /** Records one value by its 64-bit hash. */
  add(hi: number, lo: number): void {
    const exact = this.exact;
    if (exact !== null) {
      if (exact.add(hi, lo) && exact.size > this.exactLimit) this.toSketch();
      return;
    }
    addToRegisters(this.registers!, hi, lo, this.precision);
  }

  /** Room for `extra` more values while the count is exact (a batch's distinct values, at most past the limit). */
  reserve(extra: number): void {
    const exact = this.exact;
    if (exact !== null) exact.reserve(Math.min(extra, this.exactLimit + 1 - exact.size));
  }

  /** True while the count is exact. */
  get isExact(): boolean {
    return this.exact !== null;
  }

  /** The distinct count: exact while small, else the HyperLogLog estimate (rounded). */
  estimate(): number {
    if (this.exact !== null) return this.exact.size;
    return Math.round(estimateRegisters(this.registers!));
  }

  /** Folds another counter of the same precision in (union of the value sets). */
  merge(other: DistinctCounter): void {
    if (other.precision !== this.precision) throw new RangeError("counters of different precisions do not merge");
    if (other.exact !== null) {
      other.exact.forEach((hi, lo) => {
        this.add(hi, lo);
      });
      return;
    }
    if (this.exact !== null) this.toSketch();
    const mine = this.registers!;
    const theirs = other.registers!;
    for (let i = 0; i < mine.length; i++) if (theirs[i]! > mine[i]!) mine[i] = theirs[i]!;
  }

  /** JSON-safe state. */
  toState(): DistinctState {
    return this.exact !== null ? { exact: this.exact.toState() } : { hll: bytesToBase64(this.registers!) };
  }

  /** Rebuilds a counter from toState(). */
  static fromState(state: DistinctState): DistinctCounter {
    if (state.hll !== undefined) {
      const registers = base64ToBytes(state.hll);
      const counter = new DistinctCounter(Math.log2(registers.length));
      counter.exact = null;
      counter.registers = registers;
      return counter;
    }
    const counter = new DistinctCounter();
    if (state.exact !== undefined) {
      counter.exact = HashSet64.fromState(state.exact);
    }
    return counter;
  }

  private toSketch(): void {
    const registers = new Uint8Array(1 << this.precision);
    const precision = this.precision;
    this.exact!.forEach((hi, lo) => {
      addToRegisters(registers, hi, lo, precision);
    });
    this.exact = null;
    this.registers = registers;
  }
}

function addToRegisters(registers: Uint8Array, hi: number, lo: number, precision: number): void {
  const index = hi >>> (32 - precision);
  // Rank = leading zeros of the remaining 64 - p bits (32 - p of hi, 32 of lo) + 1, at most q + 1.
  const rest = hi << precision;
  let rank: number;
  if (rest !== 0) rank = Math.clz32(rest) + 1;
  else if (lo !== 0) rank = 32 - precision + Math.clz32(lo) + 1;
  else rank = 64 - precision + 1;
  if (rank > registers[index]!) registers[index] = rank;
}

/** Ertl's improved raw estimator over the register histogram. */
export function estimateRegisters(registers: Uint8Array): number {
  const m = registers.length;
  // Hash bits left for the rank (64 - precision).
  const q = 64 - Math.log2(m);
  const histogram = new Float64Array(q + 2);
  for (let i = 0; i < registers.length; i++) histogram[registers[i]!]!++;
  let z = m * tau(1 - histogram[q + 1]! / m);
  for (let k = q; k >= 1; k--) z = 0.5 * (z + histogram[k]!);
  z += m * sigma(histogram[0]! / m);
  return (m * m) / (2 * Math.LN2 * z);
}

function sigma(x: number): number {
  if (x === 1) return Number.POSITIVE_INFINITY;
  let y = 1;
  let z = x;
  for (;;) {
    x *= x;
    const previous = z;
    z += x * y;
    y += y;
    if (previous === z) return z;
  }
}

function tau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  for (;;) {
    x = Math.sqrt(x);
    const previous = z;
    y *= 0.5;
    z -= (1 - x) * (1 - x) * y;
    if (previous === z) return z / 3;
  }
}
