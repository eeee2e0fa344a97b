import { describe, expect, it } from "vitest";
import { ConnectorError } from "../../../src/scan/connectors/types";
import { bytesSource, type FileFormat, readRecords, readSchema } from "../../../src/scan/formats";
import { chunkSource, encoder, failure, rowsOf, splitAt, splitEvery } from "./helpers";

const read = (text: string, format: FileFormat, options: Parameters<typeof readRecords>[2] = {}) =>
  rowsOf(readRecords(bytesSource(encoder.encode(text)), format, options));

/** Rows from every split of the bytes into two chunks, and byte by byte: all must equal `expected`. */
async function expectSameAtEveryBoundary(bytes: Uint8Array, format: FileFormat, expected: unknown[]): Promise<void> {
  for (let offset = 0; offset <= bytes.byteLength; offset++) {
    expect(await rowsOf(readRecords(chunkSource(splitAt(bytes, offset)), format)), `split at byte ${offset}`).toEqual(
      expected,
    );
  }
  expect(await rowsOf(readRecords(chunkSource(splitEvery(bytes, 1)), format))).toEqual(expected);
}

const tricky = [
  { id: 1, text: 'he said "}]{[" and left', path: "C:\\dir\\", nested: { list: [1, [2, { deep: "]" }]], empty: {} } },
  { id: 2, text: "\\", quote: '"', unicode: "Zoë 東京 😀 \u2028", escapes: "\n\t\u0001" },
  { id: 3, text: null, flag: true, number: -1.5e-7, array: [] },
];

describe("NDJSON reader", () => {
  it("reads one object per line, skipping blank lines, with CRLF line ends and nested values kept", async () => {
    const text = '{"a":1,"b":{"c":[1,2]}}\r\n\r\n   \n{"a":2,"b":null}\n{"a":3}';
    expect(await read(text, "ndjson")).toEqual([{ a: 1, b: { c: [1, 2] } }, { a: 2, b: null }, { a: 3 }]);
  });

  it("gives identical rows whatever the chunk boundaries", async () => {
    const bytes = encoder.encode(`${tricky.map((row) => JSON.stringify(row)).join("\n")}\n`);
    await expectSameAtEveryBoundary(bytes, "ndjson", tricky);
  });

  it("fails on a malformed line, naming its line number", async () => {
    const error = await failure(read('{"a":1}\n\n{"a":2,}\n{"a":3}\n', "ndjson"));
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe("invalid");
    expect(error.message).toContain("line 3");
  });

  it("fails on a line that is JSON but not an object", async () => {
    const error = await failure(read('{"a":1}\n[1,2]\n', "ndjson"));
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.message).toMatch(/line 2: expected a JSON object, found an array/);
  });

  it("reads only the requested attributes; an absent one is null", async () => {
    expect(await read('{"a":1,"b":2}\n{"b":3}\n', "ndjson", { columns: ["b", "a"] })).toEqual([
      { b: 2, a: 1 },
      { b: 3, a: null },
    ]);
  });
});

describe("JSON reader", () => {
  it("streams the elements of a top-level array of objects", async () => {
    const text = `[\n  ${tricky.map((row) => JSON.stringify(row, null, 2)).join(",\n  ")}\n]\n`;
    expect(await read(text, "json")).toEqual(tricky);
  });

  it("gives identical rows whatever the chunk boundaries", async () => {
    const bytes = encoder.encode(` \n[${tricky.map((row) => JSON.stringify(row, null, 1)).join(" ,")}] \n`);
    await expectSameAtEveryBoundary(bytes, "json", tricky);
  });

  it("reads NDJSON when the first non-space character is {", async () => {
    expect(await read('\n\n {"a":1}\n{"a":"[2]"}\n', "json")).toEqual([{ a: 1 }, { a: "[2]" }]);
    const error = await failure(read('\n{"a":1}\n{"a":\n', "json"));
    expect(error.message).toContain("line 3");
  });

  it("reads an empty array or an empty file as no rows", async () => {
    expect(await read("[ ]", "json")).toEqual([]);
    expect(await read("  \n", "json")).toEqual([]);
  });

  it("yields batches of at most batchSize rows", async () => {
    const rows = Array.from({ length: 2345 }, (_, i) => ({ i, s: `v${i}` }));
    const bytes = encoder.encode(JSON.stringify(rows));
    const batches: number[] = [];
    for await (const batch of readRecords(chunkSource(splitEvery(bytes, 4096)), "json", { batchSize: 1000 })) {
      batches.push(batch.rows.length);
    }
    expect(batches).toEqual([1000, 1000, 345]);
  });

  it.each([
    ['[{"a":1},{"a":2,}]', /element 2 \(line 1\) is not valid JSON/],
    ['[{"a":1},\n{"a":2}', /not closed/],
    ['[{"a":1},\n\n2]', /element 2 \(line 3\): expected a JSON object, found a number/],
    ['[{"a":1},,{"a":2}]', /element 2 .*empty/],
    ['[{"a":1}] x', /unexpected text after the closing "\]"/],
    ['[{"a":1}}]', /unbalanced/],
    ['"just a string"', /expected an array of objects or one object per line/],
  ])("fails on %j with a clear message", async (text, message) => {
    const error = await failure(read(text, "json"));
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe("invalid");
    expect(error.message).toMatch(message);
    expect(error.message).toContain("JSON");
  });
});

describe("JSON and NDJSON schema", () => {
  it("unions the attributes of the first records, in first-seen order, with their types", async () => {
    const text = [
      { id: 1, price: 2, name: "a", at: "2024-01-01T00:00:00Z", tags: ["x"], meta: { k: 1 }, none: null },
      { id: 2, price: 2.5, name: 5, at: "2024-01-02", ok: true },
      { id: 3, extra: "late" },
    ]
      .map((row) => JSON.stringify(row))
      .join("\n");
    const expected = [
      { name: "id", type: "integer", nullable: true },
      { name: "price", type: "number", nullable: true },
      { name: "name", type: "string", nullable: true },
      { name: "at", type: "timestamp", nullable: true },
      { name: "tags", type: "array", nullable: true },
      { name: "meta", type: "object", nullable: true },
      { name: "none", type: "unknown", nullable: true },
      { name: "ok", type: "boolean", nullable: true },
      { name: "extra", type: "string", nullable: true },
    ];
    expect(await readSchema(bytesSource(encoder.encode(text)), "ndjson")).toEqual(expected);
    const array = `[${text.split("\n").join(",")}]`;
    expect(await readSchema(bytesSource(encoder.encode(array)), "json")).toEqual(expected);
    // Only the sample: the third record is not read.
    expect(
      (await readSchema(bytesSource(encoder.encode(array)), "json", { sampleSize: 2 })).map((f) => f.name),
    ).not.toContain("extra");
  });
});
