/**
 * Distinct counting: an exact set of 64-bit value hashes while small, then HyperLogLog
 * (precision 14: 16,384 one-byte registers, standard error 0.81 %) with Ertl's improved
 * estimator ("New cardinality estimation algorithms for HyperLogLog sketches", 2017), which
 * needs neither bias tables nor a linear-counting switch.
 */

import { base64ToBytes, bytesToBase64 } from "./codec";
import { HashSet64 } from "./hash-set64";

/** Register index bits. */
export const HLL_PRECISION = 14;
const M = 1 << HLL_PRECISION;
/** Hash bits left for the rank (64 - precision). */
const Q = 64 - HLL_PRECISION;
/** Exact counting up to this many distinct values. */
export const EXACT_DISTINCT_LIMIT = 4096;

export interface DistinctState {
  exact?: string;
  hll?: string;
}

export class DistinctCounter {
  private exact: HashSet64 | null = new HashSet64();
  private registers: Uint8Array | null = null;

  /** Records one value by its 64-bit hash. */
  add(hi: number, lo: number): void {
    const exact = this.exact;
    if (exact !== null) {
      if (exact.add(hi, lo) && exact.size > EXACT_DISTINCT_LIMIT) this.toSketch();
      return;
    }
    addToRegisters(this.registers!, hi, lo);
  }

  /** Room for `extra` more values while the count is exact (a batch's distinct values, at most past the limit). */
  reserve(extra: number): void {
    const exact = this.exact;
    if (exact !== null) exact.reserve(Math.min(extra, EXACT_DISTINCT_LIMIT + 1 - exact.size));
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

  /** Folds another counter in (union of the value sets). */
  merge(other: DistinctCounter): void {
    if (other.exact !== null) {
      other.exact.forEach((hi, lo) => {
        this.add(hi, lo);
      });
      return;
    }
    if (this.exact !== null) this.toSketch();
    const mine = this.registers!;
    const theirs = other.registers!;
    for (let i = 0; i < M; i++) if (theirs[i]! > mine[i]!) mine[i] = theirs[i]!;
  }

  /** JSON-safe state. */
  toState(): DistinctState {
    return this.exact !== null ? { exact: this.exact.toState() } : { hll: bytesToBase64(this.registers!) };
  }

  /** Rebuilds a counter from toState(). */
  static fromState(state: DistinctState): DistinctCounter {
    const counter = new DistinctCounter();
    if (state.hll !== undefined) {
      counter.exact = null;
      counter.registers = base64ToBytes(state.hll);
    } else if (state.exact !== undefined) {
      counter.exact = HashSet64.fromState(state.exact);
    }
    return counter;
  }

  private toSketch(): void {
    const registers = new Uint8Array(M);
    this.exact!.forEach((hi, lo) => {
      addToRegisters(registers, hi, lo);
    });
    this.exact = null;
    this.registers = registers;
  }
}

function addToRegisters(registers: Uint8Array, hi: number, lo: number): void {
  const index = hi >>> (32 - HLL_PRECISION);
  // Rank = leading zeros of the remaining 50 bits (18 of hi, 32 of lo) + 1, at most Q + 1.
  const rest = hi << HLL_PRECISION;
  let rank: number;
  if (rest !== 0) rank = Math.clz32(rest) + 1;
  else if (lo !== 0) rank = 32 - HLL_PRECISION + Math.clz32(lo) + 1;
  else rank = Q + 1;
  if (rank > registers[index]!) registers[index] = rank;
}

/** Ertl's improved raw estimator over the register histogram. */
export function estimateRegisters(registers: Uint8Array): number {
  const histogram = new Float64Array(Q + 2);
  for (let i = 0; i < registers.length; i++) histogram[registers[i]!]!++;
  const m = registers.length;
  let z = m * tau(1 - histogram[Q + 1]! / m);
  for (let k = Q; k >= 1; k--) z = 0.5 * (z + histogram[k]!);
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
