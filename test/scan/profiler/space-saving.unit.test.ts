import { describe, expect, it } from "vitest";
import { HashScratch, hashString, VALUE_SEED } from "../../../src/scan/profiler/hash";
import { kthLargest, rankByCount, SpaceSaving } from "../../../src/scan/profiler/space-saving";
import { prng } from "../../support/random";
import { viaJson } from "./via-json";

const scratch = new HashScratch();
const out = scratch.out;

function add(summary: SpaceSaving<string>, key: string): void {
  hashString(key, VALUE_SEED, scratch);
  summary.add(out[0]!, out[1]!, key);
}

function asRecord(summary: SpaceSaving<string>, limit: number): Record<string, number> {
  return Object.fromEntries(summary.top(limit).map((h) => [h.key, h.count]));
}

/** Zipf-like key stream: key i has weight 1 / (i + 1). */
function zipfStream(n: number, keys: number, seed: number): string[] {
  const random = prng(seed);
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < keys; i++) {
    total += 1 / (i + 1);
    cumulative.push(total);
  }
  return Array.from({ length: n }, () => {
    const u = random() * total;
    let lo = 0;
    let hi = keys - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! >= u) hi = mid;
      else lo = mid + 1;
    }
    return `key-${lo}`;
  });
}

describe("SpaceSaving", () => {
  it("is exact with fewer distinct keys than counters", () => {
    const summary = new SpaceSaving<string>(10);
    for (const k of ["a", "b", "a", "c", "a", "b"]) add(summary, k);
    expect(summary.overflowed).toBe(false);
    expect(asRecord(summary, 20)).toEqual({ a: 3, b: 2, c: 1 });
    expect(summary.top(1)[0]).toEqual({ key: "a", count: 3, error: 0 });
  });

  it("finds the 20 heaviest keys of a skewed stream of 200,000 values over 50,000 keys", () => {
    const stream = zipfStream(200_000, 50_000, 11);
    const exact = new Map<string, number>();
    for (const k of stream) exact.set(k, (exact.get(k) ?? 0) + 1);
    const summary = new SpaceSaving<string>(1000);
    for (const k of stream) add(summary, k);
    expect(summary.overflowed).toBe(true);
    const truth = [...exact.entries()].sort((a, b) => b[1] - a[1]).slice(0, 20);
    const reported = summary.top(20);
    expect(new Set(reported.slice(0, 10).map((h) => h.key))).toEqual(new Set(truth.slice(0, 10).map(([k]) => k)));
    for (const h of reported) {
      const real = exact.get(h.key)!;
      // Never underestimates; overestimates by at most the recorded error.
      expect(h.count).toBeGreaterThanOrEqual(real);
      expect(h.count - h.error).toBeLessThanOrEqual(real);
      expect(h.count - real).toBeLessThanOrEqual(stream.length / 1000);
    }
  });

  it("merges chunks exactly while small and within error when full", () => {
    const small = ["x", "y", "x", "z", "x", "y", "w"];
    const whole = new SpaceSaving<string>(10);
    const a = new SpaceSaving<string>(10);
    const b = new SpaceSaving<string>(10);
    small.forEach((k, i) => {
      add(whole, k);
      add(i % 2 === 0 ? a : b, k);
    });
    a.merge(b);
    expect(asRecord(a, 20)).toEqual(asRecord(whole, 20));
    expect(a.overflowed).toBe(false);

    const stream = zipfStream(200_000, 50_000, 12);
    const exact = new Map<string, number>();
    for (const k of stream) exact.set(k, (exact.get(k) ?? 0) + 1);
    const chunks = Array.from({ length: 8 }, () => new SpaceSaving<string>(1000));
    stream.forEach((k, i) => {
      add(chunks[i % 8]!, k);
    });
    const merged = chunks[0]!;
    for (const chunk of chunks.slice(1)) merged.merge(chunk);
    expect(merged.total).toBe(stream.length);
    const truth = [...exact.entries()].sort((x, y) => y[1] - x[1]).slice(0, 10);
    expect(new Set(merged.top(10).map((h) => h.key))).toEqual(new Set(truth.map(([k]) => k)));
    for (const h of merged.top(20)) {
      expect(h.count).toBeGreaterThanOrEqual(exact.get(h.key)!);
      expect(h.count - h.error).toBeLessThanOrEqual(exact.get(h.key)!);
    }
  });

  it("keeps its guarantee when batches of mostly distinct keys are folded in at once", () => {
    // 400,000 values over 200,000 Zipf-weighted keys, added as a profiler batch adds them: each
    // batch's distinct keys once, with their counts, then flushed (most keys miss the full summary).
    const capacity = 1000;
    const stream = zipfStream(400_000, 200_000, 13);
    const exact = new Map<string, number>();
    const summary = new SpaceSaving<string>(capacity);
    for (let start = 0; start < stream.length; start += 2000) {
      const batch = new Map<string, number>();
      for (const k of stream.slice(start, start + 2000)) batch.set(k, (batch.get(k) ?? 0) + 1);
      for (const [k, w] of batch) {
        exact.set(k, (exact.get(k) ?? 0) + w);
        hashString(k, VALUE_SEED, scratch);
        summary.add(out[0]!, out[1]!, k, w);
      }
      summary.flush();
    }
    expect(summary.total).toBe(stream.length);
    expect(summary.overflowed).toBe(true);
    const bound = stream.length / capacity;
    const reported = summary.top(capacity);
    expect(reported).toHaveLength(capacity);
    for (const h of reported) {
      const real = exact.get(h.key)!;
      expect(h.count).toBeGreaterThanOrEqual(real);
      expect(h.count - h.error).toBeLessThanOrEqual(real);
      expect(h.error).toBeLessThanOrEqual(bound);
    }
    // Every key heavier than total / capacity is monitored (here about 75 of them).
    const heavy = [...exact.entries()].filter(([, count]) => count > bound).map(([k]) => k);
    expect(heavy.length).toBeGreaterThan(50);
    const keys = new Set(reported.map((h) => h.key));
    for (const k of heavy) expect(keys.has(k)).toBe(true);
    // And a key not monitored had at most the minimum.
    const min = summary.minCount;
    expect(min).toBeLessThanOrEqual(bound);
    for (const [k, count] of exact) if (!keys.has(k)) expect(count).toBeLessThanOrEqual(min);
  });

  it("sums the weights of a key added twice before a flush", () => {
    // Misses of a full summary wait for flush(): a key added twice counts once, with both weights.
    const a = new SpaceSaving<string>(100);
    const b = new SpaceSaving<string>(100);
    for (let batch = 0; batch < 100; batch++) {
      const keys = Array.from({ length: 50 }, (_, j) => `k${(batch * 37 + j * j) % 3000}`);
      for (const k of keys) add(a, k);
      for (const k of keys) add(a, k);
      for (const k of keys) {
        hashString(k, VALUE_SEED, scratch);
        b.add(out[0]!, out[1]!, k, 2);
      }
      a.flush();
      b.flush();
    }
    expect(a.overflowed).toBe(true);
    expect(a.top(100)).toEqual(b.top(100));
    expect(a.minCount).toBe(b.minCount);
  });

  it("counts a batch of unique keys alike with or without uniqueUntilFlush", () => {
    // The profiler's batches hold each distinct value once: the pending queue then skips its
    // lookup. Batches of 2,500 keys overrun the queue (capacity 1,000), so folds also run mid-batch.
    const stream = zipfStream(100_000, 40_000, 21);
    const plain = new SpaceSaving<string>(1000);
    const unique = new SpaceSaving<string>(1000);
    for (let start = 0; start < stream.length; start += 5000) {
      const batch = new Map<string, number>();
      for (const k of stream.slice(start, start + 5000)) batch.set(k, (batch.get(k) ?? 0) + 1);
      unique.uniqueUntilFlush();
      for (const [k, w] of batch) {
        hashString(k, VALUE_SEED, scratch);
        plain.add(out[0]!, out[1]!, k, w);
        unique.add(out[0]!, out[1]!, k, w);
      }
      plain.flush();
      unique.flush();
    }
    expect(unique.overflowed).toBe(true);
    expect(unique.top(1000)).toEqual(plain.top(1000));
    expect(unique.minCount).toBe(plain.minCount);
    // After the flush a key may come many times again: its weights add up in the queue into one counter.
    for (let i = 0; i < 500; i++) add(unique, "heavy");
    const heavy = unique.top(1000).filter((h) => h.key === "heavy");
    expect(heavy).toHaveLength(1);
    expect(heavy[0]!.count - heavy[0]!.error).toBe(500);
  });

  it("selects the k-th largest count, ties included", () => {
    const random = prng(5);
    for (const n of [1, 2, 7, 100, 3001]) {
      const values = Array.from({ length: n }, () => Math.floor(random() * 20));
      const sorted = [...values].sort((x, y) => y - x);
      for (const k of [1, Math.ceil(n / 2), n]) {
        expect(kthLargest(Float64Array.from(values), n, k)).toBe(sorted[k - 1]);
      }
    }
  });

  it("counts the same with room reserved at once, up to its capacity", () => {
    const reserved = new SpaceSaving<string>(100);
    const grown = new SpaceSaving<string>(100);
    reserved.reserve(60);
    for (const key of zipfStream(5_000, 80, 9)) {
      add(reserved, key);
      add(grown, key);
    }
    reserved.reserve(1_000); // past the capacity: no more than it
    for (const key of zipfStream(5_000, 300, 10)) {
      add(reserved, key);
      add(grown, key);
    }
    expect(reserved.top(100)).toEqual(grown.top(100));
    expect(reserved.overflowed).toBe(true);
  });

  it("ranks texts by count, then by text, as a comparator sort does", () => {
    const random = prng(11);
    for (const n of [0, 1, 5, 40, 300]) {
      const texts = Array.from(
        new Set(
          Array.from(
            { length: n },
            () => `v${Math.floor(random() * 1000)}\u00e9${"Z".repeat(Math.floor(random() * 3))}`,
          ),
        ),
      );
      const counts = texts.map(() => 1 + Math.floor(random() * 4) * (random() < 0.5 ? 1 : 0.5));
      const expected = texts
        .map((text, i) => ({ text, count: counts[i]! }))
        .sort((a, b) => b.count - a.count || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
      for (const limit of [0, 1, 3, 20, texts.length]) {
        expect(rankByCount([...texts], [...counts], limit)).toEqual(expected.slice(0, limit));
      }
    }
    // Code unit order, as `<` compares: uppercase before lowercase, "10" before "9".
    expect(rankByCount(["b", "a", "B", "9", "10"], [1, 1, 1, 1, 1], 5).map((r) => r.text)).toEqual([
      "10",
      "9",
      "B",
      "a",
      "b",
    ]);
  });

  it("round-trips its state, full or not", () => {
    for (const keys of [50, 5000]) {
      const summary = new SpaceSaving<string>(100);
      for (let i = 0; i < 20_000; i++) add(summary, `k${(i * i) % keys}`);
      const restored = SpaceSaving.fromState<string>(viaJson(summary.toState()), summary.total);
      expect(restored.top(100)).toEqual(summary.top(100));
      for (let i = 0; i < 1000; i++) {
        add(summary, `k${i % 7}`);
        add(restored, `k${i % 7}`);
      }
      expect(restored.top(100)).toEqual(summary.top(100));
    }
  });
});
