import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { R2Store } from "../../../src/scan/connectors/r2";
import { connectorError, objectStoreContract } from "./contract";
import { PAGE_SIZE, seedObjects } from "./fixtures";

const PREFIX = "tenant-a/";

beforeAll(async () => {
  for (const [key, body] of seedObjects()) await env.UPLOADS.put(PREFIX + key, body);
  // Another tenant's folder, and a key that only shares the prefix's first letters.
  await env.UPLOADS.put("tenant-b/data/2024/secret.csv", "id\n1\n");
  await env.UPLOADS.put("tenant-ab/data/2024/other.csv", "id\n1\n");
});

objectStoreContract(
  "R2 (env.UPLOADS)",
  () => new R2Store(env.UPLOADS, PREFIX),
  () => new R2Store(env.UPLOADS, PREFIX, PAGE_SIZE),
);

describe("R2Store", () => {
  it("sees only keys below its prefix, relative to it", async () => {
    const store = new R2Store(env.UPLOADS, PREFIX);
    const found = await store.list("data/**");
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((o) => o.key.startsWith("data/"))).toBe(true);
    expect(found.map((o) => o.key)).not.toContain("data/2024/secret.csv");
    expect((await connectorError(store.stream("../tenant-b/data/2024/secret.csv"))).kind).toBe("not_found");
  });

  it("without a prefix, keys are the bucket's own", async () => {
    const found = await new R2Store(env.UPLOADS).list("tenant-b/**/*.csv");
    expect(found.map((o) => o.key)).toEqual(["tenant-b/data/2024/secret.csv"]);
  });
});
