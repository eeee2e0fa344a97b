import { describe, expect, it } from "vitest";
import { HashScratch, hashNumber, hashString, hashTexts, hashValue, VALUE_SEED } from "../../../src/scan/profiler/hash";

const scratch = new HashScratch();
const out = scratch.out;

function hashOf(s: string, seed = VALUE_SEED): [number, number] {
  hashString(s, seed, scratch);
  return [out[0]!, out[1]!];
}

describe("64-bit hash", () => {
  it("is deterministic and depends on content, length and seed", () => {
    expect(hashOf("abc")).toEqual(hashOf("abc"));
    expect(hashOf("abc")).not.toEqual(hashOf("abd"));
    expect(hashOf("a")).not.toEqual(hashOf("a\u0000"));
    expect(hashOf("")).not.toEqual(hashOf("\u0000"));
    expect(hashOf("abc", 1)).not.toEqual(hashOf("abc", 2));
  });

  it("hashes a column of ASCII text as hashString does each value, and declines any other column", () => {
    // Slices of one long text (as the CSV reader makes them), of even and odd lengths, empty ones and nulls.
    const source = Array.from({ length: 300 }, (_, i) => `v${i * 7919},${"x".repeat(i % 5)}"q"`).join(";");
    const column: Array<string | null | undefined> = [];
    for (let start = 0; start < source.length; start += 1 + (start % 13))
      column.push(source.slice(start, start + (start % 17)));
    column[3] = null;
    column[9] = undefined;
    column[10] = "";
    const n = column.length;
    const hi = new Int32Array(n);
    const lo = new Int32Array(n);
    expect(hashTexts(column, n, VALUE_SEED, hi, lo, scratch)).toBe(true);
    column.forEach((v, i) => {
      if (typeof v === "string") expect([hi[i], lo[i]]).toEqual(hashOf(v));
    });
    // A prefix of the column only.
    hi.fill(0);
    expect(hashTexts(column, 20, VALUE_SEED, hi, lo, scratch)).toBe(true);
    expect([hi[19], lo[19]]).toEqual(hashOf(column[19]!));
    expect(hi[20]).toBe(0);
    // Non-ASCII text, a number among the strings, a typed array: declined (hashed value by value).
    expect(hashTexts(["a", "é"], 2, VALUE_SEED, hi, lo, scratch)).toBe(false);
    expect(hashTexts(["a", "\u{1f600}"], 2, VALUE_SEED, hi, lo, scratch)).toBe(false);
    expect(hashTexts(["a", 5], 2, VALUE_SEED, hi, lo, scratch)).toBe(false);
    expect(hashTexts(new Float64Array(2), 2, VALUE_SEED, hi, lo, scratch)).toBe(false);
  });

  it("hashes numbers by value, 0 and -0 alike", () => {
    hashNumber(0, VALUE_SEED, scratch);
    const zero = [out[0], out[1]];
    hashNumber(-0, VALUE_SEED, scratch);
    expect([out[0], out[1]]).toEqual(zero);
    hashValue(1.5, VALUE_SEED, scratch);
    const a = [out[0], out[1]];
    hashValue(1.5000000000000002, VALUE_SEED, scratch);
    expect([out[0], out[1]]).not.toEqual(a);
  });

  it("sets every output bit about half the time, even for near-identical keys", () => {
    const n = 100_000;
    const ones = new Array(64).fill(0);
    const seen = new Set<string>();
    for (let i = 0; i < n; i++) {
      hashString(`key-${i}`, VALUE_SEED, scratch);
      const hi = out[0]!;
      const lo = out[1]!;
      seen.add(`${hi}:${lo}`);
      for (let b = 0; b < 32; b++) {
        ones[b] += (hi >>> b) & 1;
        ones[32 + b] += (lo >>> b) & 1;
      }
    }
    expect(seen.size).toBe(n);
    // Binomial(100000, 0.5) has sd 158: 5 sd is far beyond chance for a good hash.
    for (const count of ones) expect(Math.abs(count - n / 2)).toBeLessThan(800);
  });

  it("avalanches: flipping one input character flips about half of the output bits", () => {
    let flipped = 0;
    const trials = 2000;
    for (let i = 0; i < trials; i++) {
      const [h1, l1] = hashOf(`user${i}@example.com`);
      const [h2, l2] = hashOf(`user${i}@example.con`);
      flipped += popcount(h1 ^ h2) + popcount(l1 ^ l2);
    }
    expect(flipped / trials).toBeGreaterThan(30);
    expect(flipped / trials).toBeLessThan(34);
  });
});

function popcount(x: number): number {
  let c = 0;
  for (let v = x >>> 0; v !== 0; v &= v - 1) c++;
  return c;
}
