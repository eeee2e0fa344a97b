/** Exact duplicate count over id tuples: rows whose id hash was already seen. */

import { HashSet64 } from "./hash-set64";

export class DuplicateCounter {
  duplicates = 0;
  private readonly ids = new HashSet64();

  /** Records one row's id hash. */
  add(hi: number, lo: number): void {
    if (!this.ids.add(hi, lo)) this.duplicates++;
  }

  /** Distinct id tuples seen. */
  get distinctIds(): number {
    return this.ids.size;
  }
}
