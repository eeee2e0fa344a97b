import { env } from "cloudflare:workers";
import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { R2Store, type StoredObject } from "../../../src/scan/connectors";
import { type FileScanOptions, profileObjects } from "../../../src/scan/files";
import { AttributeStats } from "../../../src/scan/profiler/attribute-stats";
import { Breakdown } from "../../../src/scan/profiler/breakdown";
import { ProfileScratch } from "../../../src/scan/profiler/scratch";
import { prng } from "../../support/random";

// Scans share a Worker isolate (as many as its memory admits); each has its own ProfileScratch, so an await in one
// never lets another overwrite what it filled and has yet to read.

/** A table held as batches of columns, as the file readers hand them to the profiler. */
interface Table {
  names: string[];
  batches: unknown[][][];
}

/** `rows` rows of `make(row)` in batches of `batchSize`, column by column. */
function table(names: string[], rows: number, batchSize: number, make: (i: number) => unknown[]): Table {
  const batches: unknown[][][] = [];
  for (let start = 0; start < rows; start += batchSize) {
    const columns: unknown[][] = names.map(() => []);
    for (let i = start; i < Math.min(rows, start + batchSize); i++) {
      const row = make(i);
      for (let k = 0; k < row.length; k++) columns[k]!.push(row[k]);
    }
    batches.push(columns);
  }
  return { names, batches };
}

/** Orders of a shop, as CSV text (the profiler infers types): few codes, amounts, e-mails, blanks. */
function orders(): Table {
  const random = prng(7);
  const countries = ["DE", "FR", "IT", "ES"];
  return table(["country", "amount", "email", "status"], 3000, 700, (i) => [
    countries[Math.floor(random() * countries.length)],
    random() < 0.05 ? "" : (random() * 500).toFixed(2),
    `user${Math.floor(random() * 2000)}@example.com`,
    random() < 0.1 ? null : random() < 0.5 ? "paid" : i % 50 === 0 ? "12" : "open",
  ]);
}

/** Sensor readings, typed (as JSON or Parquet give them): other names, types and batch sizes. */
function readings(): Table {
  const random = prng(11);
  return table(["sensor", "celsius", "ok", "at"], 2600, 1100, (i) => [
    `s-${i % 13}`,
    random() < 0.03 ? null : Math.round(random() * 400 - 100) / 10,
    random() < 0.9,
    new Date(Date.UTC(2025, 0, 1) + i * 60_000),
  ]);
}

/**
 * One scan of `data` as ProfileBuilder.addColumnsOf runs it (each column's profile, then the
 * breakdown reads the codes that profile returned), with `pause()` in between: where another scan
 * in the isolate may run.
 */
async function scan(data: Table, scratch: ProfileScratch, pause: () => Promise<void>) {
  const stats = data.names.map((name) => new AttributeStats(name, scratch, { inferFromText: true }));
  const breakdown = new Breakdown();
  for (const columns of data.batches) {
    const n = columns[0]!.length;
    for (let k = 0; k < columns.length; k++) {
      const codes = stats[k]!.addColumn(columns[k]!, n, null, null);
      await pause();
      breakdown.addColumn(data.names[k]!, columns[k]!, n, codes);
    }
    breakdown.endColumns();
  }
  return {
    attributes: stats.map((s) => s.finish()),
    breakdown: breakdown.finish((name) => stats.find((s) => s.name === name)?.typeFits()),
  };
}

const noPause = async () => {};
/** Hands the isolate to whatever else is waiting: the other scan. */
const yieldTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("scans sharing an isolate", () => {
  it("profile as they would alone when one runs while the other is between a column's profile and its breakdown", async () => {
    const a = orders();
    const b = readings();
    const aloneA = await scan(a, new ProfileScratch(), noPause);
    const aloneB = await scan(b, new ProfileScratch(), noPause);
    const [togetherA, togetherB] = await Promise.all([
      scan(a, new ProfileScratch(), yieldTurn),
      scan(b, new ProfileScratch(), yieldTurn),
    ]);
    expect(togetherA).toEqual(aloneA);
    expect(togetherB).toEqual(aloneB);
    // The data exercise what the scratch holds: codes the breakdown reads, parsed text, patterns.
    expect(aloneA.breakdown.map((x) => x.attribute)).toContain("country");
    expect(aloneA.attributes.find((x) => x.name === "amount")!.inferred_type).toBe("number");
    expect(aloneB.attributes.find((x) => x.name === "at")!.inferred_type).toBe("timestamp");
  });

  it("three file scans at once give each the profile it gets alone", async () => {
    const random = prng(3);
    const csv = (rows: number, row: (i: number) => string) =>
      `${Array.from({ length: rows }, (_, i) => row(i)).join("\n")}\n`;
    const ids = Array.from({ length: 6000 }, (_, i) => i);
    const files: Array<{ body: string | ArrayBuffer; options: FileScanOptions }> = [
      {
        body: `id,city,price,note\n${csv(9000, (i) => `${i},${["Oslo", "Rome", "Lima"][i % 3]},${(random() * 90).toFixed(1)},n${i % 400}`)}`,
        options: { format: "csv", profile: { breakdown: true, idAttributes: ["id"] } },
      },
      {
        body: `when,level,message\n${csv(7000, (i) => `2025-03-${String(1 + (i % 28)).padStart(2, "0")}T10:00:00Z,${i % 7 === 0 ? "WARN" : "INFO"},msg ${i % 97}`)}`,
        options: {
          format: "csv",
          profile: { breakdown: true, timestampAttribute: "when", segments: { level: ["WARN"] } },
        },
      },
      {
        body: parquetWriteBuffer({
          columnData: [
            { name: "id", data: ids, type: "INT32", nullable: false },
            { name: "code", data: ids.map((i) => `c${i % 9}`), type: "STRING" },
            { name: "text", data: ids.map((i) => `free text ${i} ✓`), type: "STRING" },
            { name: "score", data: ids.map((i) => (i % 10 === 0 ? null : i / 8)), type: "DOUBLE" },
          ],
          rowGroupSize: 2500,
        }),
        options: { format: "parquet", profile: { breakdown: true } },
      },
    ];
    const store = new R2Store(env.UPLOADS);
    const objects: StoredObject[] = [];
    for (const file of files) {
      const key = `concurrent-scans/${crypto.randomUUID()}`;
      await env.UPLOADS.put(key, file.body);
      objects.push({ key, size: (await env.UPLOADS.head(key))!.size });
    }
    const run = (k: number) => profileObjects(store, [objects[k]!], files[k]!.options);
    const alone = [];
    for (let k = 0; k < files.length; k++) alone.push(await run(k));
    const together = await Promise.all(files.map((_, k) => run(k)));
    expect(together).toEqual(alone);
    expect(alone.map((p) => p.row_count)).toEqual([9000, 7000, 6000]);
  });
});
