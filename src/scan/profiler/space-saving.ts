/**
 * SpaceSaving heavy hitters (Metwally et al. 2005) with a fixed number of counters.
 * Counts are exact until a key has to be evicted; after that a count overestimates by at
 * most its recorded error. Merging follows Agarwal et al. ("Mergeable summaries", 2012).
 *
 * Keys are identified by the caller's 64-bit hash (hi, lo) in an open-addressing table of
 * typed arrays, not by a Map of strings: no string hashing by the engine, no allocation per
 * value, and the display key (any value) is only stored when a counter is (re)assigned.
 * The min-heap that finds the eviction victim is only built once the summary is full, and
 * it is lazy: an increment does not touch it (counts only grow, so a stale heap key is a
 * lower bound); a stale root is re-sifted when a victim is needed. A hit costs one probe.
 *
 * Once full, a filter (Homem & Carvalho, "Filtered Space-Saving", 2010) sits in front: an
 * unmonitored key only bumps a hashed bucket counter until that bucket reaches the minimum,
 * so a high-cardinality stream does not evict on every value. The bucket value upper-bounds
 * every unmonitored key's count in it and never exceeds the minimum, so the minimum stays an
 * upper bound for any unmonitored key, which is what merging relies on.
 *
 * Once full, a key that is neither monitored nor absorbed by its bucket waits in a pending
 * table until flush() (or any read): many of them (a batch of nearly unique values) are folded
 * in at once as the merge of the summary with the batch's exact counts (see foldPending), one
 * selection instead of an eviction, a heap re-sift and a key copy each; a few go one by one.
 */

import { base64ToFloat64, bytesToBase64 } from "./codec";
import { ownString } from "./own-string";

/** Default number of counters. */
export const SPACE_SAVING_DEFAULT_CAPACITY = 1000;

export type SummaryKey = string | number;

export interface SpaceSavingState {
  capacity: number;
  overflowed: boolean;
  keys: SummaryKey[];
  hashes: number[];
  counts: number[];
  errors: number[];
  filter?: string;
  heap?: number[];
  heapKeys?: number[];
}

export interface HeavyHitter<K> {
  key: K;
  count: number;
  error: number;
}

export class SpaceSaving<K = SummaryKey> {
  readonly capacity: number;
  /** True once a key was evicted (counts may then overestimate). */
  overflowed = false;
  /** Sum of all weights added. */
  total = 0;
  private size_ = 0;
  private keys: K[] = [];
  private hashHi: Int32Array;
  private hashLo: Int32Array;
  private counts: Float64Array;
  private errors: Float64Array;
  /** Open-addressing index: slot + 1 per cell, 0 when empty. */
  private table: Int32Array;
  private mask: number;
  /** Min-heap of slots by count; null until the summary first overflows. */
  private heap: Int32Array | null = null;
  private heapPos: Int32Array | null = null;
  /** Count of each slot when it was last placed in the heap (≤ its real count). */
  private heapKey: Float64Array | null = null;
  /** Filter buckets (see above); null until the summary is full. */
  private filter: Float64Array | null = null;
  /** Keys missing from the full summary since the last flush: hash, key, summed weight (see defer). */
  private pendingCount = 0;
  private pendingHi: Int32Array | null = null;
  private pendingLo: Int32Array | null = null;
  private pendingKeys: K[] = [];
  private pendingWeights: Float64Array | null = null;
  /** Open addressing over the pending keys (index + 1, 0 empty). */
  private pendingTable: Int32Array | null = null;
  /** True while the pending table holds entries (it is cleared at the next flush). */
  private pendingIndexed = false;
  /** Until the next flush each key comes at most once (see uniqueUntilFlush): no pending lookup. */
  private uniqueKeys = false;
  /** foldPending's working arrays: the scan's (ProfileScratch), else this summary's own. */
  private readonly fold: FoldScratch;

  constructor(capacity = SPACE_SAVING_DEFAULT_CAPACITY, fold: FoldScratch = new FoldScratch()) {
    this.capacity = capacity;
    this.fold = fold;
    const initial = Math.min(capacity, 16);
    this.hashHi = new Int32Array(initial);
    this.hashLo = new Int32Array(initial);
    this.counts = new Float64Array(initial);
    this.errors = new Float64Array(initial);
    this.table = new Int32Array(initial * 4);
    this.mask = this.table.length - 1;
  }

  /** Counts `weight` occurrences of the value hashed (hi, lo); `key` is what top() reports. */
  add(hi: number, lo: number, key: K, weight = 1): void {
    this.total += weight;
    const slot = this.find(hi, lo);
    if (slot >= 0) {
      this.counts[slot]! += weight;
      return;
    }
    const size = this.size_;
    if (size < this.capacity) {
      if (size === this.counts.length) this.growArrays();
      this.hashHi[size] = hi;
      this.hashLo[size] = lo;
      this.keys.push(owned(key));
      this.counts[size] = weight;
      this.errors[size] = 0;
      this.size_ = size + 1;
      this.insertIndex(size);
      return;
    }
    this.defer(hi, lo, key, weight);
  }

  /**
   * Says that until the next flush() the caller adds each key at most once (a batch's distinct
   * values): a key missing from the full summary then queues without the pending table, which
   * only served to add up a key's repeated weights.
   */
  uniqueUntilFlush(): void {
    this.uniqueKeys = true;
  }

  /** Adds the keys waiting since the summary was full (see above); reads call it first. */
  flush(): void {
    this.uniqueKeys = false;
    this.foldQueue();
  }

  /** The pending keys into the summary (a full queue folds without ending uniqueUntilFlush). */
  private foldQueue(): void {
    const n = this.pendingCount;
    if (n === 0) return;
    this.pendingCount = 0;
    if (this.pendingIndexed) {
      this.pendingTable!.fill(0);
      this.pendingIndexed = false;
    }
    const { pendingHi, pendingLo, pendingKeys, pendingWeights } = this;
    if (n >= this.capacity / FOLD_FRACTION) this.foldPending(n);
    else
      for (let p = 0; p < n; p++) this.evictFor(pendingHi![p]!, pendingLo![p]!, pendingKeys[p]!, pendingWeights![p]!);
    pendingKeys.fill(undefined as K, 0, n);
  }

  /** Queues a missing key of a full summary (weights of one key add up); flushes when the queue is full. */
  private defer(hi: number, lo: number, key: K, weight: number): void {
    if (this.pendingTable === null) {
      const size = this.capacity;
      this.pendingHi = new Int32Array(size);
      this.pendingLo = new Int32Array(size);
      this.pendingWeights = new Float64Array(size);
      this.pendingTable = new Int32Array(tableSizeFor(size));
    }
    const p = this.pendingCount;
    if (!this.uniqueKeys) {
      const table = this.pendingTable;
      const mask = table.length - 1;
      let cell = lo & mask;
      for (;;) {
        const q = table[cell]! - 1;
        if (q < 0) break;
        if (this.pendingLo![q] === lo && this.pendingHi![q] === hi) {
          this.pendingWeights![q]! += weight;
          return;
        }
        cell = (cell + 1) & mask;
      }
      table[cell] = p + 1;
      this.pendingIndexed = true;
    }
    this.overflowed = true;
    this.pendingCount = p + 1;
    this.pendingHi![p] = hi;
    this.pendingLo![p] = lo;
    this.pendingKeys[p] = key;
    this.pendingWeights![p] = weight;
    if (this.pendingCount === this.pendingHi!.length) this.foldQueue();
  }

  /** One missing key of a full summary: absorbed by its filter bucket, or it takes the minimum's counter. */
  private evictFor(hi: number, lo: number, key: K, weight: number): void {
    const victim = this.minSlot();
    const min = this.counts[victim]!;
    if (this.filter === null) this.filter = new Float64Array(filterSizeFor(this.capacity));
    const bucket = hi & (this.filter.length - 1);
    const seen = this.filter[bucket]!;
    this.overflowed = true;
    if (seen + weight < min) {
      this.filter[bucket] = seen + weight;
      return;
    }
    // The evicted key's count moves into its bucket, the new key starts from its bucket's.
    const victimBucket = this.hashHi[victim]! & (this.filter.length - 1);
    if (this.filter[victimBucket]! < min) this.filter[victimBucket] = min;
    this.removeIndex(victim);
    this.hashHi[victim] = hi;
    this.hashLo[victim] = lo;
    this.keys[victim] = owned(key);
    this.insertIndex(victim);
    this.errors[victim] = seen;
    this.counts[victim] = seen + weight;
    this.heapKey![victim] = seen + weight;
    this.siftDown(0);
  }

  /**
   * Folds the n pending keys in at once: the merge (Agarwal et al. 2012) of the summary with the
   * batch's exact counts. A pending key's count may have been at most its bucket's value, so it
   * bids with bucket + weight (error: the bucket), as evictFor would; bids below the minimum are
   * absorbed by their bucket, as evictFor does. Of the counters and the bids the `capacity`
   * largest stay (incumbents first on ties): one selection, no heap, and only kept keys are
   * copied. The counters and bids not kept go into their buckets, which stay at or below the new
   * minimum, so it still bounds every unmonitored key. A kept bid replaces a counter of at least
   * the old minimum, its bucket is at most that minimum, so the counts still sum to at most the
   * total weight: the minimum, hence every error, stays at most total / capacity.
   */
  private foldPending(n: number): void {
    const k = this.size_;
    const counts = this.counts;
    const filter = this.filter ?? new Float64Array(filterSizeFor(this.capacity));
    this.filter = filter;
    const fmask = filter.length - 1;
    let min = Number.POSITIVE_INFINITY;
    for (let i = 0; i < k; i++) if (counts[i]! < min) min = counts[i]!;
    const fold = this.fold;
    const bidCount = fold.bidCounts(n);
    const bidIndex = fold.bidIndexes(n);
    let bids = 0;
    for (let p = 0; p < n; p++) {
      const bucket = this.pendingHi![p]! & fmask;
      const bid = filter[bucket]! + this.pendingWeights![p]!;
      if (bid < min) {
        filter[bucket] = bid;
        continue;
      }
      bidCount[bids] = bid;
      bidIndex[bids++] = p;
    }
    if (bids === 0) return;
    // The capacity-th largest of counters and bids: counters above it stay, and at it first.
    const all = fold.counts(k + bids);
    all.set(counts.subarray(0, k));
    all.set(bidCount.subarray(0, bids), k);
    const threshold = kthLargest(all, k + bids, k);
    let above = 0;
    let at = 0;
    for (let i = 0; i < k; i++) {
      if (counts[i]! > threshold) above++;
      else if (counts[i]! === threshold) at++;
    }
    for (let b = 0; b < bids; b++) if (bidCount[b]! > threshold) above++;
    // Places at the threshold: incumbents take them first, bids the rest.
    let incumbentsAt = Math.min(at, k - above);
    let bidsAt = k - above - incumbentsAt;
    let victim = 0;
    for (let b = 0; b < bids; b++) {
      const bid = bidCount[b]!;
      const p = bidIndex[b]!;
      const hi = this.pendingHi![p]!;
      if (bid < threshold || (bid === threshold && bidsAt-- <= 0)) {
        const bucket = hi & fmask;
        if (filter[bucket]! < bid) filter[bucket] = bid;
        continue;
      }
      // The next counter that does not stay: below the threshold, or at it past the incumbents' places.
      for (;;) {
        const c = counts[victim]!;
        if (c < threshold || (c === threshold && incumbentsAt-- <= 0)) break;
        victim++;
      }
      const victimBucket = this.hashHi[victim]! & fmask;
      if (filter[victimBucket]! < counts[victim]!) filter[victimBucket] = counts[victim]!;
      const weight = this.pendingWeights![p]!;
      this.removeIndex(victim);
      this.hashHi[victim] = hi;
      this.hashLo[victim] = this.pendingLo![p]!;
      this.keys[victim] = owned(this.pendingKeys[p]!);
      this.insertIndex(victim);
      this.errors[victim] = bid - weight;
      counts[victim] = bid;
      victim++;
    }
    // Rebuilt when next needed (a few pending keys go one by one through the heap).
    this.heap = null;
    this.heapPos = null;
    this.heapKey = null;
  }

  /** Number of keys tracked. */
  get size(): number {
    return this.size_;
  }

  /** Smallest tracked count (what an untracked key may have had), 0 when nothing was evicted. */
  get minCount(): number {
    this.flush();
    if (!this.overflowed || this.size_ === 0) return 0;
    if (this.heap !== null) return this.counts[this.minSlot()]!;
    let min = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.size_; i++) if (this.counts[i]! < min) min = this.counts[i]!;
    return min;
  }

  /** The slot with the smallest count: re-sifts stale roots until the root is current. */
  private minSlot(): number {
    if (this.heap === null) this.buildHeap();
    const heap = this.heap!;
    const key = this.heapKey!;
    for (;;) {
      const root = heap[0]!;
      const count = this.counts[root]!;
      if (key[root] === count) return root;
      key[root] = count;
      this.siftDown(0);
    }
  }

  /** Every key tracked with its count and hash, in slot order: for callers that rank them their own way. */
  forEach(visit: (key: K, count: number, hi: number, lo: number) => void): void {
    this.flush();
    for (let i = 0; i < this.size_; i++) visit(this.keys[i]!, this.counts[i]!, this.hashHi[i]!, this.hashLo[i]!);
  }

  /** The `limit` most frequent keys (ties in slot order; callers sort further if needed). */
  top(limit: number): Array<HeavyHitter<K>> {
    this.flush();
    const order = Array.from({ length: this.size_ }, (_, i) => i);
    order.sort((a, b) => this.counts[b]! - this.counts[a]! || this.hashHi[a]! - this.hashHi[b]!);
    return order.slice(0, limit).map((i) => ({ key: this.keys[i]!, count: this.counts[i]!, error: this.errors[i]! }));
  }

  /** Folds another summary in: a key missing from a summary that evicted counts its minimum. */
  merge(other: SpaceSaving<K>): void {
    this.flush();
    other.flush();
    const minA = this.minCount;
    const minB = other.minCount;
    const entries: Entry<K>[] = [];
    for (let i = 0; i < this.size_; i++) {
      entries.push({
        hi: this.hashHi[i]!,
        lo: this.hashLo[i]!,
        key: this.keys[i]!,
        count: this.counts[i]! + minB,
        error: this.errors[i]! + minB,
      });
    }
    for (let i = 0; i < other.size_; i++) {
      const slot = this.find(other.hashHi[i]!, other.hashLo[i]!);
      if (slot >= 0) {
        entries[slot]!.count += other.counts[i]! - minB;
        entries[slot]!.error += other.errors[i]! - minB;
      } else {
        entries.push({
          hi: other.hashHi[i]!,
          lo: other.hashLo[i]!,
          key: other.keys[i]!,
          count: other.counts[i]! + minA,
          error: other.errors[i]! + minA,
        });
      }
    }
    // Deterministic order (count, then hash) so merges in any grouping keep the same keys.
    entries.sort((a, b) => b.count - a.count || a.hi - b.hi || a.lo - b.lo);
    const overflowed = this.overflowed || other.overflowed || entries.length > this.capacity;
    const total = this.total + other.total;
    const buckets = filterSizeFor(this.capacity);
    const filterA = this.filter?.length === buckets ? this.filter : null;
    const filterB = other.filter?.length === buckets ? other.filter : null;
    this.load(entries.slice(0, this.capacity), overflowed);
    this.total = total;
    if (!overflowed || this.size_ < this.capacity) return;
    // Each bucket bounds the unmonitored keys in it: both sides' bounds added, the keys
    // dropped here included, never above the new minimum.
    const min = this.minCount;
    const filter = new Float64Array(buckets);
    for (let b = 0; b < buckets; b++) {
      const bound = (filterA !== null ? filterA[b]! : minA) + (filterB !== null ? filterB[b]! : minB);
      filter[b] = Math.min(min, bound);
    }
    for (let i = this.capacity; i < entries.length; i++) {
      const b = entries[i]!.hi & (buckets - 1);
      filter[b] = Math.max(filter[b]!, Math.min(min, entries[i]!.count));
    }
    this.filter = filter;
  }

  /** JSON-safe state (Date keys become ISO strings; other keys must be strings or numbers). */
  toState(): SpaceSavingState {
    this.flush();
    const hashes: number[] = [];
    for (let i = 0; i < this.size_; i++) hashes.push(this.hashHi[i]!, this.hashLo[i]!);
    return {
      capacity: this.capacity,
      overflowed: this.overflowed,
      keys: this.keys.slice(0, this.size_).map((key) => (key instanceof Date ? key.toISOString() : key) as SummaryKey),
      hashes,
      counts: Array.from(this.counts.subarray(0, this.size_)),
      errors: Array.from(this.errors.subarray(0, this.size_)),
      ...(this.filter !== null ? { filter: bytesToBase64(this.filter) } : {}),
      // The heap layout decides ties between equal minimums: kept so a restored summary evicts alike.
      ...(this.heap !== null ? { heap: Array.from(this.heap), heapKeys: Array.from(this.heapKey!) } : {}),
    };
  }

  /** Rebuilds a summary from toState(); `total` is the weight sum kept by the caller. */
  static fromState<K = SummaryKey>(state: SpaceSavingState, total: number, fold?: FoldScratch): SpaceSaving<K> {
    const filter = state.filter !== undefined ? base64ToFloat64(state.filter) : null;
    const summary = new SpaceSaving<K>(state.capacity, fold);
    summary.load(
      state.keys.map((key, i) => ({
        hi: state.hashes[2 * i]!,
        lo: state.hashes[2 * i + 1]!,
        key: key as K,
        count: state.counts[i]!,
        error: state.errors[i]!,
      })),
      state.overflowed,
    );
    summary.total = total;
    summary.filter = filter;
    if (state.heap !== undefined && state.heapKeys !== undefined) {
      summary.heap = Int32Array.from(state.heap);
      summary.heapKey = Float64Array.from(state.heapKeys);
      summary.heapPos = new Int32Array(state.heap.length);
      for (let p = 0; p < state.heap.length; p++) summary.heapPos[state.heap[p]!] = p;
    }
    return summary;
  }

  private find(hi: number, lo: number): number {
    const table = this.table;
    const mask = this.mask;
    let i = lo & mask;
    for (;;) {
      const cell = table[i]!;
      if (cell === 0) return -1;
      const slot = cell - 1;
      if (this.hashLo[slot] === lo && this.hashHi[slot] === hi) return slot;
      i = (i + 1) & mask;
    }
  }

  private insertIndex(slot: number): void {
    const table = this.table;
    const mask = this.mask;
    let i = this.hashLo[slot]! & mask;
    while (table[i] !== 0) i = (i + 1) & mask;
    table[i] = slot + 1;
  }

  /** Deletes a slot from the index with backward-shift deletion (no tombstones). */
  private removeIndex(slot: number): void {
    const table = this.table;
    const mask = this.mask;
    let i = this.hashLo[slot]! & mask;
    while (table[i] !== slot + 1) i = (i + 1) & mask;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const cell = table[j]!;
      if (cell === 0) break;
      const home = this.hashLo[cell - 1]! & mask;
      // Move the cell back unless its home lies cyclically in (i, j].
      if (i <= j ? home > i && home <= j : home > i || home <= j) continue;
      table[i] = cell;
      i = j;
    }
    table[i] = 0;
  }

  private load(entries: Entry<K>[], overflowed: boolean): void {
    const n = entries.length;
    const length = Math.max(16, Math.min(this.capacity, n));
    this.hashHi = new Int32Array(length);
    this.hashLo = new Int32Array(length);
    this.counts = new Float64Array(length);
    this.errors = new Float64Array(length);
    this.table = new Int32Array(tableSizeFor(length));
    this.mask = this.table.length - 1;
    this.keys = [];
    for (let i = 0; i < n; i++) {
      const e = entries[i]!;
      this.hashHi[i] = e.hi;
      this.hashLo[i] = e.lo;
      this.keys.push(e.key);
      this.counts[i] = e.count;
      this.errors[i] = e.error;
      this.insertIndex(i);
    }
    this.size_ = n;
    this.overflowed = overflowed;
    this.heap = null;
    this.heapPos = null;
    this.heapKey = null;
    this.filter = null;
  }

  /** Room for `extra` more keys (at most the capacity), made at once rather than by doubling. */
  reserve(extra: number): void {
    const length = Math.min(this.capacity, this.size_ + extra);
    if (length > this.counts.length) this.resize(length);
  }

  private growArrays(): void {
    this.resize(Math.min(this.capacity, this.counts.length * 2));
  }

  private resize(length: number): void {
    const hashHi = new Int32Array(length);
    hashHi.set(this.hashHi);
    const hashLo = new Int32Array(length);
    hashLo.set(this.hashLo);
    const counts = new Float64Array(length);
    counts.set(this.counts);
    const errors = new Float64Array(length);
    errors.set(this.errors);
    this.hashHi = hashHi;
    this.hashLo = hashLo;
    this.counts = counts;
    this.errors = errors;
    this.table = new Int32Array(tableSizeFor(length));
    this.mask = this.table.length - 1;
    for (let i = 0; i < this.size_; i++) this.insertIndex(i);
  }

  private buildHeap(): void {
    const n = this.size_;
    this.heap = new Int32Array(n);
    this.heapPos = new Int32Array(n);
    this.heapKey = this.counts.slice(0, n);
    for (let i = 0; i < n; i++) {
      this.heap[i] = i;
      this.heapPos[i] = i;
    }
    for (let i = (n >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  /** Restores the heap below position p after its key grew. */
  private siftDown(p: number): void {
    const heap = this.heap!;
    const pos = this.heapPos!;
    const counts = this.heapKey!;
    const n = heap.length;
    const slot = heap[p]!;
    const count = counts[slot]!;
    for (;;) {
      let child = 2 * p + 1;
      if (child >= n) break;
      if (child + 1 < n && counts[heap[child + 1]!]! < counts[heap[child]!]!) child++;
      const childSlot = heap[child]!;
      if (counts[childSlot]! >= count) break;
      heap[p] = childSlot;
      pos[childSlot] = p;
      p = child;
    }
    heap[p] = slot;
    pos[slot] = p;
  }
}

interface Entry<K> {
  hi: number;
  lo: number;
  key: K;
  count: number;
  error: number;
}

/**
 * The `limit` texts of most count, by count descending then text ascending (UTF-16 code units, as
 * `<` compares strings). Only the entries that can make the cut are sorted, the texts of each count
 * by the native string sort: no comparator is called per pair.
 */
export function rankByCount(texts: string[], counts: number[], limit: number): Array<{ text: string; count: number }> {
  const n = texts.length;
  // The limit-th largest count: an entry below it cannot be ranked (ties at it all can).
  const threshold = limit < n ? kthLargest(Float64Array.from(counts), n, limit) : Number.NEGATIVE_INFINITY;
  const groups = new Map<number, string[]>();
  for (let i = 0; i < n; i++) {
    const count = counts[i]!;
    if (count < threshold) continue;
    const group = groups.get(count);
    if (group === undefined) groups.set(count, [texts[i]!]);
    else group.push(texts[i]!);
  }
  const ranked: Array<{ text: string; count: number }> = [];
  for (const count of Float64Array.from(groups.keys()).sort().reverse()) {
    for (const text of groups.get(count)!.sort()) {
      if (ranked.length === limit) return ranked;
      ranked.push({ text, count });
    }
  }
  return ranked;
}

/** A fold runs for at least capacity / FOLD_FRACTION pending keys; fewer go one by one. */
const FOLD_FRACTION = 8;

/**
 * Working arrays of foldPending, grown as needed: shared by the summaries of one scan
 * (ProfileScratch), which fold one at a time, rather than kept by each summary.
 */
export class FoldScratch {
  private bids = new Float64Array(0);
  private indexes = new Int32Array(0);
  private all = new Float64Array(0);

  /** Room for n bids' counts. */
  bidCounts(n: number): Float64Array {
    if (this.bids.length < n) this.bids = new Float64Array(Math.max(n, 2 * this.bids.length));
    return this.bids;
  }

  /** Room for n bids' pending indexes. */
  bidIndexes(n: number): Int32Array {
    if (this.indexes.length < n) this.indexes = new Int32Array(Math.max(n, 2 * this.indexes.length));
    return this.indexes;
  }

  /** Room for n counts of counters and bids together. */
  counts(n: number): Float64Array {
    if (this.all.length < n) this.all = new Float64Array(Math.max(n, 2 * this.all.length));
    return this.all;
  }
}

/**
 * The k-th largest (1-based) of a[0..n): a quickselect with three-way partitions (counts tie a
 * lot), middle element as pivot. Reorders a.
 */
export function kthLargest(a: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  const target = k - 1;
  for (;;) {
    if (lo >= hi) return a[lo]!;
    const pivot = a[(lo + hi) >>> 1]!;
    // Descending: [lo, lt) > pivot, [lt, i) == pivot, (gt, hi] < pivot.
    let lt = lo;
    let gt = hi;
    let i = lo;
    while (i <= gt) {
      const v = a[i]!;
      if (v > pivot) {
        a[i] = a[lt]!;
        a[lt++] = v;
        i++;
      } else if (v < pivot) {
        a[i] = a[gt]!;
        a[gt--] = v;
      } else i++;
    }
    if (target < lt) hi = lt - 1;
    else if (target > gt) lo = gt + 1;
    else return pivot;
  }
}

const owned = <K>(key: K): K => (typeof key === "string" ? (ownString(key) as K) : key);

/**
 * Filter buckets for `capacity` counters: 8 per counter (a power of two). On a stream of distinct
 * values a bucket absorbs values until it reaches the minimum count; the more buckets, the fewer
 * values evict a counter (about capacity / (capacity + buckets) of them).
 */
function filterSizeFor(capacity: number): number {
  return tableSizeFor(capacity) * 4;
}

/** Index cells for `slots` counters: a power of two at a load of at most 1/2. */
function tableSizeFor(slots: number): number {
  let size = 16;
  while (size < slots * 2) size <<= 1;
  return size;
}
