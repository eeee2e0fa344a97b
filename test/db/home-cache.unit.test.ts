/**
 * The isolate's cache of tenant homes (src/db/shards.ts) is filled before authentication from the
 * tenant named in the path: it must stay bounded whatever tenants callers name, and keep serving
 * fresh entries without a directory read.
 */
import { describe, expect, it } from "vitest";
import { HomeCache, SHARD_CACHE_MAX, SHARD_CACHE_MS } from "../../src/db/shards";

/** A directory stand-in that counts its reads: tenant "t<n>" lives on shard n. */
function directory() {
  const reads: string[] = [];
  return {
    reads,
    load: (key: string) => () => {
      reads.push(key);
      return Promise.resolve(Number(key.slice(1)));
    },
  };
}

describe("HomeCache", () => {
  it("reads the directory once per tenant while the entry is fresh", async () => {
    const cache = new HomeCache<number>(10, 1_000);
    const dir = directory();
    expect(await cache.get("t1", dir.load("t1"), 0)).toBe(1);
    expect(await cache.get("t1", dir.load("t1"), 999)).toBe(1);
    expect(dir.reads).toEqual(["t1"]);
    expect(await cache.get("t1", dir.load("t1"), 1_000)).toBe(1);
    expect(dir.reads).toEqual(["t1", "t1"]);
  });

  it("never holds more than its maximum, however many tenants are named", async () => {
    const cache = new HomeCache<number>(100, 60_000);
    const dir = directory();
    for (let n = 0; n < 5_000; n++) await cache.get(`t${n}`, dir.load(`t${n}`), 0);
    expect(cache.size).toBe(100);
    // The newest stay (no read), the oldest went first (read again).
    await cache.get("t4999", dir.load("t4999"), 1);
    await cache.get("t4900", dir.load("t4900"), 1);
    expect(dir.reads.length).toBe(5_000);
    await cache.get("t0", dir.load("t0"), 1);
    expect(dir.reads.length).toBe(5_001);
    expect(cache.size).toBe(100);
  });

  it("moves a refreshed entry to the end, so an active tenant outlives a stream of new ones", async () => {
    const cache = new HomeCache<number>(3, 10);
    const dir = directory();
    await cache.get("t1", dir.load("t1"), 0);
    await cache.get("t2", dir.load("t2"), 0);
    await cache.get("t3", dir.load("t3"), 0);
    await cache.get("t1", dir.load("t1"), 20); // expired: read again, now the newest
    await cache.get("t4", dir.load("t4"), 20); // evicts t2, the oldest
    expect(cache.size).toBe(3);
    const before = dir.reads.length;
    await cache.get("t1", dir.load("t1"), 21);
    expect(dir.reads.length).toBe(before);
    await cache.get("t2", dir.load("t2"), 21);
    expect(dir.reads.length).toBe(before + 1);
  });

  it("does not keep a failed read, and forget() drops an entry", async () => {
    const cache = new HomeCache<number>(10, 1_000);
    await expect(cache.get("t1", () => Promise.reject(new Error("D1 down")), 0)).rejects.toThrow("D1 down");
    await Promise.resolve();
    expect(cache.size).toBe(0);
    const dir = directory();
    await cache.get("t1", dir.load("t1"), 0);
    cache.forget("t1");
    await cache.get("t1", dir.load("t1"), 1);
    expect(dir.reads).toEqual(["t1", "t1"]);
  });

  it("is bounded in production too", () => {
    expect(Number.isFinite(SHARD_CACHE_MAX)).toBe(true);
    expect(SHARD_CACHE_MAX).toBeLessThanOrEqual(100_000);
    expect(SHARD_CACHE_MS).toBeGreaterThan(0);
  });
});
