import { describe, expect, it } from "vitest";
import { DuplicateCounter } from "../../../src/scan/profiler/duplicates";
import { HASH, hashString, VALUE_SEED } from "../../../src/scan/profiler/hash";
import { HashSet64 } from "../../../src/scan/profiler/hash-set64";

function addId(counter: DuplicateCounter, id: string): void {
  hashString(id, VALUE_SEED);
  counter.add(HASH[0]!, HASH[1]!);
}

describe("HashSet64", () => {
  it("stores 64-bit hashes, grows, and treats the all-zero hash as a value", () => {
    const set = new HashSet64();
    for (let i = 0; i < 10_000; i++) expect(set.add(i, -i)).toBe(true);
    for (let i = 0; i < 10_000; i++) expect(set.add(i, -i)).toBe(false);
    expect(set.size).toBe(10_000);
    expect(set.add(0, 1)).toBe(false); // (0, 0) was remapped onto (0, 1) when i = 0
    expect(HashSet64.fromState(set.toState()).size).toBe(10_000);
  });
});

describe("DuplicateCounter", () => {
  it("counts rows whose id repeats an earlier one", () => {
    const counter = new DuplicateCounter();
    for (const id of ["a", "b", "a", "c", "a", "b"]) addId(counter, id);
    expect(counter.duplicates).toBe(3);
    expect(counter.distinctIds).toBe(3);
  });

  it("counts duplicates exactly over many ids", () => {
    const ids = Array.from({ length: 50_000 }, (_, i) => `id-${(i * 31) % 37_000}`);
    const whole = new DuplicateCounter();
    for (const id of ids) addId(whole, id);
    expect(whole.duplicates).toBe(50_000 - 37_000);
  });
});
