import { brotliCompressSync, gzipSync } from "node:zlib";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { parquetHeader } from "hyparquet/src/column.js";
import { parquetWriteBuffer, schemaFromColumnData } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { ConnectorError } from "../../../src/scan/connectors/types";
import { bytesSource, type RecordSource, readColumns, readRecords, readSchema } from "../../../src/scan/formats";
import { batchesOf, encoder, failure, rowsOf, rowsOfColumns } from "./helpers";
import { idAndTagsSchema, withFooter, withPagesV1 } from "./parquet-v1";

type WriteOptions = Parameters<typeof parquetWriteBuffer>[0];

/** A RecordSource over Parquet bytes that records every ranged read. */
function countingSource(buffer: ArrayBuffer) {
  const bytes = new Uint8Array(buffer);
  const reads: Array<{ offset: number; length: number }> = [];
  const source: RecordSource = {
    name: "test.parquet",
    size: bytes.byteLength,
    stream: async () => {
      throw new Error("Parquet must be read by range");
    },
    readRange: async (offset, length) => {
      reads.push({ offset, length });
      return bytes.slice(offset, offset + length);
    },
  };
  return { source, reads, bytesRead: () => reads.reduce((sum, read) => sum + read.length, 0) };
}

const ROWS = 3500;
const START = Date.UTC(2024, 0, 1);

/** The rows the fixture holds, as the reader should return them. */
function expectedRow(i: number) {
  return {
    id: i,
    big: i % 11 === 0 ? null : i === 5 ? "1152921504606846976" : i * 1000,
    score: i % 5 === 0 ? null : i / 4,
    name: i % 3 === 0 ? null : `name-${i} ✓`,
    active: i % 4 === 0 ? null : i % 2 === 0,
    at: i % 13 === 0 ? null : new Date(START + i * 60_000),
  };
}

function fixture(options: Partial<WriteOptions> = {}): ArrayBuffer {
  const ids = Array.from({ length: ROWS }, (_, i) => i);
  return parquetWriteBuffer({
    columnData: [
      { name: "id", data: ids, type: "INT32", nullable: false },
      {
        name: "big",
        data: ids.map((i) => (i % 11 === 0 ? null : i === 5 ? 2n ** 60n : BigInt(i * 1000))),
        type: "INT64",
      },
      { name: "score", data: ids.map((i) => (i % 5 === 0 ? null : i / 4)), type: "DOUBLE" },
      { name: "name", data: ids.map((i) => (i % 3 === 0 ? null : `name-${i} ✓`)), type: "STRING" },
      { name: "active", data: ids.map((i) => (i % 4 === 0 ? null : i % 2 === 0)), type: "BOOLEAN" },
      { name: "at", data: ids.map((i) => (i % 13 === 0 ? null : new Date(START + i * 60_000))), type: "TIMESTAMP" },
    ],
    rowGroupSize: 1000,
    ...options,
  });
}

describe("Parquet reader", () => {
  it("reads the same values as columns as it does as rows", async () => {
    const { source } = countingSource(fixture());
    const rows = await rowsOf(readRecords(source, "parquet", { batchSize: 300 }));
    expect(rows).toHaveLength(ROWS);
    expect(await rowsOfColumns(readColumns(source, "parquet", { batchSize: 300 }))).toEqual(rows);
    expect(await rowsOfColumns(readColumns(source, "parquet", { columns: ["at", "nope", "big"] }))).toEqual(
      rows.map((row) => ({ at: row.at, nope: null, big: row.big })),
    );
  });

  it.each([
    ["UNCOMPRESSED", {}],
    ["SNAPPY", {}],
    ["GZIP", { GZIP: (input: Uint8Array) => new Uint8Array(gzipSync(input)) }],
    ["BROTLI", { BROTLI: (input: Uint8Array) => new Uint8Array(brotliCompressSync(input)) }],
  ] as const)(
    "reads every row group of a %s file, with nulls, BigInt and Date converted",
    async (codec, compressors) => {
      const { source } = countingSource(fixture({ codec, compressors }));
      const batches = await batchesOf(readRecords(source, "parquet", { batchSize: 400 }));
      // Batches never span row groups (1000, 1000, 1000, 500 rows).
      expect(batches.map((batch) => batch.rows.length)).toEqual([
        400, 400, 200, 400, 400, 200, 400, 400, 200, 400, 100,
      ]);
      const rows = batches.flatMap((batch) => batch.rows);
      expect(rows).toHaveLength(ROWS);
      for (let i = 0; i < ROWS; i++) {
        if (JSON.stringify(rows[i]) !== JSON.stringify(expectedRow(i))) expect(rows[i]).toEqual(expectedRow(i));
      }
      expect(rows[1]!.at).toBeInstanceOf(Date);
      expect(Object.keys(rows[0]!)).toEqual(["id", "big", "score", "name", "active", "at"]);
    },
  );

  it("reads optional columns whose pages hold no null, dictionary-encoded or not", async () => {
    const ids = Array.from({ length: 2500 }, (_, i) => i);
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: "code", data: ids.map((i) => `c${i % 7}`), type: "STRING" },
        { name: "text", data: ids.map((i) => `text ${i} ✓`), type: "STRING" },
        { name: "big", data: ids.map((i) => BigInt(i) * 3n), type: "INT64" },
        { name: "at", data: ids.map((i) => new Date(START + i * 1000)), type: "TIMESTAMP" },
        { name: "some", data: ids.map((i) => (i < 1200 ? i / 2 : null)), type: "DOUBLE" },
      ],
      rowGroupSize: 1000,
    });
    const rows = await rowsOfColumns(readColumns(countingSource(buffer).source, "parquet", { batchSize: 700 }));
    expect(rows).toEqual(
      ids.map((i) => ({
        code: `c${i % 7}`,
        text: `text ${i} ✓`,
        big: i * 3,
        at: new Date(START + i * 1000),
        some: i < 1200 ? i / 2 : null,
      })),
    );
  });

  it.each([
    ["v2, snappy", "SNAPPY", false],
    ["v2, uncompressed", "UNCOMPRESSED", false],
    ["v1, snappy", "SNAPPY", true],
    ["v1, uncompressed", "UNCOMPRESSED", true],
  ] as const)("reads text columns (PLAIN and dictionary pages %s) as hyparquet decodes them", async (_, codec, v1) => {
    const ids = Array.from({ length: 2600 }, (_, i) => i);
    // Nulls only in the first row group's "text": later pages have none (their levels are skipped).
    const text = (i: number) => (i < 1000 && i % 3 === 0 ? null : i % 7 === 0 ? `é ${i} ✓ 😀` : `text-${i}`);
    const bad = (i: number) =>
      i % 4 === 0
        ? null
        : i % 5 === 0
          ? new Uint8Array([0x61, 0xc3])
          : i % 9 === 0
            ? encoder.encode(`\ufeff${i}`)
            : encoder.encode(`r${i}`);
    const written = parquetWriteBuffer({
      columnData: [
        { name: "text", data: ids.map(text) },
        { name: "required", data: ids.map((i) => (i % 11 === 0 ? "" : `req ${i}`)) },
        { name: "code", data: ids.map((i) => (i % 10 === 0 ? null : `c${i % 7}`)) },
        { name: "raw", data: ids.map(bad) },
      ],
      schema: [
        { name: "root", num_children: 4 },
        { name: "text", type: "BYTE_ARRAY", repetition_type: "OPTIONAL", converted_type: "UTF8" },
        { name: "required", type: "BYTE_ARRAY", repetition_type: "REQUIRED", logical_type: { type: "STRING" } },
        { name: "code", type: "BYTE_ARRAY", repetition_type: "OPTIONAL", converted_type: "UTF8" },
        { name: "raw", type: "BYTE_ARRAY", repetition_type: "OPTIONAL" },
      ],
      rowGroupSize: 1000,
      codec: v1 ? "UNCOMPRESSED" : codec,
    });
    const buffer = v1 ? withPagesV1(written, codec) : written;
    // "code" is dictionary-encoded: its batches carry the codes (rowsOfColumns checks them against the values).
    const coded: string[] = [];
    for await (const batch of readColumns(countingSource(buffer).source, "parquet", { batchSize: 700 })) {
      batch.dictionaries?.forEach((d, k) => {
        if (d !== undefined) coded.push(batch.names[k]!);
      });
    }
    expect(coded.filter((name) => name === "code")).toHaveLength(5);
    const rows = await rowsOfColumns(readColumns(countingSource(buffer).source, "parquet", { batchSize: 700 }));
    expect(rows.map((row) => row.text)).toEqual(ids.map(text));
    expect(rows.map((row) => row.required)).toEqual(ids.map((i) => (i % 11 === 0 ? "" : `req ${i}`)));
    expect(rows.map((row) => row.code)).toEqual(ids.map((i) => (i % 10 === 0 ? null : `c${i % 7}`)));
    // Bytes that are not UTF-8, a BOM first: as hyparquet's own decoding, value by value.
    const reference = await parquetReadObjects({ file: buffer });
    expect(rows.map((row) => row.raw)).toEqual(reference.map((row) => row.raw ?? null));
    expect(rows[5]!.raw).toBe("a\ufffd");
    expect(rows[9]!.raw).toBe("9");
  });

  it("hands over dictionary-encoded columns' codes with their values, across pages and batches", async () => {
    const ids = Array.from({ length: 2600 }, (_, i) => i);
    const code = (i: number) => (i % 10 === 0 ? null : `c${i % 7}`);
    const level = (i: number) => (i % 6 === 0 ? null : (i % 5) / 2);
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: "code", data: ids.map(code), type: "STRING" },
        { name: "level", data: ids.map(level), type: "DOUBLE" },
        { name: "plain", data: ids.map(code), type: "STRING", encoding: "PLAIN" },
      ],
      rowGroupSize: 1000,
      // Pages of a few hundred rows: batches of 700 rows span pages.
      pageSize: 256,
    });
    const coded = new Map<string, number>();
    let batches = 0;
    for await (const batch of readColumns(countingSource(buffer).source, "parquet", { batchSize: 700 })) {
      batches++;
      batch.dictionaries?.forEach((d, k) => {
        if (d !== undefined) coded.set(batch.names[k]!, (coded.get(batch.names[k]!) ?? 0) + 1);
      });
    }
    expect(batches).toBe(5);
    expect(Object.fromEntries(coded)).toEqual({ code: 5, level: 5 });
    // rowsOfColumns checks every code against its row's value.
    const rows = await rowsOfColumns(readColumns(countingSource(buffer).source, "parquet", { batchSize: 700 }));
    expect(rows).toEqual(ids.map((i) => ({ code: code(i), level: level(i), plain: code(i) })));
  });

  it("reads timestamps in ms and µs as the instants hyparquet gives, far and negative ones too", async () => {
    const instants = [0, 1, -1, 1_700_000_000_123, -86_400_001, 253_402_300_799_999, 8_640_000_000_000_000];
    const micros = [0n, 999n, -999n, -1001n, 1_700_000_000_123_456n, 253_402_300_799_999_999n];
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: "ms", data: instants.map((ms) => new Date(ms)) },
        { name: "us", data: [...micros, null] },
      ],
      schema: [
        { name: "root", num_children: 2 },
        { name: "ms", type: "INT64", repetition_type: "OPTIONAL", converted_type: "TIMESTAMP_MILLIS" },
        {
          name: "us",
          type: "INT64",
          repetition_type: "OPTIONAL",
          logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" },
        },
      ],
    });
    // As columns the instants are epoch milliseconds, flagged, with no Date made per value.
    const batches = [];
    for await (const batch of readColumns(countingSource(buffer).source, "parquet")) batches.push(batch);
    expect(batches.map((batch) => batch.timestamps)).toEqual([[true, true]]);
    expect(batches[0]!.columns[0]).toBeInstanceOf(Float64Array);
    expect(Array.from(batches[0]!.columns[0]!)).toEqual(instants);
    expect(Array.from(batches[0]!.columns[1]!)).toEqual([...micros.map((us) => Number(us / 1000n)), null]);
    const rows = await rowsOfColumns(readColumns(countingSource(buffer).source, "parquet"));
    expect(rows.map((row) => (row.ms as Date).getTime())).toEqual(instants);
    expect(rows.map((row) => (row.us === null ? null : (row.us as Date).getTime()))).toEqual([
      ...micros.map((us) => Number(us / 1000n)),
      null,
    ]);
  });

  it("reads only the requested columns' chunks, one row group at a time", async () => {
    const count = 20_000;
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed.toString(16);
    };
    const buffer = parquetWriteBuffer({
      columnData: [
        { name: "id", data: Array.from({ length: count }, (_, i) => i), type: "INT32" },
        {
          name: "payload",
          data: Array.from({ length: count }, () => random().repeat(2) + random() + random()),
          type: "STRING",
        },
        { name: "flag", data: Array.from({ length: count }, (_, i) => i % 3 === 0), type: "BOOLEAN" },
      ],
      rowGroupSize: 5000,
    });
    const { source, reads, bytesRead } = countingSource(buffer);
    let firstBatchReads = -1;
    let sum = 0;
    let rows = 0;
    for await (const batch of readRecords(source, "parquet", { columns: ["flag", "id"], batchSize: 5000 })) {
      if (firstBatchReads < 0) firstBatchReads = reads.length;
      for (const row of batch.rows) {
        expect(Object.keys(row)).toEqual(["flag", "id"]);
        sum += row.id as number;
        rows++;
      }
    }
    expect(rows).toBe(count);
    expect(sum).toBe((count * (count - 1)) / 2);
    // The footer first, from the end of the file.
    expect(reads[0]!.offset + reads[0]!.length).toBe(buffer.byteLength);
    // The first batch came before the later row groups were read.
    expect(firstBatchReads).toBeLessThan(reads.length);
    // The payload column, most of the file, was never read.
    expect(bytesRead()).toBeLessThan(buffer.byteLength / 4);

    const all = countingSource(buffer);
    await rowsOf(readRecords(all.source, "parquet"));
    expect(all.bytesRead()).toBeGreaterThan(buffer.byteLength * 0.9);
  });

  it("reads a requested column the file lacks as null", async () => {
    const { source } = countingSource(fixture());
    const rows = await rowsOf(readRecords(source, "parquet", { columns: ["id", "missing"], batchSize: 5000 }));
    expect(rows[7]).toEqual({ id: 7, missing: null });
  });

  it("keeps nested values (JSON columns) as they are", async () => {
    const buffer = parquetWriteBuffer({
      columnData: [{ name: "doc", data: [{ a: [1, { b: "x" }] }, null, [1, 2]], type: "JSON" }],
    });
    expect(await rowsOf(readRecords(countingSource(buffer).source, "parquet"))).toEqual([
      { doc: { a: [1, { b: "x" }] } },
      { doc: null },
      { doc: [1, 2] },
    ]);
  });

  it("fails with a ConnectorError on a file that is not Parquet", async () => {
    const notParquet = bytesSource(encoder.encode("id,name\n1,a\n".repeat(10)), "data.csv");
    const error = await failure(rowsOf(readRecords(notParquet, "parquet")));
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe("invalid");
    expect(error.message).toContain("data.csv");
    const tiny = await failure(rowsOf(readRecords(bytesSource(new Uint8Array(3)), "parquet")));
    expect(tiny.kind).toBe("invalid");
  });

  it("fails with a ConnectorError, not a hang or a TypeError, on a page whose runs, counts or dictionary indexes are corrupt", async () => {
    // A run of 2^24 values where a page holds 1,000: hyparquet's decoder would grow its array to fit
    // (2^31, which a corrupt header can as well claim, took the Worker until its CPU limit).
    const hugeRun = [0x80, 0x80, 0x80, 0x10, 0x00]; // RLE header 2^25 (a run of 2^24), then its value
    const ids = Array.from({ length: 1000 }, (_, i) => i);
    const written = parquetWriteBuffer({
      columnData: [
        { name: "score", data: ids.map((i) => (i % 5 === 0 ? null : i / 4)), type: "DOUBLE" },
        { name: "code", data: ids.map((i) => `c${i % 7}`), type: "STRING", nullable: false },
      ],
      codec: "UNCOMPRESSED",
    });
    const cases: Array<[string, ArrayBuffer, RegExp]> = [];
    // Pages v2: the definition levels of "score" (right after the page header) start with the run.
    const v2 = written.slice(0);
    const levels = firstDataPage(v2, 0);
    new Uint8Array(v2).set(hugeRun, levels.body);
    cases.push(["levels, page v2", v2, /more than the page's 1000 values/]);
    // Pages v1: the dictionary indexes of "code" (after their bit width) start with the run.
    const v1 = withPagesV1(written, "UNCOMPRESSED");
    const indexes = firstDataPage(v1, 1);
    expect(indexes.header.data_page_header?.encoding).toBe("RLE_DICTIONARY");
    new Uint8Array(v1).set(hugeRun, indexes.body + 1);
    cases.push(["dictionary indexes, page v1", v1, /more than the page's 1000 values/]);
    // A page header counting more values than its row group has rows.
    const counted = withPagesV1(written, "UNCOMPRESSED");
    const page = firstDataPage(counted, 0);
    const numValues = page.header.data_page_header!.num_values;
    expect(numValues).toBe(1000);
    // num_values is the page header's first field of the data page header: zigzag 1000 is 2000 (d0 0f).
    const bytes = new Uint8Array(counted);
    const at = indexOfBytes(bytes, [0xd0, 0x0f], page.start);
    expect(at).toBeGreaterThan(page.start);
    expect(at).toBeLessThan(page.body);
    bytes.set([0xd2, 0x0f], at); // 1001
    cases.push(["num_values past the row group", counted, /1001 values where its row group has 1000 rows left/]);
    // Dictionary indexes of 7 (3 bits of 0xff) where "code"'s dictionary holds c0 … c6.
    for (const v1Pages of [false, true]) {
      const past = v1Pages ? withPagesV1(written, "UNCOMPRESSED") : written.slice(0);
      const coded = firstDataPage(past, 1);
      const runs = new Uint8Array(past);
      let at = coded.body + 1; // after the bit width ("code" is required: no levels first)
      while (runs[at]! & 0x80) at++;
      runs[at + 1] = 0xff; // the first byte of the first bit-packed run
      cases.push([
        `a dictionary index past the dictionary, page ${v1Pages ? "v1" : "v2"}`,
        past,
        /index \(7\) past its dictionary of 7 values/,
      ]);
    }

    for (const [what, buffer, message] of cases) {
      for (const read of [readRecords, readColumns] as const) {
        const error = await failure(rowsOf(read(countingSource(buffer).source, "parquet") as AsyncIterable<never>));
        expect(error, `${what}, ${read.name}`).toBeInstanceOf(ConnectorError);
        expect(error.kind, what).toBe("invalid");
        expect(error.message, what).toContain("test.parquet");
        expect(error.message, what).toMatch(message);
      }
    }
  });

  it("checks a nested column's pages before hyparquet decodes them, and refuses a footer placing data outside the file", async () => {
    const ids = Array.from({ length: 1000 }, (_, i) => i);
    const tags = (i: number) => (i % 9 === 0 ? null : Array.from({ length: i % 4 }, (_, k) => `t${(i + k) % 30}`));
    const written = parquetWriteBuffer({
      columnData: [
        { name: "id", data: ids },
        { name: "tags", data: ids.map(tags) },
      ],
      schema: idAndTagsSchema("REQUIRED"),
      codec: "UNCOMPRESSED",
    });
    // The file reads as written.
    const rows = await rowsOf(readRecords(countingSource(written).source, "parquet"));
    expect(rows.map((row) => row.tags)).toEqual(ids.map(tags));

    // The leaf's repetition levels start with a run of 2^24 (its page holds about 1,500 values).
    const nested = written.slice(0);
    const leaf = firstDataPage(nested, 1);
    expect(leaf.header.data_page_header_v2!.repetition_levels_byte_length).toBeGreaterThan(5);
    new Uint8Array(nested).set([0x80, 0x80, 0x80, 0x10, 0x00], leaf.body);
    for (const read of [readRecords, readColumns] as const) {
      const error = await failure(rowsOf(read(countingSource(nested).source, "parquet") as AsyncIterable<never>));
      expect(error).toBeInstanceOf(ConnectorError);
      expect(error.message).toMatch(/test\.parquet: Parquet: parquet page: encoded levels or indexes hold more than/);
    }

    // A chunk said to be longer than the file: an invalid file, not a short read retried as transient.
    for (const column of [0, 1]) {
      const outside = withFooter(written, (metadata) => {
        metadata.row_groups[0]!.columns[column]!.meta_data!.total_compressed_size = 10n ** 9n;
      });
      const error = await failure(rowsOf(readRecords(countingSource(outside).source, "parquet")));
      expect(error).toBeInstanceOf(ConnectorError);
      expect(error.kind).toBe("invalid");
      expect(error.message).toMatch(/its footer places data at bytes \d+–\d+ of a \d+-byte file/);
    }
  });

  it("passes the source's own errors through", async () => {
    const source: RecordSource = {
      size: 1000,
      stream: async () => new ReadableStream(),
      readRange: async () => {
        throw new ConnectorError("access denied", "auth");
      },
    };
    const error = await failure(rowsOf(readRecords(source, "parquet")));
    expect(error.kind).toBe("auth");
  });
});

/** The first data page of column `column` in the first row group: where its header starts, the header, where its body starts. */
function firstDataPage(buffer: ArrayBuffer, column: number) {
  const meta = parquetMetadata(buffer).row_groups[0]!.columns[column]!.meta_data!;
  const reader = { view: new DataView(buffer), offset: Number(meta.dictionary_page_offset || meta.data_page_offset) };
  for (;;) {
    const start = reader.offset;
    const header = parquetHeader(reader);
    if (header.type !== "DICTIONARY_PAGE") return { start, header, body: reader.offset };
    reader.offset += header.compressed_page_size;
  }
}

function indexOfBytes(bytes: Uint8Array, needle: number[], from: number): number {
  for (let i = from; i + needle.length <= bytes.length; i++) if (needle.every((b, k) => bytes[i + k] === b)) return i;
  return -1;
}

describe("Parquet schema", () => {
  it("maps physical and logical types from the footer alone", async () => {
    const columnData = [
      { name: "id", data: [1, 2], type: "INT32" as const, nullable: false },
      { name: "big", data: [1n, 2n], type: "INT64" as const },
      { name: "ratio", data: [0.5, 1.5], type: "FLOAT" as const },
      { name: "score", data: [0.5, null], type: "DOUBLE" as const },
      { name: "ok", data: [true, false], type: "BOOLEAN" as const },
      { name: "name", data: ["a", "b"], type: "STRING" as const },
      { name: "at", data: [new Date(0), new Date(1000)], type: "TIMESTAMP" as const },
      { name: "doc", data: [{ a: 1 }, null], type: "JSON" as const },
      { name: "uid", data: ["00112233-4455-6677-8899-aabbccddeeff", null], type: "UUID" as const },
      { name: "day", data: [new Date(Date.UTC(2024, 0, 2)), null] },
      { name: "price", data: [12.34, null] },
      { name: "clock", data: [3_723_004, null] },
      { name: "raw", data: [new Uint8Array([1, 2, 255]), null] },
    ];
    const buffer = parquetWriteBuffer({
      // The schema below carries the types.
      columnData: columnData.map(({ name, data }) => ({ name, data })),
      schema: schemaFromColumnData({
        columnData,
        schemaOverrides: {
          day: { name: "day", type: "INT32", converted_type: "DATE", repetition_type: "OPTIONAL" },
          price: {
            name: "price",
            type: "INT64",
            converted_type: "DECIMAL",
            scale: 2,
            precision: 10,
            repetition_type: "OPTIONAL",
          },
          clock: { name: "clock", type: "INT32", converted_type: "TIME_MILLIS", repetition_type: "OPTIONAL" },
          raw: { name: "raw", type: "BYTE_ARRAY", logical_type: { type: "BSON" }, repetition_type: "OPTIONAL" },
        },
      }),
    });
    const { source, bytesRead } = countingSource(buffer);
    expect(await readSchema(source, "parquet")).toEqual([
      { name: "id", type: "integer", nullable: false },
      { name: "big", type: "integer", nullable: true },
      { name: "ratio", type: "number", nullable: true },
      { name: "score", type: "number", nullable: true },
      { name: "ok", type: "boolean", nullable: true },
      { name: "name", type: "string", nullable: true },
      { name: "at", type: "timestamp", nullable: true },
      { name: "doc", type: "object", nullable: true },
      { name: "uid", type: "string", nullable: true },
      { name: "day", type: "date", nullable: true },
      { name: "price", type: "number", nullable: true },
      { name: "clock", type: "string", nullable: true },
      { name: "raw", type: "binary", nullable: true },
    ]);
    expect(bytesRead()).toBe(buffer.byteLength); // a small file: the footer read covers it
    expect((await readSchema(source, "parquet", { columns: ["ok", "id"] })).map((field) => field.name)).toEqual([
      "id",
      "ok",
    ]);

    const rows = await rowsOf(readRecords(source, "parquet", { columns: ["day", "price", "clock", "uid"] }));
    expect(rows[0]).toEqual({
      day: new Date(Date.UTC(2024, 0, 2)),
      price: 12.34,
      clock: "01:02:03.004",
      uid: "00112233-4455-6677-8899-aabbccddeeff",
    });
  });
});
