/**
 * The Avro container-file reader against files avsc wrote (test/support/iceberg.global.ts):
 * every type of the specification, longs beyond 2^53, blocks, both codecs; and corrupt files.
 */

import { describe, expect, inject, it } from "vitest";
import { AvroError, readAvroFile } from "../../../src/scan/iceberg/avro";
import { pythonSampleRecords, sampleRecords } from "../../support/avro-sample";

const samples = inject("iceberg").avroSamples;
const pythonSamples = inject("iceberg").pythonAvroSamples;
const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));

/** A written record as the reader gives it: unions unwrapped, safe longs as numbers. */
function expected(record: ReturnType<typeof sampleRecords>[number]) {
  const long = (n: bigint) =>
    n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  const unwrap = (v: Record<string, unknown> | null) => (v === null ? null : Object.values(v)[0]);
  const maybe = unwrap(record.maybe);
  const again = unwrap(record.again) as { digest2: Uint8Array; at: bigint; day: number } | null;
  return {
    ...record,
    ratio: Math.fround(record.ratio),
    big: long(record.big),
    counts: Object.fromEntries(Object.entries(record.counts).map(([k, v]) => [k, long(v)])),
    maybe: typeof maybe === "bigint" ? long(maybe) : maybe,
    child: { ...record.child, at: long(record.child.at) },
    again: again === null ? null : { ...again, at: long(again.at) },
  };
}

describe("Avro container files", () => {
  it.each(["null", "deflate", "snappy"] as const)(
    "reads every record of a %s-codec file written in many blocks",
    async (codec) => {
      const file = await readAvroFile(bytesOf(samples[codec]));
      expect(file.metadata["avro.codec"] ?? "null").toBe(codec);
      expect(JSON.parse(file.metadata["avro.schema"]!).name).toBe("dq.test.sample");
      const records = sampleRecords();
      expect(file.records).toHaveLength(records.length);
      file.records.forEach((got, i) => {
        expect(got).toEqual(expected(records[i]!));
      });
      // 2^63-1, -2^63 and 2^53+1 stay exact.
      expect(file.records.slice(0, 3).map((r) => r.big)).toEqual([
        9223372036854775807n,
        -9223372036854775808n,
        9007199254740993n,
      ]);
    },
  );

  // python-avro's deflate blocks end with 3 bytes of zlib's Adler-32 trailer, which workerd's
  // inflater refused (pyiceberg writes manifests the same way); zstandard was not read at all.
  it.each(["null", "deflate", "snappy", "zstandard"] as const)(
    "reads a %s-codec file written by python3-avro, an independent writer",
    async (codec) => {
      const file = await readAvroFile(bytesOf(pythonSamples[codec]));
      expect(file.metadata["avro.codec"] ?? "null").toBe(codec);
      expect(file.records).toEqual(pythonSampleRecords());
    },
  );

  it("refuses a file that is not Avro, a cut file and a block with a wrong sync marker", async () => {
    const good = bytesOf(samples.null);
    await expect(readAvroFile(new TextEncoder().encode("PAR1 not avro"))).rejects.toThrow(AvroError);
    await expect(readAvroFile(good.subarray(0, good.byteLength - 10))).rejects.toThrow(/ends early/);
    const corrupt = good.slice();
    corrupt[corrupt.byteLength - 1]! ^= 0xff;
    await expect(readAvroFile(corrupt)).rejects.toThrow(/sync marker/);
  });

  it("refuses a corrupt deflate block as Avro data, not a crash", async () => {
    const good = bytesOf(samples.deflate);
    const file = await readAvroFile(good);
    expect(file.records.length).toBeGreaterThan(0);
    const corrupt = good.slice();
    // Past the header (magic, metadata, sync): inside the first block's compressed bytes.
    const headerEnd = findFirstBlock(good);
    for (let i = headerEnd + 4; i < headerEnd + 24; i++) corrupt[i] = 0xff;
    await expect(readAvroFile(corrupt)).rejects.toThrow(AvroError);
  });

  it("refuses a schema it cannot decode by, and counts of items encoded in no bytes, as Avro errors, never hanging", async () => {
    const record = (fields: string) => `{"type":"record","name":"r","fields":${fields}}`;
    // The hand-made file itself reads: one record of one long (zig-zag 7 is 14).
    expect((await readAvroFile(handMade(record('[{"name":"n","type":"long"}]'), [[1, [14]]]))).records).toEqual([
      { n: 7 },
    ]);
    const refused: Array<[string, Uint8Array, RegExp]> = [
      ["a field without a type", handMade(record('[{"name":"n","typ":"long"}]'), [[1, [14]]]), /schema is not valid/],
      ["a field that is null", handMade(record("[null]"), [[1, [14]]]), /field without a name/],
      ["fields that are not a list", handMade(record("7"), [[1, [14]]]), /fields that are not a list/],
      [
        "a fixed type without a size",
        handMade(record('[{"name":"f","type":{"type":"fixed","name":"x"}}]'), [[1, [0]]]),
        /no valid size/,
      ],
      // 2^40 empty records in a block of no bytes.
      ["2^40 records of no bytes", handMade(record("[]"), [[2 ** 40, []]]), /counts 1099511627776 records in 0 bytes/],
      // One record holding an array that counts 2^40 nulls in one byte.
      [
        "an array of 2^40 nulls",
        handMade(record('[{"name":"a","type":{"type":"array","items":"null"}}]'), [[1, [...zigzag(2 ** 40), 0]]]),
        /counts 1099511627776 items/,
      ],
    ];
    for (const [what, bytes, message] of refused) {
      const error = await readAvroFile(bytes).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(AvroError);
      expect((error as Error).message, what).toMatch(message);
    }
  });

  it("refuses a snappy block that does not decompress, or whose CRC-32 does not match, as Avro data", async () => {
    const good = bytesOf(samples.snappy);
    expect((await readAvroFile(good)).records.length).toBeGreaterThan(0);
    const headerEnd = findFirstBlock(good);
    // Inside the first block's compressed bytes: copies that reach before the output's start.
    const garbled = good.slice();
    for (let i = headerEnd + 8; i < headerEnd + 40; i++) garbled[i] = 0xff;
    await expect(readAvroFile(garbled)).rejects.toThrow(AvroError);
    // The block's last byte, its CRC-32's lowest, changed: the data decompresses but does not match it.
    const flipped = good.slice();
    flipped[nextSync(good, headerEnd) - 1]! ^= 0x01;
    await expect(readAvroFile(flipped)).rejects.toThrow(/CRC-32/);
  });
});

/** A zig-zag varint long, as Avro writes counts and lengths. */
function zigzag(n: number): number[] {
  let v = n >= 0 ? 2 * n : -2 * n - 1;
  const out: number[] = [];
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

/** A container file by hand (codec null): `schema` as avro.schema, then blocks of (record count, data). */
function handMade(schema: string, blocks: Array<[number, number[]]>): Uint8Array {
  const sync = Array.from({ length: 16 }, (_, i) => i + 1);
  const text = (s: string) => {
    const bytes = [...new TextEncoder().encode(s)];
    return [...zigzag(bytes.length), ...bytes];
  };
  const out = [0x4f, 0x62, 0x6a, 0x01, ...zigzag(1), ...text("avro.schema"), ...text(schema), 0, ...sync];
  for (const [count, data] of blocks) out.push(...zigzag(count), ...zigzag(data.length), ...data, ...sync);
  return Uint8Array.from(out);
}

/** Where the header's sync marker (the 16 bytes before `blockStart`) next occurs: the end of the first block. */
function nextSync(bytes: Uint8Array, blockStart: number): number {
  const marker = bytes.subarray(blockStart - 16, blockStart);
  for (let at = blockStart; at + 16 <= bytes.byteLength; at++) {
    if (marker.every((b, i) => bytes[at + i] === b)) return at;
  }
  throw new Error("no second sync marker");
}

/**
 * The offset just after the header's sync marker, read as the specification lays the header out:
 * the magic, the metadata map (blocks of a zigzag count, then that many length-prefixed keys and
 * values, a 0 count last; a negative count is followed by the block's size in bytes), the 16-byte sync.
 */
function findFirstBlock(bytes: Uint8Array): number {
  let at = 4;
  const long = () => {
    let n = 0;
    let shift = 1;
    for (;;) {
      const b = bytes[at++]!;
      n += (b & 0x7f) * shift;
      if ((b & 0x80) === 0) break;
      shift *= 128;
    }
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  };
  for (;;) {
    let count = long();
    if (count === 0) break;
    if (count < 0) {
      count = -count;
      long();
    }
    for (let k = 0; k < 2 * count; k++) at += long();
  }
  return at + 16;
}
