import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { R2Store } from "../../src/scan/connectors";
import { profileObjects } from "../../src/scan/files";

async function csvObject(rows: number) {
  const lines = ["id,amount"];
  for (let i = 0; i < rows; i++) lines.push(`${i},${i % 97}`);
  const key = `files-test/${crypto.randomUUID()}.csv`;
  await env.UPLOADS.put(key, `${lines.join("\n")}\n`);
  return { store: new R2Store(env.UPLOADS), object: { key, size: (await env.UPLOADS.head(key))!.size } };
}

describe("profileObjects", () => {
  it("honours limit on the profiled rows, after sampling, and stops reading once it has them", async () => {
    const { store, object } = await csvObject(20_000);
    const sampled = await profileObjects(store, [object], {
      format: "csv",
      profile: { sampleFraction: 10, limit: 1000 },
    });
    // 10 % of 20,000 rows is about 2,000: the limit of 1,000 is reached, not cut to ~100.
    expect(sampled.row_count).toBe(1000);
    expect(sampled.sampled).toBe(true);
    const all = await profileObjects(store, [object], { format: "csv", profile: { limit: 500 } });
    expect(all.row_count).toBe(500);
    const none = await profileObjects(store, [object], { format: "csv", profile: {} });
    expect(none.row_count).toBe(20_000);
  });

  it("keeps only the rows of the filter and after the delta timestamp", async () => {
    const key = `files-test/${crypto.randomUUID()}.csv`;
    await env.UPLOADS.put(
      key,
      "id,country,ts\n1,FR,2024-01-01T00:00:00Z\n2,DE,2024-01-02T00:00:00Z\n3,FR,2024-01-03T00:00:00Z\n4,US,2024-01-04T00:00:00Z\n",
    );
    const object = { key, size: (await env.UPLOADS.head(key))!.size };
    const profile = await profileObjects(new R2Store(env.UPLOADS), [object], {
      format: "csv",
      profile: {},
      filter: { country: ["FR", "DE"] },
      since: { attribute: "ts", after: Date.parse("2024-01-01T12:00:00Z") },
    });
    expect(profile.row_count).toBe(2);
  });
});
