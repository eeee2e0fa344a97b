import { describe, expect, it } from "vitest";
import { DuplicateCounter } from "../../../src/scan/profiler/duplicates";
import { HashScratch, hashString, VALUE_SEED } from "../../../src/scan/profiler/hash";
import { HashSet64 } from "../../../src/scan/profiler/hash-set64";
import { MAX_DISTINCT_ROWS } from "../../../src/scan/profiler/profile-builder";

const scratch = new HashScratch();
const out = scratch.out;

function addId(counter: DuplicateCounter, id: string): void {
  hashString(id, VALUE_SEED, scratch);
  counter.add(out[0]!, out[1]!);
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

  it("keeps what it holds when room is reserved at once, and grows past it as before", () => {
    const set = new HashSet64();
    for (let i = 1; i <= 10; i++) set.add(i, i);
    const before = set.byteLength;
    set.reserve(5); // room enough already: nothing moves
    expect(set.byteLength).toBe(before);
    set.reserve(1_000);
    expect(set.byteLength).toBe(2048 * 8); // the least power of two holding 1,010 at a load of 0.7
    for (let i = 1; i <= 10; i++) expect(set.add(i, i)).toBe(false);
    for (let i = 11; i <= 3_000; i++) expect(set.add(i, i)).toBe(true);
    expect(set.size).toBe(3_000);
  });

  it("holds the whole-row duplicates' cap of hashes in 16 MiB", () => {
    const set = new HashSet64();
    for (let i = 1; i <= MAX_DISTINCT_ROWS + 1; i++) set.add(i, Math.imul(i, 0x9e3779b1));
    expect(set.size).toBe(MAX_DISTINCT_ROWS + 1);
    expect(set.byteLength).toBe(16 * 1024 * 1024);
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

  it("gives up past its cap of distinct hashes, having counted until then", () => {
    const counter = new DuplicateCounter(3);
    for (const id of ["a", "b", "a", "c", "c"]) addId(counter, id);
    expect(counter.counting).toBe(true);
    expect(counter.duplicates).toBe(2);
    expect(counter.distinctIds).toBe(3);
    addId(counter, "d");
    expect(counter.counting).toBe(false);
    addId(counter, "a");
    expect(counter.duplicates).toBe(2);
  });
});
