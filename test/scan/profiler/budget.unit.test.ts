/**
 * A scan's memory budget (issue 40): sketch sizes by width, batches of fewer rows for wide tables,
 * and what a wide table's profile keeps of accuracy.
 */

import { describe, expect, it } from "vitest";
import { readColumns } from "../../../src/scan/formats";
import { bytesSource } from "../../../src/scan/formats/source";
import { BATCH_VALUES } from "../../../src/scan/formats/types";
import { FULL_SIZE_COLUMNS, FULL_SKETCH_SIZES, MAX_SCAN_COLUMNS, sketchSizes } from "../../../src/scan/profiler/budget";
import { DistinctCounter } from "../../../src/scan/profiler/distinct";
import { HashScratch, hashString } from "../../../src/scan/profiler/hash";
import { ProfileBuilder } from "../../../src/scan/profiler/profile-builder";

describe("sketchSizes", () => {
  it("keeps the full sizes up to 100 columns, and shrinks each past it down to its floor", () => {
    for (const columns of [1, 37, FULL_SIZE_COLUMNS]) expect(sketchSizes(columns)).toEqual(FULL_SKETCH_SIZES);
    expect(FULL_SKETCH_SIZES).toEqual({ topCapacity: 1000, hllPrecision: 14, kllK: 512 });
    const wide = sketchSizes(MAX_SCAN_COLUMNS);
    expect(wide).toEqual({ topCapacity: 32, hllPrecision: 10, kllK: 32 });
    let previous = FULL_SKETCH_SIZES;
    for (const columns of [101, 200, 500, 1000, MAX_SCAN_COLUMNS]) {
      const sizes = sketchSizes(columns);
      expect(sizes.topCapacity).toBeLessThan(previous.topCapacity + (columns === MAX_SCAN_COLUMNS ? 1 : 0));
      expect(sizes.hllPrecision).toBeLessThanOrEqual(previous.hllPrecision);
      expect(sizes.kllK).toBeLessThanOrEqual(previous.kllK);
      previous = sizes;
    }
  });
});

describe("a wide table's profile", () => {
  it("profiles 2,000 columns with the smallest sketches: distinct within 3 standard errors, exact up to 256", () => {
    const columns = MAX_SCAN_COLUMNS;
    const rows = 1000;
    const names = Array.from({ length: columns }, (_, k) => `c${k}`);
    const builder = new ProfileBuilder();
    for (let start = 0; start < rows; start += 100) {
      builder.addColumns({
        names,
        // Column k holds (k % 8 + 1) × 250 distinct values at most: 250 (exact) to 1,000 (the rows).
        columns: names.map((_, k) => Array.from({ length: 100 }, (_, i) => `v${(start + i) % (((k % 8) + 1) * 250)}`)),
        length: 100,
      });
    }
    const profile = builder.finish();
    expect(profile.attributes).toHaveLength(columns);
    for (const a of profile.attributes.slice(0, 8)) {
      const exact = Math.min(rows, ((Number(a.name.slice(1)) % 8) + 1) * 250);
      expect(a.distinct_exact).toBe(exact <= 256);
      expect(Math.abs(a.distinct - exact) / exact).toBeLessThan(3 * 0.0325);
      // 250 values, fewer than the 32 counters cannot list: the top 20 only.
      expect(a.top_values).toHaveLength(20);
    }
    // No timing: room for a slow shared machine only.
  }, 300_000);

  it("gives a 100-column table the full sizes: every one of its 300 values listed, distinct exact", () => {
    const names = Array.from({ length: FULL_SIZE_COLUMNS }, (_, k) => `c${k}`);
    const builder = new ProfileBuilder();
    builder.addColumns({
      names,
      columns: names.map(() => Array.from({ length: 3000 }, (_, i) => `v${i % 300}`)),
      length: 3000,
    });
    const a = builder.finish().attributes[0]!;
    expect([a.distinct, a.distinct_exact, a.top_values.length]).toEqual([300, true, 20]);
  });
});

describe("DistinctCounter precision", () => {
  it("counts exactly up to 2^p / 4 values, then within 3 standard errors of 1.04 / √(2^p)", () => {
    const hash = new HashScratch();
    for (const precision of [10, 12, 14]) {
      const counter = new DistinctCounter(precision);
      const limit = 2 ** precision / 4;
      for (let i = 0; i < 50_000; i++) {
        hashString(`value ${i}`, 7, hash);
        counter.add(hash.out[0]!, hash.out[1]!);
        if (i + 1 === limit) expect([counter.isExact, counter.estimate()]).toEqual([true, limit]);
        if (i === limit) expect(counter.isExact).toBe(false);
      }
      expect(Math.abs(counter.estimate() - 50_000) / 50_000).toBeLessThan((3 * 1.04) / Math.sqrt(2 ** precision));
      const copy = DistinctCounter.fromState(JSON.parse(JSON.stringify(counter.toState())));
      expect([copy.precision, copy.estimate()]).toEqual([precision, counter.estimate()]);
    }
    expect(() => new DistinctCounter(9)).toThrow(RangeError);
    expect(() => new DistinctCounter(10).merge(new DistinctCounter(14))).toThrow(RangeError);
  });
});

describe("batches of a wide CSV", () => {
  it("hold at most BATCH_VALUES values: fewer rows the wider the table", async () => {
    for (const columns of [10, 2000]) {
      const header = Array.from({ length: columns }, (_, k) => `c${k}`).join(",");
      const row = Array.from({ length: columns }, (_, k) => String(k)).join(",");
      const text = `${header}\n${`${row}\n`.repeat(1000)}`;
      const sizes: number[] = [];
      for await (const batch of readColumns(bytesSource(new TextEncoder().encode(text)), "csv", { batchSize: 500 })) {
        sizes.push(batch.length);
      }
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(1000);
      // CSV batches end at a chunk's end: at least the rows asked for, up to one chunk more.
      const wanted = Math.min(500, BATCH_VALUES / columns);
      for (const size of sizes.slice(0, -1)) expect(size).toBeGreaterThanOrEqual(wanted);
      if (columns === 2000) expect(Math.max(...sizes)).toBeLessThan(500);
    }
  });
});
