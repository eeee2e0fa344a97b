import { describe, expect, it } from "vitest";
import { LEASE_SIZE } from "../../src/db/shards";
import { ALERT_IDS_PER_ASSET, alertIdBase } from "../../src/monitor/history-store";

// Alert ids given by assets' objects (issue 38) on every shard's id range (tenant shards).
describe("alertIdBase", () => {
  it("gives assets of shard 0 ranges above every id D1's alerts table held", () => {
    expect(alertIdBase(1)).toBeGreaterThanOrEqual(2 ** 24);
    expect(alertIdBase(2) - alertIdBase(1)).toBe(ALERT_IDS_PER_ASSET);
  });

  it("keeps the ranges of assets on different shards apart and JSON-safe", () => {
    const ids = [1, 2, 2 ** 23 - 1, LEASE_SIZE + 1, LEASE_SIZE + 2, 3 * LEASE_SIZE + 7, 63 * LEASE_SIZE + 2 ** 23 - 1];
    const ranges = ids.map((id) => [alertIdBase(id), alertIdBase(id) + ALERT_IDS_PER_ASSET - 1] as const);
    for (const [lo, hi] of ranges) expect(Number.isSafeInteger(hi) && hi > lo).toBe(true);
    const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
    for (const [i, [lo]] of sorted.slice(1).entries()) expect(lo).toBeGreaterThan(sorted[i]?.[1] ?? Infinity);
    // A shard's own D1 rows (ids above its range's base) stay below its assets' alert ids.
    expect(alertIdBase(LEASE_SIZE + 1)).toBeGreaterThan(LEASE_SIZE + 2 ** 23);
  });

  it("refuses an asset whose alert ids would pass 2^53", () => {
    expect(() => alertIdBase(64 * LEASE_SIZE + 1)).toThrow(/past the ids/);
    expect(() => alertIdBase(2 ** 23)).toThrow(/past the ids/);
  });
});
