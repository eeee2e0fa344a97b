/**
 * An open-addressing set of 64-bit hashes in one Int32Array (hi, lo pairs, linear probing).
 * About 8 bytes per slot at a load factor of at most 0.7: a million ids take 16 MB, not the
 * ~100 MB a Set of strings would.
 */

import { base64ToInt32, bytesToBase64 } from "./codec";

const MAX_LOAD = 0.7;

export class HashSet64 {
  private slots: Int32Array;
  private mask: number;
  size = 0;
  /** What the last warm() read (see there). */
  warmed = 0;

  constructor(initialCapacity = 16) {
    let cap = 16;
    while (cap * MAX_LOAD < initialCapacity) cap <<= 1;
    this.slots = new Int32Array(cap * 2);
    this.mask = cap - 1;
  }

  /** Adds (hi, lo); returns true when it was not present yet. */
  add(hi: number, lo: number): boolean {
    // (0, 0) marks an empty slot, so that one hash is remapped.
    if (hi === 0 && lo === 0) lo = 1;
    const slots = this.slots;
    const mask = this.mask;
    let i = lo & mask;
    for (;;) {
      const sh = slots[i * 2]!;
      const sl = slots[i * 2 + 1]!;
      if (sh === 0 && sl === 0) break;
      if (sh === hi && sl === lo) return false;
      i = (i + 1) & mask;
    }
    slots[i * 2] = hi;
    slots[i * 2 + 1] = lo;
    if (++this.size > (mask + 1) * MAX_LOAD) this.grow();
    return true;
  }

  /**
   * Reads the first slot of each of n hashes (their lo words), independent loads the CPU overlaps,
   * so that adding them next finds their cache lines at hand: a set of a million rows spans 16 MiB,
   * and one add after another waits for each miss in turn. Their sum is kept only so the loads stay.
   */
  warm(lo: Int32Array, n: number): void {
    const slots = this.slots;
    const mask = this.mask;
    let sum = 0;
    for (let i = 0; i < n; i++) sum = (sum + slots[(lo[i]! & mask) * 2]!) | 0;
    this.warmed = sum;
  }

  /** Calls fn for every stored hash. */
  forEach(fn: (hi: number, lo: number) => void): void {
    const slots = this.slots;
    for (let i = 0; i < slots.length; i += 2) {
      const hi = slots[i]!;
      const lo = slots[i + 1]!;
      if (hi !== 0 || lo !== 0) fn(hi, lo);
    }
  }

  /** Bytes held by the table. */
  get byteLength(): number {
    return this.slots.byteLength;
  }

  /** The stored hashes only (no empty slots), base64. */
  toState(): string {
    const packed = new Int32Array(this.size * 2);
    let j = 0;
    this.forEach((hi, lo) => {
      packed[j++] = hi;
      packed[j++] = lo;
    });
    return bytesToBase64(packed);
  }

  /** Rebuilds a set from toState(). */
  static fromState(state: string): HashSet64 {
    const packed = base64ToInt32(state);
    const set = new HashSet64(packed.length / 2);
    for (let i = 0; i < packed.length; i += 2) set.add(packed[i]!, packed[i + 1]!);
    return set;
  }

  /** Room for `extra` more hashes, made at once rather than by doubling step after step. */
  reserve(extra: number): void {
    let cap = this.mask + 1;
    while (cap * MAX_LOAD < this.size + extra) cap <<= 1;
    if (cap > this.mask + 1) this.rehash(cap);
  }

  private grow(): void {
    this.rehash((this.mask + 1) * 2);
  }

  private rehash(cap: number): void {
    const old = this.slots;
    const slots = new Int32Array(cap * 2);
    const mask = cap - 1;
    // Every hash is distinct and non-zero already: placed without add()'s checks.
    for (let k = 0; k < old.length; k += 2) {
      const hi = old[k]!;
      const lo = old[k + 1]!;
      if (hi === 0 && lo === 0) continue;
      let i = lo & mask;
      while (slots[i * 2] !== 0 || slots[i * 2 + 1] !== 0) i = (i + 1) & mask;
      slots[i * 2] = hi;
      slots[i * 2 + 1] = lo;
    }
    this.slots = slots;
    this.mask = mask;
  }
}
