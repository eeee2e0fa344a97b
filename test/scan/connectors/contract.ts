import { describe, expect, it } from "vitest";
import { ConnectorError, type ObjectStore } from "../../../src/scan/connectors/types";
import { LARGE_KEY, LARGE_SIZE, largeByte, PAGED_COUNT, pagedKey, seedObjects, TEXT_OBJECTS } from "./fixtures";

/** Reads a whole stream into one array. */
export async function drain(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const part of stream) {
    parts.push(part);
    total += part.byteLength;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** The ConnectorError a promise rejects with (fails the test when it resolves or throws another error). */
export async function connectorError(promise: Promise<unknown>): Promise<ConnectorError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  return err as ConnectorError;
}

/** Asserts that no secret appears in an error message. */
export function expectNoSecrets(err: Error, secrets: string[]) {
  for (const secret of secrets) {
    if (secret) expect(err.message).not.toContain(secret);
  }
}

const keys = (objects: { key: string }[]) => objects.map((o) => o.key);
const csvKeys = (filter: (k: string) => boolean) =>
  Object.keys(TEXT_OBJECTS)
    .filter((k) => k.endsWith(".csv") && filter(k))
    .sort();

function expectLargeSlice(bytes: Uint8Array, offset: number, length: number) {
  expect(bytes.byteLength).toBe(length);
  let mismatches = 0;
  for (let i = 0; i < length; i++) if (bytes[i] !== largeByte(offset + i)) mismatches++;
  expect(mismatches).toBe(0);
}

/**
 * What every ObjectStore must do against seeded data (fixtures.ts): `store` reads the seed;
 * `pagedStore` is the same store with a small page size, so listings cross several pages.
 */
export function objectStoreContract(name: string, store: () => ObjectStore, pagedStore: () => ObjectStore) {
  describe(`${name}: the ObjectStore contract`, () => {
    it("lists with * within one segment", async () => {
      const found = await store().list("data/2024/*/*.csv");
      expect(keys(found)).toEqual(csvKeys((k) => /^data\/2024\/[^/]+\/[^/]+$/.test(k)));
      const seed = seedObjects();
      for (const o of found) {
        expect(o.size).toBe(seed.get(o.key)!.byteLength);
        expect(o.lastModified).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      }
    });

    it("lists with ** at any depth, including no folder at all in between", async () => {
      expect(keys(await store().list("data/**/*.csv"))).toEqual(csvKeys((k) => k.startsWith("data/")));
      expect(keys(await store().list("data/2024/**/orders-*.csv"))).toEqual([
        "data/2024/01/orders-a.csv",
        "data/2024/01/orders-b.csv",
        "data/2024/02/orders-c.csv",
      ]);
      expect(keys(await store().list("data/2025/**"))).toEqual(["data/2025/03/deep/orders-d.csv"]);
    });

    it("with resolve_wildcards_to_folders, a wildcard matching a folder takes everything below it", async () => {
      // Without it, "data/*" matches only files directly in data/ (there are none).
      expect(keys(await store().list("data/*"))).toEqual([]);
      const seeded = [...seedObjects().keys()].filter((k) => !k.endsWith("/")).sort();
      expect(keys(await store().list("data/*", { folders: true }))).toEqual(
        seeded.filter((k) => k.startsWith("data/")),
      );
      expect(keys(await store().list("data/2024/0*", { folders: true }))).toEqual(
        seeded.filter((k) => /^data\/2024\/0[^/]*\//.test(k)),
      );
      // A pattern that names files still names files.
      expect(keys(await store().list("data/2024/*.csv", { folders: true }))).toEqual(["data/2024/summary.csv"]);
    });

    it("lists with ? as one character", async () => {
      expect(keys(await store().list("data/2024/0?/orders-?.csv"))).toEqual([
        "data/2024/01/orders-a.csv",
        "data/2024/01/orders-b.csv",
        "data/2024/02/orders-c.csv",
      ]);
    });

    it("lists a plain key as that key only, and a folder as everything below it", async () => {
      expect(keys(await store().list("data/2024/summary.csv"))).toEqual(["data/2024/summary.csv"]);
      expect(keys(await store().list("data/2024/01/orders-a"))).toEqual([]);
      expect(keys(await store().list("data/2024/01/"))).toEqual([
        "data/2024/01/orders-a.csv",
        "data/2024/01/orders-b.csv",
        "data/2024/01/readme.txt",
      ]);
      expect(await store().list("nothing/here/*.csv")).toEqual([]);
    });

    it("decodes keys with &, +, spaces, < > and non-ASCII characters", async () => {
      expect(keys(await store().list("data/odd names/*"))).toEqual([
        "data/odd names/a&b +c.csv",
        "data/odd names/été_<1>.csv",
      ]);
    });

    it("follows continuation tokens across pages", async () => {
      const all = await pagedStore().list("paged/*.csv");
      expect(keys(all)).toEqual(Array.from({ length: PAGED_COUNT }, (_, i) => pagedKey(i)));
      // A plain key is found on whichever page it lands.
      expect(keys(await pagedStore().list(pagedKey(17)))).toEqual([pagedKey(17)]);
    });

    it("streams whole objects, byte for byte", async () => {
      const text = new TextDecoder().decode(await drain(await store().stream("data/2024/02/orders-c.csv")));
      expect(text).toBe(TEXT_OBJECTS["data/2024/02/orders-c.csv"]);
      const odd = new TextDecoder().decode(await drain(await store().stream("data/odd names/été_<1>.csv")));
      expect(odd).toBe(TEXT_OBJECTS["data/odd names/été_<1>.csv"]);
      expectLargeSlice(await drain(await store().stream(LARGE_KEY)), 0, LARGE_SIZE);
    });

    it("reads byte-exact ranges: head, across chunks, tail, and clipped at the end", async () => {
      const s = store();
      expectLargeSlice(await s.readRange(LARGE_KEY, 0, 100), 0, 100);
      expectLargeSlice(await s.readRange(LARGE_KEY, 1_048_570, 70_001), 1_048_570, 70_001);
      expectLargeSlice(await s.readRange(LARGE_KEY, LARGE_SIZE - 8, 8), LARGE_SIZE - 8, 8);
      expectLargeSlice(await s.readRange(LARGE_KEY, LARGE_SIZE - 5, 100), LARGE_SIZE - 5, 5);
      expect((await s.readRange(LARGE_KEY, 10, 0)).byteLength).toBe(0);
      const small = new TextDecoder().decode(await s.readRange("data/odd names/a&b +c.csv", 2, 1));
      expect(small).toBe(TEXT_OBJECTS["data/odd names/a&b +c.csv"]!.slice(2, 3));
    });

    it("refuses a range that starts past the end as invalid", async () => {
      const err = await connectorError(store().readRange(LARGE_KEY, LARGE_SIZE + 10, 4));
      expect(err.kind).toBe("invalid");
    });

    it("answers not_found for a missing object, naming it", async () => {
      const streamErr = await connectorError(store().stream("data/missing.csv"));
      expect(streamErr.kind).toBe("not_found");
      expect(streamErr.message).toContain("data/missing.csv");
      const rangeErr = await connectorError(store().readRange("data/missing.csv", 0, 10));
      expect(rangeErr.kind).toBe("not_found");
    });
  });
}
