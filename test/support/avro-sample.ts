/**
 * An Avro schema using every type of the specification, and records of it: written by avsc in
 * the global setup (iceberg.global.ts), read back in the Worker by src/scan/iceberg/avro.ts.
 * Plain data, importable on both sides.
 */

export const SAMPLE_SCHEMA = {
  type: "record",
  name: "sample",
  namespace: "dq.test",
  fields: [
    { name: "nothing", type: "null" },
    { name: "flag", type: "boolean" },
    { name: "small", type: "int" },
    { name: "big", type: "long" },
    { name: "ratio", type: "float" },
    { name: "precise", type: "double" },
    { name: "raw", type: "bytes" },
    { name: "label", type: "string" },
    { name: "color", type: { type: "enum", name: "color", symbols: ["RED", "GREEN", "BLUE"] } },
    { name: "digest", type: { type: "fixed", name: "md5", size: 4 } },
    { name: "tags", type: { type: "array", items: "string" } },
    { name: "counts", type: { type: "map", values: "long" } },
    { name: "maybe", type: ["null", "string", "long"] },
    {
      name: "child",
      type: {
        type: "record",
        name: "child",
        fields: [
          { name: "digest2", type: "md5" },
          { name: "at", type: "long" },
          { name: "day", type: { type: "int", logicalType: "date" } },
        ],
      },
    },
    { name: "again", type: ["null", "child"] },
  ],
};

/** The records, with longs as bigints (as the custom long type of the writer takes them). */
export function sampleRecords() {
  return Array.from({ length: 40 }, (_, i) => ({
    nothing: null,
    flag: i % 2 === 0,
    small: i % 3 === 0 ? -2147483648 : i * 1000 - 7,
    // Around 2^53 and 2^63: the reader must keep them exact (bigint) where a double cannot.
    big:
      i === 0 ? 9223372036854775807n : i === 1 ? -9223372036854775808n : i === 2 ? 9007199254740993n : BigInt(i - 20),
    ratio: 0.5 * i,
    precise: i / 3,
    raw: new Uint8Array([i, 255 - i, 0]),
    label: `étiquette ${i} ✓`,
    color: ["RED", "GREEN", "BLUE"][i % 3]!,
    digest: new Uint8Array([1, 2, 3, i]),
    tags: Array.from({ length: i % 4 }, (_, j) => `t${j}`),
    counts: i % 2 === 0 ? {} : { a: BigInt(i), clé: -1n },
    maybe: i % 3 === 0 ? null : i % 3 === 1 ? { string: `s${i}` } : { long: BigInt(i) },
    child: { digest2: new Uint8Array([9, 9, 9, i]), at: 1_717_000_000_000_000n + BigInt(i), day: 19_000 + i },
    again: i % 2 === 0 ? null : { "dq.test.child": { digest2: new Uint8Array([0, 0, 0, i]), at: 0n, day: -i } },
  }));
}

/**
 * A schema and records that python3-avro writes from JSON (no bytes, which JSON cannot carry): the
 * files of an Avro writer independent of avsc and of ours, one per codec (iceberg.global.ts).
 */
export const PYTHON_SAMPLE_SCHEMA = {
  type: "record",
  name: "py_sample",
  fields: [
    { name: "id", type: "long", "field-id": 1 },
    { name: "label", type: "string", "field-id": 2 },
    { name: "ratio", type: ["null", "double"], "field-id": 3 },
    { name: "tags", type: { type: "array", items: "string" } },
    { name: "counts", type: { type: "map", values: "int" } },
  ],
};

/** 2,000 records: past python3-avro's block interval (64,000 bytes), so the files have several blocks. */
export function pythonSampleRecords() {
  return Array.from({ length: 2000 }, (_, i) => ({
    id: i * 1_000_003 - 7,
    label: `ligne ${i} ✓ ${"x".repeat(i % 50)}`,
    ratio: i % 5 === 0 ? null : i / 8,
    tags: Array.from({ length: i % 3 }, (_, j) => `t${j}`),
    counts: i % 2 === 0 ? {} : { a: i, b: -i },
  }));
}
