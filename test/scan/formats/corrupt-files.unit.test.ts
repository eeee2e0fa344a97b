/**
 * Files damaged at random, profiled as a file scan profiles them (profileObjects): each one is
 * either profiled or refused with a ConnectorError (the scan fails naming the file), never a
 * TypeError or RangeError (reported as an internal error) and never a hang. A fixed seed keeps
 * the damage the same from run to run; the cases that once failed are pinned in parquet.unit.test.ts
 * and avro.test.ts.
 */

import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { ConnectorError, type ObjectStore } from "../../../src/scan/connectors/types";
import { profileObjects } from "../../../src/scan/files";
import type { FileFormat } from "../../../src/scan/formats";
import { idAndTagsSchema, withPagesV1 } from "./parquet-v1";

const FILES_PER_FORMAT = 300;
const ROWS = 600;

function parquetFile(): ArrayBuffer {
  const ids = Array.from({ length: ROWS }, (_, i) => i);
  return parquetWriteBuffer({
    columnData: [
      { name: "id", data: ids, type: "INT32" },
      { name: "name", data: ids.map((i) => (i % 7 === 0 ? null : `name-${i % 40}`)), type: "STRING" },
      { name: "note", data: ids.map((i) => `free text ${i * 7919}`), type: "STRING" },
      { name: "amount", data: Float64Array.from(ids, (i) => i * 1.5), type: "DOUBLE" },
      { name: "at", data: ids.map((i) => new Date(1.7e12 + i * 1000)), type: "TIMESTAMP" },
      { name: "flag", data: ids.map((i) => i % 3 === 0), type: "BOOLEAN" },
      { name: "big", data: ids.map((i) => (i % 5 === 0 ? null : BigInt(i) * 1000000007n)), type: "INT64" },
    ],
    rowGroupSize: 200,
    codec: "UNCOMPRESSED",
  });
}

/** A list column, read by hyparquet's own assembly (parquet.ts checks its pages first). */
function nestedParquetFile(): ArrayBuffer {
  const ids = Array.from({ length: ROWS }, (_, i) => i);
  return parquetWriteBuffer({
    columnData: [
      { name: "id", data: ids },
      {
        name: "tags",
        data: ids.map((i) =>
          i % 9 === 0 ? null : Array.from({ length: i % 4 }, (_, k) => (k === 2 ? null : `t${(i + k) % 30}`)),
        ),
      },
    ],
    schema: idAndTagsSchema("OPTIONAL"),
    rowGroupSize: 200,
  });
}

const text = (s: string) => new TextEncoder().encode(s);
const records = Array.from({ length: ROWS }, (_, i) => ({
  id: i,
  name: `n${i % 9}`,
  nested: { a: [i, "x"] },
  when: null,
}));
const FILES: Array<[string, FileFormat, Uint8Array]> = [
  ["parquet, pages v2", "parquet", new Uint8Array(parquetFile())],
  ["parquet, pages v1 snappy", "parquet", new Uint8Array(withPagesV1(parquetFile(), "SNAPPY"))],
  ["parquet, a list column", "parquet", new Uint8Array(nestedParquetFile())],
  ["csv", "csv", text(`a,b,c\n${records.map((r) => `${r.id},"${r.name}, quoted ""x""",${r.id / 2}`).join("\n")}`)],
  ["ndjson", "ndjson", text(records.map((r) => JSON.stringify(r)).join("\n"))],
  ["json", "json", text(JSON.stringify(records))],
];

/** A store of one object, read as a scan reads it (streamed, or by range for Parquet). */
function storeOf(bytes: Uint8Array): ObjectStore {
  return {
    list: async () => [],
    stream: async () => new Blob([bytes]).stream(),
    readRange: async (_key, offset, length) => bytes.slice(offset, offset + length),
  };
}

describe("damaged files", () => {
  it.each(FILES)("%s: every damaged copy is profiled or refused with a ConnectorError", async (_what, format, good) => {
    // sfc32-like state, seeded per format so each file gets its own damage.
    let seed = good.length;
    const random = () => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
      return ((seed ^ (seed >>> 12)) >>> 0) / 2 ** 32;
    };
    const outcomes = { profiled: 0, refused: 0 };
    const unexpected: string[] = [];
    for (let n = 0; n < FILES_PER_FORMAT; n++) {
      const bytes = good.slice();
      const changes = 1 + Math.floor(random() * 8);
      for (let k = 0; k < changes; k++) {
        // Parquet keeps its metadata at the end: a third of the changes land in the footer.
        const at =
          format === "parquet" && random() < 0.3
            ? bytes.length - 1 - Math.floor(random() * Math.min(400, bytes.length))
            : Math.floor(random() * bytes.length);
        bytes[at] = Math.floor(random() * 256);
      }
      const file = random() < 0.1 ? bytes.subarray(0, Math.floor(random() * bytes.length)) : bytes;
      try {
        await profileObjects(storeOf(file), [{ key: `damaged.${format}`, size: file.length }], {
          format,
          profile: { breakdown: true },
        });
        outcomes.profiled++;
      } catch (error) {
        if (error instanceof ConnectorError) outcomes.refused++;
        else unexpected.push(`copy ${n}: ${(error as Error).name}: ${(error as Error).message}`);
      }
    }
    expect(unexpected).toEqual([]);
    // Both outcomes occur: the damage reaches the decoders, not only the magic bytes.
    expect(outcomes.profiled).toBeGreaterThan(0);
    expect(outcomes.refused).toBeGreaterThan(0);
  });
});
