import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { ConnectorError } from "../../../src/scan/connectors/types";
import {
  AttributeNames,
  bytesSource,
  type FileFormat,
  MAX_ATTRIBUTES,
  MAX_RECORD_DEPTH,
  MAX_VALUE_CHARS,
  type ReadOptions,
  readRecords,
  readSchema,
} from "../../../src/scan/formats";
import { schemaDepth } from "../../../src/scan/formats/parquet";
import { encoder, failure, rowsOf } from "./helpers";

const read = (text: string, format: FileFormat, options: ReadOptions = {}) =>
  rowsOf(readRecords(bytesSource(encoder.encode(text), "data-file"), format, options));

/** An input error of the reader: an "invalid" ConnectorError (never a RangeError from the stack). */
async function inputError(promise: Promise<unknown>): Promise<string> {
  const error = await failure(promise);
  expect(error, String(error)).toBeInstanceOf(ConnectorError);
  expect(error.kind).toBe("invalid");
  return error.message;
}

/** A JSON object `levels` deep counting itself: {"a":{"a":…{"a":1}…}}. */
const deepObject = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

const header = (n: number) => Array.from({ length: n }, (_, i) => `c${i}`).join(",");

describe(`JSON records nested deeper than ${MAX_RECORD_DEPTH} levels`, () => {
  it("NDJSON: a record 10,000 deep is an input error naming the line and attribute", async () => {
    const text = `{"id":1}\n{"id":2,"deep":${"[".repeat(10_000)}${"]".repeat(10_000)}}\n`;
    const message = await inputError(read(text, "ndjson"));
    expect(message).toBe(
      `data-file: NDJSON line 2: "deep" nests objects and arrays deeper than ${MAX_RECORD_DEPTH} levels, the most a record may have`,
    );
  });

  it("JSON array: refused while scanning the element, before it is parsed", async () => {
    const message = await inputError(read(`[{"id":1},\n${deepObject(10_000)}]`, "json"));
    expect(message).toMatch(/^data-file: JSON element 2 \(line 2\): nests objects and arrays deeper than 64 levels/);
    // JSON that is one object per line goes through the NDJSON reader, with the same limit.
    expect(await inputError(read(`${deepObject(MAX_RECORD_DEPTH + 1)}\n`, "json"))).toMatch(/NDJSON line 1: "a" nests/);
  });

  it(`reads a record exactly ${MAX_RECORD_DEPTH} levels deep`, async () => {
    for (const format of ["ndjson", "json"] as const) {
      const text = format === "json" ? `[${deepObject(MAX_RECORD_DEPTH)}]` : deepObject(MAX_RECORD_DEPTH);
      expect(await read(text, format), format).toHaveLength(1);
      const over = format === "json" ? `[${deepObject(MAX_RECORD_DEPTH + 1)}]` : deepObject(MAX_RECORD_DEPTH + 1);
      await inputError(read(over, format));
    }
  });
});

describe(`values longer than ${MAX_VALUE_CHARS} characters`, () => {
  const long = "x".repeat(MAX_VALUE_CHARS + 1);
  const fits = "x".repeat(MAX_VALUE_CHARS);

  it("CSV: an input error naming the record and attribute, quoted or not, in one chunk or carried", async () => {
    expect(await inputError(read(`id,note\n1,ok\n2,${long}\n`, "csv"))).toBe(
      `data-file: CSV record 3: the value of "note" is longer than 1 Mi characters, the most one value may have`,
    );
    expect(await inputError(read(`id,note\n1,"${long}"\n`, "csv"))).toMatch(
      /CSV record 2: the value of "note" is longer/,
    );
    // Carried across the source's 64 KiB chunks without a closing quote: the likely cause is said.
    expect(await inputError(read(`id,note\n1,"${long}`, "csv"))).toMatch(/an unbalanced quote\?\)$/);
    expect(await read(`id,note\n1,${fits}\n`, "csv")).toEqual([{ id: "1", note: fits }]);
  });

  it("NDJSON and JSON: a string, or a nested value whose JSON text is that long", async () => {
    expect(await inputError(read(`{"id":1,"note":"${long}"}\n`, "ndjson"))).toMatch(
      /NDJSON line 1: the value of "note" is longer than 1 Mi characters/,
    );
    const nested = JSON.stringify({ id: 1, tags: Array.from({ length: 200_000 }, () => "abcd") });
    expect(await inputError(read(`[${nested}]`, "json"))).toMatch(/JSON element 1 \(line 1\): the value of "tags"/);
    expect(await read(`{"note":"${fits}"}`, "ndjson")).toEqual([{ note: fits }]);
  });

  it("Parquet: a text value that long is an input error naming the row", async () => {
    const buffer = parquetWriteBuffer({
      columnData: [{ name: "note", data: ["ok", long], type: "STRING" }],
    });
    const source = bytesSource(new Uint8Array(buffer), "data.parquet");
    expect(await inputError(rowsOf(readRecords(source, "parquet")))).toBe(
      `data.parquet: Parquet row 2: the value of "note" is longer than 1 Mi characters, the most one value may have`,
    );
  });
});

describe(`more than ${MAX_ATTRIBUTES} attributes in a scan`, () => {
  const limit = () => ({ attributes: new AttributeNames(MAX_ATTRIBUTES) });

  it("CSV: a header of 2,001 attributes fails the scan; 2,000 are read; the schema load is not limited", async () => {
    const wide = `${header(MAX_ATTRIBUTES + 1)}\n`;
    expect(await inputError(read(wide, "csv", limit()))).toBe(
      "data-file: CSV header: the data has more than 2000 attributes, the most one asset may have: split it into assets of fewer attributes",
    );
    expect(await read(`${header(MAX_ATTRIBUTES)}\n${"1,".repeat(MAX_ATTRIBUTES - 1)}1\n`, "csv", limit())).toHaveLength(
      1,
    );
    expect(await readSchema(bytesSource(encoder.encode(wide)), "csv")).toHaveLength(MAX_ATTRIBUTES + 1);
  });

  it("NDJSON: attributes are counted over every record, and over every file of the scan", async () => {
    const lines = Array.from({ length: MAX_ATTRIBUTES + 1 }, (_, i) => `{"id":${i},"a${i}":1}`);
    expect(await inputError(read(lines.join("\n"), "ndjson", limit()))).toMatch(
      /NDJSON line 2000: the data has more than 2000 attributes/,
    );
    const options = limit();
    const half = (from: number) =>
      JSON.stringify(Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [`a${from + i}`, i])));
    expect(await read(half(0), "ndjson", options)).toHaveLength(1);
    expect(await inputError(read(half(1200), "ndjson", options))).toMatch(/NDJSON line 1: the data has more than 2000/);
  });

  it("Parquet: a schema of more columns than the limit fails before any row group is read", async () => {
    const buffer = parquetWriteBuffer({
      columnData: Array.from({ length: 5 }, (_, i) => ({ name: `c${i}`, data: [1], type: "INT32" as const })),
    });
    const message = await inputError(
      rowsOf(
        readRecords(bytesSource(new Uint8Array(buffer), "wide.parquet"), "parquet", {
          attributes: new AttributeNames(4),
        }),
      ),
    );
    expect(message).toBe(
      "wide.parquet: Parquet schema: the data has more than 4 attributes, the most one asset may have: split it into assets of fewer attributes",
    );
  });

  it("Parquet schema depth is measured without recursion", () => {
    // root → a (group of 1) → b (group of 1) → c, plus a top-level leaf d.
    const schema = [
      { name: "root", num_children: 2 },
      { name: "a", num_children: 1 },
      { name: "b", num_children: 1 },
      { name: "c" },
      { name: "d" },
    ];
    expect(schemaDepth(schema as never)).toBe(3);
    const deep = [
      { name: "root", num_children: 1 },
      ...Array.from({ length: 100_000 }, (_, i) => ({ name: `g${i}`, num_children: 1 })),
      { name: "leaf" },
    ];
    expect(schemaDepth(deep as never)).toBe(100_001);
  });
});
