/**
 * A data file's columns onto the table's current schema (src/scan/iceberg/projection.ts): by field
 * id, never by name; what a file lacks from its identity partition, its initial default or null.
 * Whole tables written by DuckDB and python3-avro are scanned in test/scan/iceberg.test.ts.
 */

import { describe, expect, it } from "vitest";
import { ConnectorError } from "../../../src/scan/connectors/types";
import { icebergProjection } from "../../../src/scan/iceberg/projection";
import type { IcebergColumn } from "../../../src/scan/iceberg/table";

const column = (id: number, name: string, type: IcebergColumn["type"], initialDefault?: unknown): IcebergColumn => ({
  id,
  name,
  type,
  ...(initialDefault !== undefined ? { initialDefault } : {}),
});
const unpartitioned = { key: "data/f.parquet", partition: {}, spec: [] };

describe("Iceberg column projection", () => {
  it("reads a renamed column under its current name, and not a dropped column's namesake", () => {
    const table = { columns: [column(1, "id", "long"), column(2, "label", "string"), column(5, "name", "string")] };
    const file = [
      { name: "id", fieldId: 1 },
      { name: "name", fieldId: 2 },
    ];
    expect(icebergProjection(table, file, unpartitioned)).toEqual({
      read: ["id", "name"],
      names: ["id", "label"],
      constants: [{ name: "name", value: null }],
    });
  });

  it("fills a column the file lacks from its identity partition (date, timestamp, decimal, string) before its default", () => {
    const table = {
      columns: [
        column(1, "id", "long"),
        column(2, "day", "date"),
        column(3, "at", "timestamptz"),
        column(4, "price", "decimal(9, 2)"),
        column(5, "region", "string", "eu"),
        column(6, "flag", "boolean", true),
      ],
    };
    const file = {
      key: "data/p.parquet",
      partition: {
        day: 19800,
        at_hour: 5,
        at: 1_710_720_000_000_000,
        price: new Uint8Array([0xff, 0x85]),
        region: "us",
      },
      spec: [
        { name: "day", sourceId: 2, transform: "identity" },
        { name: "at_hour", sourceId: 3, transform: "hour" },
        { name: "at", sourceId: 3, transform: "identity" },
        { name: "price", sourceId: 4, transform: "identity" },
        { name: "region", sourceId: 5, transform: "identity" },
      ],
    };
    expect(icebergProjection(table, [{ name: "id", fieldId: 1 }], file).constants).toEqual([
      { name: "day", value: new Date("2024-03-18T00:00:00Z") },
      { name: "at", value: new Date("2024-03-18T00:00:00Z") },
      { name: "price", value: -1.23 },
      { name: "region", value: "us" },
      { name: "flag", value: true },
    ]);
  });

  it("gives byte, uuid and time partition values as the Parquet reader gives such columns", () => {
    const table = {
      columns: [column(1, "b", "binary"), column(2, "f", "fixed[3]"), column(3, "u", "uuid"), column(4, "t", "time")],
    };
    const uuid = Uint8Array.from([
      0x15, 0x71, 0xef, 0xfb, 0xfa, 0xcd, 0x42, 0xa3, 0x90, 0xe9, 0x0a, 0xf5, 0x22, 0xe9, 0xb6, 0xc2,
    ]);
    const file = {
      key: "data/q.parquet",
      partition: { b: Uint8Array.from([1, 2, 3]), f: Uint8Array.from([0xaa, 0xbb, 0xcc]), u: uuid, t: 45_296_000_000 },
      spec: ["b", "f", "u", "t"].map((name, i) => ({ name, sourceId: i + 1, transform: "identity" })),
    };
    expect(icebergProjection(table, [], file).constants.map((c) => c.value)).toEqual([
      "AQID",
      "qrvM",
      "1571effb-facd-42a3-90e9-0af522e9b6c2",
      "12:34:56",
    ]);
  });

  it("takes initial defaults in their JSON single-value form, and refuses one it cannot give as the reader would", () => {
    const table = {
      columns: [
        column(1, "day", "date", "2003-10-20"),
        column(2, "at", "timestamp", "1970-01-01T00:00:00.012345"),
        column(3, "t", "time", "00:00:00.012345"),
        column(4, "u", "uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
        column(5, "amount", "decimal(7, 2)", "12345.00"),
      ],
    };
    expect(icebergProjection(table, [], unpartitioned).constants.map((c) => c.value)).toEqual([
      new Date("2003-10-20T00:00:00Z"),
      new Date(12),
      "00:00:00.012345",
      "f79c3e09-677c-4bbd-a479-3f349cb785e7",
      12345,
    ]);
    const nested = { columns: [column(1, "s", { type: "struct", fields: [] }, { a: 1 })] };
    expect(() => icebergProjection(nested, [], unpartitioned)).toThrow(ConnectorError);
  });

  it("a file without field ids goes through the name mapping, else by name", () => {
    const table = { columns: [column(1, "a", "int"), column(3, "b", "long")] };
    const file = [{ name: "a" }, { name: "b" }];
    // b was dropped (field id 2) and re-added (3): the mapping no longer names the file's b.
    expect(icebergProjection({ ...table, nameMapping: new Map([["a", 1]]) }, file, unpartitioned)).toEqual({
      read: ["a"],
      names: ["a"],
      constants: [{ name: "b", value: null }],
    });
    expect(icebergProjection(table, file, unpartitioned).read).toEqual(["a", "b"]);
  });
});
