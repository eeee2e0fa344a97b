import { describe, expect, it } from "vitest";
import { HASH, hashString, VALUE_SEED } from "../../../src/scan/profiler/hash";
import { SpaceSaving } from "../../../src/scan/profiler/space-saving";
import { prng, viaJson } from "./prng";

function add(summary: SpaceSaving<string>, key: string): void {
  hashString(key, VALUE_SEED);
  summary.add(HASH[0]!, HASH[1]!, key);
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
