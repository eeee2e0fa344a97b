import { describe, expect, it } from "vitest";
import { DistinctCounter, EXACT_DISTINCT_LIMIT } from "../../../src/scan/profiler/distinct";
import { HashScratch, hashNumber, hashString, VALUE_SEED } from "../../../src/scan/profiler/hash";
import { prng } from "../../support/random";
import { viaJson } from "./via-json";

const scratch = new HashScratch();
const out = scratch.out;

function addString(counter: DistinctCounter, s: string): void {
  hashString(s, VALUE_SEED, scratch);
  counter.add(out[0]!, out[1]!);
}

describe("DistinctCounter", () => {
  it("counts exactly while small", () => {
    const counter = new DistinctCounter();
    for (let i = 0; i < 10_000; i++) addString(counter, `v${i % 1234}`);
    expect(counter.isExact).toBe(true);
    expect(counter.estimate()).toBe(1234);
  });

  it("switches to HyperLogLog above the exact limit", () => {
    const counter = new DistinctCounter();
    for (let i = 0; i <= EXACT_DISTINCT_LIMIT; i++) addString(counter, `v${i}`);
    expect(counter.isExact).toBe(false);
    expect(Math.abs(counter.estimate() - (EXACT_DISTINCT_LIMIT + 1))).toBeLessThan(EXACT_DISTINCT_LIMIT * 0.01);
  });

  it("estimates 1,000,000 distinct strings within 2 %", () => {
    const counter = new DistinctCounter();
    for (let i = 0; i < 1_000_000; i++) addString(counter, `customer-${i}@example.com`);
    const error = Math.abs(counter.estimate() / 1_000_000 - 1);
    console.info(`distinct strings: estimate ${counter.estimate()}, relative error ${(error * 100).toFixed(3)} %`);
    expect(error).toBeLessThan(0.02);
  });

  it("estimates distinct random doubles with repeats within 2 % of the exact count", () => {
    const random = prng(7);
    const counter = new DistinctCounter();
    const exact = new Set<number>();
    for (let i = 0; i < 1_000_000; i++) {
      const x = Math.floor(random() * 600_000) / 8;
      exact.add(x);
      hashNumber(x, VALUE_SEED, scratch);
      counter.add(out[0]!, out[1]!);
    }
    const error = Math.abs(counter.estimate() / exact.size - 1);
    console.info(
      `distinct numbers: exact ${exact.size}, estimate ${counter.estimate()}, error ${(error * 100).toFixed(3)} %`,
    );
    expect(error).toBeLessThan(0.02);
  });

  it("merges chunks like one pass: exactly while small, identically as a sketch", () => {
    for (const distinctValues of [3000, 200_000]) {
      const whole = new DistinctCounter();
      const chunks = Array.from({ length: 5 }, () => new DistinctCounter());
      for (let i = 0; i < 400_000; i++) {
        const s = `k${(i * 7919) % distinctValues}`;
        addString(whole, s);
        addString(chunks[i % 5]!, s);
      }
      const merged = chunks[0]!;
      for (const chunk of chunks.slice(1)) merged.merge(chunk);
      expect(merged.isExact).toBe(whole.isExact);
      // Registers are a max over the same hashes, so the estimates are identical.
      expect(merged.estimate()).toBe(whole.estimate());
    }
  });

  it("survives a JSON state round trip in both modes", () => {
    for (const n of [100, 50_000]) {
      const counter = new DistinctCounter();
      for (let i = 0; i < n; i++) addString(counter, `x${i}`);
      const restored = DistinctCounter.fromState(viaJson(counter.toState()));
      expect(restored.estimate()).toBe(counter.estimate());
      expect(restored.isExact).toBe(counter.isExact);
      addString(restored, "x1");
      expect(restored.estimate()).toBe(counter.estimate());
    }
  });
});
