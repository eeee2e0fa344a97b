/**
 * The Thrift binary protocol codec on hand-made bytes (the Thrift binary protocol specification):
 * the call it sends, and the replies it must refuse or wait for. The conversation with a real
 * Thrift server (Apache Thrift's Node library) is in test/scan/iceberg.test.ts.
 */

import { describe, expect, it } from "vitest";
import {
  decodeMessage,
  encodeCall,
  IncompleteMessage,
  stringField,
  stringMapField,
  structField,
  ThriftProtocolError,
} from "../../../src/scan/iceberg/thrift";

const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
const bytes = (h: string) =>
  Uint8Array.from(
    h
      .replace(/\s+/g, "")
      .match(/../g)!
      .map((b) => Number.parseInt(b, 16)),
  );
const str = (s: string) => {
  const b = new TextEncoder().encode(s);
  return `${b.byteLength.toString(16).padStart(8, "0")}${hex(b)}`;
};

describe("Thrift binary protocol", () => {
  it("encodes get_table_req(GetTableRequest {dbName, tblName}) as a strict CALL message", () => {
    const call = encodeCall("get_table_req", 7, [
      {
        id: 1,
        fields: [
          { id: 1, value: "lake" },
          { id: 2, value: "orders" },
        ],
      },
    ]);
    // 0x80010001 (version 1, CALL), "get_table_req", seqid 7, field 1 STRUCT { 1 STRING "lake",
    // 2 STRING "orders", STOP }, STOP.
    expect(hex(call)).toBe(
      `80010001${str("get_table_req")}00000007 0c0001 0b0001${str("lake")} 0b0002${str("orders")} 00 00`.replace(
        / /g,
        "",
      ),
    );
  });

  it("decodes a reply, skipping fields of every type, and waits for the rest of a cut one", () => {
    const reply = bytes(
      `80010002${str("get_table")}00000001` +
        // field 0 STRUCT (Table)
        `0c0000` +
        `0b0001${str("orders")}` + // tableName
        `080004 0000002a` + // i32
        `0a0005 7fffffffffffffff` + // i64 beyond 2^53
        `040006 3ff8000000000000` + // double 1.5
        `020007 01` + // bool
        `0f0008 0c 00000001 0b0001${str("col")} 00` + // list<struct>
        `0d0009 0b0b 00000001 ${str("metadata_location")}${str("s3://b/m.json")}` + // map<string,string>
        `0c0007 0b0002${str("s3://b/t")} 00` + // sd { 2: location }
        `00` + // end of Table
        `00`, // end of result
    );
    const message = decodeMessage(reply);
    expect(message).toMatchObject({ name: "get_table", type: 2, seqid: 1 });
    const table = structField(message.body, 0);
    expect(stringField(table, 1)).toBe("orders");
    expect(table?.get(5)).toBe(9223372036854775807n);
    expect(table?.get(6)).toBe(1.5);
    expect(stringMapField(table, 9)).toEqual({ metadata_location: "s3://b/m.json" });
    expect(stringField(structField(table, 7), 2)).toBe("s3://b/t");
    for (const cut of [3, 20, reply.byteLength - 1]) {
      expect(() => decodeMessage(reply.subarray(0, cut))).toThrow(IncompleteMessage);
    }
  });

  it("refuses an unversioned header, a negative length, an unknown type and endless nesting", () => {
    expect(() => decodeMessage(bytes(`00000009${hex(new TextEncoder().encode("get_table"))}0200000001 00`))).toThrow(
      ThriftProtocolError,
    );
    expect(() => decodeMessage(bytes(`80010002 ffffffff`))).toThrow(/negative string length/);
    expect(() => decodeMessage(bytes(`80010002${str("x")}00000001 110001 00`))).toThrow(/unknown Thrift type/);
    const deep = `80010002${str("x")}00000001${"0c0001".repeat(100)}${"00".repeat(101)}`;
    expect(() => decodeMessage(bytes(deep))).toThrow(/nests too deeply/);
  });
});
