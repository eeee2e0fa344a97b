/**
 * Scans admitted to an isolate by their memory estimate, not by a fixed count (issue 40, point 1):
 * the admission's order and limits, and what the estimates let run at once.
 */

import { describe, expect, it } from "vitest";
import { ISOLATE_SCAN_MEMORY, MemoryAdmission } from "../../src/jobs/admission";
import { MAX_SCAN_COLUMNS, scanMemoryEstimate } from "../../src/scan/profiler/budget";

/** Work that runs until released, recording that it started. */
function gated(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    release: () => release(),
    work: async () => {
      started.push(name);
      await done;
      return name;
    },
  };
}

/** Lets every admitted piece of work reach its gate. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("MemoryAdmission", () => {
  it("runs work while its bytes fit, queues the rest first come first served, and admits as bytes free", async () => {
    const admission = new MemoryAdmission(100);
    const started: string[] = [];
    const a = gated(started, "a");
    const b = gated(started, "b");
    const c = gated(started, "c");
    const d = gated(started, "d");
    const runs = [
      admission.run(60, a.work),
      admission.run(30, b.work),
      // 60 + 30 + 20 > 100: c waits, and d (which would fit) waits behind it.
      admission.run(20, c.work),
      admission.run(5, d.work),
    ];
    await settle();
    expect(started).toEqual(["a", "b"]);
    expect([admission.inUse, admission.active, admission.waiting]).toEqual([90, 2, 2]);
    b.release();
    await settle();
    expect(started).toEqual(["a", "b", "c", "d"]);
    expect(admission.inUse).toBe(85);
    for (const g of [a, c, d]) g.release();
    expect(await Promise.all(runs)).toEqual(["a", "b", "c", "d"]);
    expect([admission.inUse, admission.active, admission.waiting]).toEqual([0, 0, 0]);
  });

  it("runs work larger than the whole capacity alone, and frees its bytes when it fails", async () => {
    const admission = new MemoryAdmission(100);
    const started: string[] = [];
    const small = gated(started, "small");
    const big = gated(started, "big");
    const first = admission.run(10, small.work);
    const second = admission.run(500, big.work);
    await settle();
    expect(started).toEqual(["small"]);
    small.release();
    await settle();
    expect(started).toEqual(["small", "big"]);
    expect(admission.inUse).toBe(500);
    big.release();
    await Promise.all([first, second]);
    await expect(
      admission.run(40, async () => {
        throw new Error("scan failed");
      }),
    ).rejects.toThrow("scan failed");
    expect([admission.inUse, admission.active]).toEqual([0, 0]);
  });
});

describe("an isolate's scans by their estimates", () => {
  /** How many scans of `columns` columns the isolate's admission runs at once. */
  async function atOnce(columns: number, scans: number): Promise<number> {
    const admission = new MemoryAdmission(ISOLATE_SCAN_MEMORY);
    const started: string[] = [];
    const gates = Array.from({ length: scans }, (_, k) => gated(started, String(k)));
    const runs = gates.map((g) => admission.run(scanMemoryEstimate(columns), g.work));
    await settle();
    const running = admission.active;
    for (const g of gates) g.release();
    await Promise.all(runs);
    return running;
  }

  it("runs more scans of narrow tables at once than the fixed three of before", async () => {
    expect(await atOnce(3, 10)).toBe(10);
    expect(await atOnce(10, 10)).toBeGreaterThan(6);
  });

  it("runs fewer scans of wide tables at once: two of 100 columns, one of the widest", async () => {
    expect(await atOnce(100, 10)).toBe(2);
    expect(await atOnce(MAX_SCAN_COLUMNS, 10)).toBe(1);
  });

  it("runs the widest scan beside one of 100 columns, not beside one of 500 (bench:profile:memory's worst mix)", async () => {
    const admission = new MemoryAdmission(ISOLATE_SCAN_MEMORY);
    const started: string[] = [];
    const widths = [MAX_SCAN_COLUMNS, 100, 500];
    const gates = widths.map((columns) => gated(started, String(columns)));
    const runs = gates.map((g, k) => admission.run(scanMemoryEstimate(widths[k]), g.work));
    await settle();
    expect(started).toEqual([String(MAX_SCAN_COLUMNS), "100"]);
    expect(admission.inUse).toBe(scanMemoryEstimate(MAX_SCAN_COLUMNS) + scanMemoryEstimate(100));
    for (const g of gates) g.release();
    await Promise.all(runs);
  });

  it("estimates a table of unknown width at the attribute cap, and no width above the cap's", () => {
    expect(scanMemoryEstimate(undefined)).toBe(scanMemoryEstimate(MAX_SCAN_COLUMNS));
    expect(scanMemoryEstimate(10 * MAX_SCAN_COLUMNS)).toBe(scanMemoryEstimate(MAX_SCAN_COLUMNS));
    expect(scanMemoryEstimate(MAX_SCAN_COLUMNS)).toBeLessThanOrEqual(ISOLATE_SCAN_MEMORY);
  });
});
