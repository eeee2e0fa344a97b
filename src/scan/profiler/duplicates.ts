/**
 * Exact duplicate count over id tuples: rows whose id hash was already seen. Mergeable:
 * a chunk's ids that the other chunk already holds are cross-chunk duplicates.
 */

import { HashSet64 } from "./hash-set64";

export interface DuplicateState {
  duplicates: number;
  ids: string;
}

export class DuplicateCounter {
  duplicates = 0;
  private ids = new HashSet64();

  /** Records one row's id hash. */
  add(hi: number, lo: number): void {
    if (!this.ids.add(hi, lo)) this.duplicates++;
  }

  /** Distinct id tuples seen. */
  get distinctIds(): number {
    return this.ids.size;
  }

  /** Folds another counter in, as if its rows had followed ours. */
  merge(other: DuplicateCounter): void {
    this.duplicates += other.duplicates;
    other.ids.forEach((hi, lo) => {
      if (!this.ids.add(hi, lo)) this.duplicates++;
    });
  }

  /** JSON-safe state. */
  toState(): DuplicateState {
    return { duplicates: this.duplicates, ids: this.ids.toState() };
  }

  /** Rebuilds a counter from toState(). */
  static fromState(state: DuplicateState): DuplicateCounter {
    const counter = new DuplicateCounter();
    counter.duplicates = state.duplicates;
    counter.ids = HashSet64.fromState(state.ids);
    return counter;
  }
}
