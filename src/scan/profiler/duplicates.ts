/**
 * Exact duplicate count over 64-bit hashes (id tuples, whole rows): rows whose hash was already
 * seen. The set of distinct hashes costs 11-23 bytes each (HashSet64); with a cap the counter
 * gives up, and frees the set, once it would hold more than that many.
 */

import { HashSet64 } from "./hash-set64";

export class DuplicateCounter {
  duplicates = 0;
  private ids: HashSet64 | null = new HashSet64();
  private distinct = 0;
  private readonly maxDistinct: number;

  /** `maxDistinct`: distinct hashes held at most (no cap by default). */
  constructor(maxDistinct = Number.POSITIVE_INFINITY) {
    this.maxDistinct = maxDistinct;
  }

  /** Records one row's hash; true when an earlier row had it (the row is a duplicate). */
  add(hi: number, lo: number): boolean {
    const ids = this.ids;
    if (ids === null) return false;
    if (!ids.add(hi, lo)) {
      this.duplicates++;
      return true;
    }
    if (++this.distinct > this.maxDistinct) this.ids = null;
    return false;
  }

  /** Loads the set's cells for the n hashes about to be added (see HashSet64.warm). */
  warm(lo: Int32Array, n: number): void {
    this.ids?.warm(lo, n);
  }

  /** False once the cap was passed: `duplicates` then covers only the rows before. */
  get counting(): boolean {
    return this.ids !== null;
  }

  /** Distinct hashes seen (up to the cap). */
  get distinctIds(): number {
    return this.distinct;
  }
}
