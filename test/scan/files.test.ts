import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { R2Store } from "../../src/scan/connectors";
import { MAX_NEWEST_ROWS, profileObjects, type ScanProgress } from "../../src/scan/files";

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

  it("a scan stopped by limit reports the bytes it read, not 0", async () => {
    const { store, object } = await csvObject(100_000);
    const reports: ScanProgress[] = [];
    const profile = await profileObjects(store, [object], {
      format: "csv",
      profile: { limit: 500 },
      onProgress: async (p) => {
        reports.push(p);
      },
    });
    expect(profile.row_count).toBe(500);
    const last = reports.at(-1)!;
    expect(last.bytes).toBeGreaterThan(0);
    // It stopped early: what it read is a part of the file, not all of it.
    expect(last.bytes).toBeLessThan(object.size);
  });

  it("with a timestamp attribute, limit keeps the newest rows wherever they are in the files", async () => {
    // 5,000 rows whose times are shuffled through the file; two files.
    const times = Array.from({ length: 5000 }, (_, i) => i);
    for (let i = times.length - 1; i > 0; i--) {
      const j = (i * 7919) % (i + 1);
      [times[i], times[j]] = [times[j]!, times[i]!];
    }
    const iso = (t: number) => new Date(Date.UTC(2024, 0, 1) + t * 60_000).toISOString();
    const objects = [];
    for (const part of [times.slice(0, 2500), times.slice(2500)]) {
      const key = `files-test/${crypto.randomUUID()}.csv`;
      await env.UPLOADS.put(key, `seq,ts\n${part.map((t) => `${t},${iso(t)}`).join("\n")}\n`);
      objects.push({ key, size: (await env.UPLOADS.head(key))!.size });
    }
    const store = new R2Store(env.UPLOADS);
    const profile = await profileObjects(store, objects, {
      format: "csv",
      profile: { limit: 100, timestampAttribute: "ts" },
    });
    expect(profile.row_count).toBe(100);
    expect(profile.sampled).toBe(true);
    const seq = profile.attributes.find((a) => a.name === "seq")!;
    // The newest 100 minutes: seq 4900..4999, whichever file and line they were on.
    expect([seq.min, seq.max]).toEqual([4900, 4999]);
    expect(profile.freshness).toBe(iso(4999));
    // Without a timestamp attribute: the first rows in file order.
    const first = await profileObjects(store, objects, { format: "csv", profile: { limit: 100 } });
    expect(first.attributes.find((a) => a.name === "seq")!.max).not.toBe(4999);
    expect(MAX_NEWEST_ROWS).toBeGreaterThanOrEqual(100_000);
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
