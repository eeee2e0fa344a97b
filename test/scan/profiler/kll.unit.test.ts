import { describe, expect, it } from "vitest";
import { QUANTILE_POINTS } from "../../../src/contracts/profile";
import { base64ToFloat64 } from "../../../src/scan/profiler/codec";
import { KllSketch } from "../../../src/scan/profiler/kll";
import { normal, prng } from "../../support/random";
import { viaJson } from "./via-json";

/** Distance of p from the rank interval [#(< v), #(<= v)] / n of v in sorted data. */
function rankError(sorted: Float64Array, v: number, p: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  const below = lo;
  hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= v) lo = mid + 1;
    else hi = mid;
  }
  const n = sorted.length;
  const rankLow = below / n;
  const rankHigh = lo / n;
  return p < rankLow ? rankLow - p : p > rankHigh ? p - rankHigh : 0;
}

function maxRankError(sketch: KllSketch, sorted: Float64Array): number {
  const estimates = sketch.quantiles(QUANTILE_POINTS);
  return Math.max(...QUANTILE_POINTS.map((p, i) => rankError(sorted, estimates[i]!, p)));
}

const N = 1_000_000;
const distributions: Record<string, (random: () => number) => number> = {
  uniform: (random) => random() * 1000,
  normal: (random) => 50 + 10 * normal(random),
  skewed: (random) => Math.exp(3 * normal(random)),
  "integers with ties": (random) => Math.floor(random() ** 3 * 50),
};

describe("KllSketch", () => {
  it("is exact while everything fits", () => {
    const sketch = new KllSketch();
    const values = [5, 1, 4, 2, 3, 9, 8, 7, 6, 10];
    for (const v of values) sketch.add(v);
    // Nearest rank (lower): the smallest value whose rank reaches p·n.
    expect(sketch.quantiles([0, 0.1, 0.25, 0.5, 0.75, 0.9, 1])).toEqual([1, 1, 3, 5, 8, 9, 10]);
    expect(sketch.n).toBe(10);
  });

  it("answers from every level, each item weighing its level's 2^h, as one sorted sequence would", () => {
    const random = prng(3);
    const sketch = new KllSketch(16);
    for (let i = 0; i < 5_000; i++) sketch.add(Math.round(random() * 200) / 4, 1 + Math.floor(random() * 3));
    // The same answer from the retained items sorted together (ties: the lower level first).
    const state = sketch.toState();
    const items = state.levels.flatMap((level, h) => [...base64ToFloat64(level)].map((x) => ({ x, w: 2 ** h, h })));
    items.sort((a, b) => a.x - b.x || a.h - b.h);
    const total = items.reduce((t, i) => t + i.w, 0);
    const points = [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99];
    const expected = points.map((p) => {
      let cumulative = 0;
      for (const item of items) {
        cumulative += item.w;
        if (cumulative >= p * total) return item.x;
      }
      return Number.NaN;
    });
    expect(items.length).toBeLessThan(5_000);
    expect(new Set(items.map((i) => i.h)).size).toBeGreaterThan(2);
    expect(sketch.quantiles(points)).toEqual(expected);
  });

  for (const [name, draw] of Object.entries(distributions)) {
    it(`keeps the rank error within 1 % at every quantile point on 1,000,000 ${name} values`, () => {
      const random = prng(name.length * 977);
      const data = new Float64Array(N);
      const sketch = new KllSketch();
      for (let i = 0; i < N; i++) {
        data[i] = draw(random);
        sketch.add(data[i]!);
      }
      const sorted = data.slice().sort();
      const error = maxRankError(sketch, sorted);
      console.info(`KLL ${name}: max rank error ${(error * 100).toFixed(3)} %, retained ${sketch.retainedItems}`);
      expect(error).toBeLessThan(0.01);
      expect(sketch.quantiles([0, 1])).toEqual([sorted[0], sorted[N - 1]]);
      // Memory stays small: a few k items, not n.
      expect(sketch.retainedItems).toBeLessThan(4 * sketch.k);
    });
  }

  it("merges 16 chunks of 1,000,000 values within the same error", () => {
    const random = prng(99);
    const data = new Float64Array(N);
    const chunks = Array.from({ length: 16 }, () => new KllSketch());
    for (let i = 0; i < N; i++) {
      data[i] = Math.exp(normal(random));
      chunks[Math.floor((i * 16) / N)]!.add(data[i]!);
    }
    const merged = chunks[0]!;
    for (const chunk of chunks.slice(1)) merged.merge(chunk);
    expect(merged.n).toBe(N);
    const error = maxRankError(merged, data.slice().sort());
    console.info(`KLL merged 16 chunks: max rank error ${(error * 100).toFixed(3)} %`);
    expect(error).toBeLessThan(0.01);
  });

  it("round-trips its state exactly and deterministically", () => {
    const random = prng(3);
    const sketch = new KllSketch();
    const twin = new KllSketch();
    for (let i = 0; i < 100_000; i++) {
      const x = random();
      sketch.add(x);
      twin.add(x);
    }
    expect(twin.quantiles(QUANTILE_POINTS)).toEqual(sketch.quantiles(QUANTILE_POINTS));
    const restored = KllSketch.fromState(viaJson(sketch.toState()));
    expect(restored.quantiles(QUANTILE_POINTS)).toEqual(sketch.quantiles(QUANTILE_POINTS));
    for (let i = 0; i < 10_000; i++) {
      restored.add(i / 10_000);
      sketch.add(i / 10_000);
    }
    expect(restored.quantiles(QUANTILE_POINTS)).toEqual(sketch.quantiles(QUANTILE_POINTS));
    expect(KllSketch.fromState(viaJson(new KllSketch().toState())).n).toBe(0);
  });
});
