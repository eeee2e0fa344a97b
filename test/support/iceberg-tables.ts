/**
 * Iceberg tables (format v2) written for the tests, in Node, with real writers: Parquet data
 * files by hyparquet-writer, manifest lists and manifests (Avro object container files) by avsc,
 * and the table metadata JSON as the Iceberg table spec lays it out. The Worker reads them back
 * through its own readers (src/scan/iceberg).
 */

import { Buffer } from "node:buffer";
import { createRequire } from "node:module";
import { parquetWriteBuffer } from "hyparquet-writer";
import { snappyCompress } from "hyparquet-writer/src/snappy.js";

const require = createRequire(import.meta.url);
const avro = require("avsc") as typeof import("avsc");

/** One row of the test tables. */
export interface OrderRow {
  id: bigint;
  amount: number | null;
  status: string | null;
  created_at: Date | null;
}

/** A table written for a test: its files (key → bytes) and the metastore's view of it. */
export interface WrittenTable {
  objects: Map<string, Uint8Array>;
  location: string;
  metadataLocation: string;
}

/** Snapshot ids beyond 2^53, as Iceberg's random ids usually are: they must survive the JSON and Avro readers. */
const SNAPSHOT_1 = 6148914691236517205n;
const SNAPSHOT_2 = 7905675286932149841n;

const ICEBERG_SCHEMA = {
  type: "struct",
  "schema-id": 0,
  fields: [
    { id: 1, name: "id", required: true, type: "long" },
    { id: 2, name: "amount", required: false, type: "double" },
    { id: 3, name: "status", required: false, type: "string" },
    { id: 4, name: "created_at", required: false, type: "timestamptz" },
  ],
};

/** Rows of a data file, numbered from `first`. */
export function orderRows(first: number, count: number, status = "open"): OrderRow[] {
  return Array.from({ length: count }, (_, i) => ({
    id: BigInt(first + i),
    amount: (first + i) % 4 === 0 ? null : (first + i) * 1.5,
    status,
    created_at: new Date(Date.UTC(2024, 0, 1 + first + i)),
  }));
}

function parquetFile(rows: OrderRow[]): Uint8Array {
  return new Uint8Array(
    parquetWriteBuffer({
      columnData: [
        { name: "id", data: rows.map((r) => r.id), type: "INT64", nullable: false },
        { name: "amount", data: rows.map((r) => r.amount), type: "DOUBLE" },
        { name: "status", data: rows.map((r) => r.status), type: "STRING" },
        { name: "created_at", data: rows.map((r) => r.created_at), type: "TIMESTAMP" },
      ],
    }),
  );
}

// ---- Avro: the Iceberg spec's manifest list and manifest schemas (format v2), with field ids ----

const optional = (type: unknown) => ["null", type];
const mapOf = (name: string, keyId: number, valueId: number, valueType: string) =>
  optional({
    type: "array",
    logicalType: "map",
    items: {
      type: "record",
      name,
      fields: [
        { name: "key", type: "int", "field-id": keyId },
        { name: "value", type: valueType, "field-id": valueId },
      ],
    },
  });

export const MANIFEST_FILE_SCHEMA = {
  type: "record",
  name: "manifest_file",
  fields: [
    { name: "manifest_path", type: "string", "field-id": 500 },
    { name: "manifest_length", type: "long", "field-id": 501 },
    { name: "partition_spec_id", type: "int", "field-id": 502 },
    { name: "content", type: "int", "field-id": 517 },
    { name: "sequence_number", type: "long", "field-id": 515 },
    { name: "min_sequence_number", type: "long", "field-id": 516 },
    { name: "added_snapshot_id", type: "long", "field-id": 503 },
    { name: "added_files_count", type: "int", "field-id": 504 },
    { name: "existing_files_count", type: "int", "field-id": 505 },
    { name: "deleted_files_count", type: "int", "field-id": 506 },
    { name: "added_rows_count", type: "long", "field-id": 512 },
    { name: "existing_rows_count", type: "long", "field-id": 513 },
    { name: "deleted_rows_count", type: "long", "field-id": 514 },
    {
      name: "partitions",
      type: optional({
        type: "array",
        items: {
          type: "record",
          name: "r508",
          fields: [
            { name: "contains_null", type: "boolean", "field-id": 509 },
            { name: "contains_nan", type: optional("boolean"), "field-id": 518 },
            { name: "lower_bound", type: optional("bytes"), "field-id": 510 },
            { name: "upper_bound", type: optional("bytes"), "field-id": 511 },
          ],
        },
        "element-id": 508,
      }),
      default: null,
      "field-id": 507,
    },
    { name: "key_metadata", type: optional("bytes"), default: null, "field-id": 519 },
  ],
};

export const MANIFEST_ENTRY_SCHEMA = {
  type: "record",
  name: "manifest_entry",
  fields: [
    { name: "status", type: "int", "field-id": 0 },
    { name: "snapshot_id", type: optional("long"), default: null, "field-id": 1 },
    { name: "sequence_number", type: optional("long"), default: null, "field-id": 3 },
    { name: "file_sequence_number", type: optional("long"), default: null, "field-id": 4 },
    {
      name: "data_file",
      "field-id": 2,
      type: {
        type: "record",
        name: "r2",
        fields: [
          { name: "content", type: "int", "field-id": 134 },
          { name: "file_path", type: "string", "field-id": 100 },
          { name: "file_format", type: "string", "field-id": 101 },
          { name: "partition", type: { type: "record", name: "r102", fields: [] }, "field-id": 102 },
          { name: "record_count", type: "long", "field-id": 103 },
          { name: "file_size_in_bytes", type: "long", "field-id": 104 },
          { name: "column_sizes", type: mapOf("k117_v118", 117, 118, "long"), default: null, "field-id": 108 },
          { name: "value_counts", type: mapOf("k119_v120", 119, 120, "long"), default: null, "field-id": 109 },
          { name: "null_value_counts", type: mapOf("k121_v122", 121, 122, "long"), default: null, "field-id": 110 },
          { name: "lower_bounds", type: mapOf("k126_v127", 126, 127, "bytes"), default: null, "field-id": 125 },
          { name: "upper_bounds", type: mapOf("k129_v130", 129, 130, "bytes"), default: null, "field-id": 128 },
          { name: "key_metadata", type: optional("bytes"), default: null, "field-id": 131 },
          {
            name: "split_offsets",
            type: optional({ type: "array", items: "long", "element-id": 133 }),
            default: null,
            "field-id": 132,
          },
          {
            name: "equality_ids",
            type: optional({ type: "array", items: "int", "element-id": 136 }),
            default: null,
            "field-id": 135,
          },
          { name: "sort_order_id", type: optional("int"), default: null, "field-id": 140 },
        ],
      },
    },
  ],
};

/** avsc's long as a bigint (its documented custom long type), so 64-bit snapshot ids are written exactly. */
const bigintLong = avro.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(BigInt(n));
    return buf;
  },
  fromJSON: (n: number) => BigInt(n),
  toJSON: (n: bigint) => Number(n),
  isValid: (n: unknown) => typeof n === "bigint",
  compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
});

const typeOf = (schema: object) =>
  avro.Type.forSchema(schema as never, { registry: { long: bigintLong }, wrapUnions: true } as never);

/** An Avro object container file of `records`, written by avsc's block encoder (blocks of about `blockSize` bytes). */
export async function avroFile(
  schema: object,
  records: object[],
  metadata: Record<string, string>,
  codec: "null" | "deflate" | "snappy",
  blockSize?: number,
): Promise<Uint8Array> {
  const encoder = new avro.streams.BlockEncoder(typeOf(schema), {
    codec,
    // Avro's snappy codec: the compressed block, then the CRC-32 of the uncompressed data, big-endian.
    // (Given, `codecs` replaces avsc's own null and deflate: only for snappy.)
    ...(codec === "snappy" ? { codecs: { snappy: snappyCodec } } : {}),
    metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v)])),
    ...(blockSize ? { blockSize } : {}),
  } as never);
  const chunks: Buffer[] = [];
  encoder.on("data", (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    encoder.on("end", () => resolve());
    encoder.on("error", reject);
  });
  for (const record of records) encoder.write(withBuffers(record));
  encoder.end();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}

function snappyCodec(buf: Buffer, cb: (err: Error | null, out?: Buffer) => void) {
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(buf));
  cb(null, Buffer.concat([Buffer.from(snappyCompress(buf)), crc]));
}

/** CRC-32 (IEEE 802.3), as Avro's snappy codec appends it. */
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** avsc takes bytes and fixed values as Node Buffers: the plain Uint8Arrays of the samples become Buffers. */
function withBuffers(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.isBuffer(value) ? value : Buffer.from(value);
  if (Array.isArray(value)) return value.map(withBuffers);
  if (value && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withBuffers(v)]));
  }
  return value;
}

const ADDED = 1;
const EXISTING = 0;
const DELETED = 2;

interface DataFileRef {
  path: string;
  rows: number;
  bytes: number;
}

/** A manifest entry; `content` 1 is a position-delete file (in a delete manifest). */
function entry(status: number, snapshot: bigint, sequence: bigint, file: DataFileRef, content = 0) {
  return {
    status,
    snapshot_id: { long: snapshot },
    sequence_number: { long: sequence },
    file_sequence_number: { long: sequence },
    data_file: {
      content,
      file_path: file.path,
      file_format: "PARQUET",
      partition: {},
      record_count: BigInt(file.rows),
      file_size_in_bytes: BigInt(file.bytes),
      column_sizes: { array: [{ key: 1, value: BigInt(file.bytes) }] },
      value_counts: { array: [{ key: 1, value: BigInt(file.rows) }] },
      null_value_counts: null,
      lower_bounds: { array: [{ key: 1, value: Buffer.alloc(8) }] },
      upper_bounds: null,
      key_metadata: null,
      split_offsets: { array: [4n] },
      equality_ids: null,
      sort_order_id: { int: 0 },
    },
  };
}

/**
 * Writes table `name` at `location` (a URI of the bucket: s3://bucket/…, abfss://container@account…/…)
 * with two snapshots: the first appends files A and B; the second, the current one, deletes B
 * (a DELETED entry) and appends C. The current snapshot's rows are A's and C's only.
 * `keyPrefix` is the location's path in the bucket, where the objects are written. With
 * `positionDeletes`, the current snapshot also has a delete manifest with a position-delete file
 * (merge-on-read), which a light scan must refuse rather than count deleted rows.
 */
export async function writeOrdersTable(options: {
  location: string;
  keyPrefix: string;
  codec: "null" | "deflate";
  rows: { a: OrderRow[]; b: OrderRow[]; c: OrderRow[] };
  positionDeletes?: boolean;
}): Promise<WrittenTable> {
  const { location, keyPrefix, codec } = options;
  const objects = new Map<string, Uint8Array>();
  const put = (relative: string, bytes: Uint8Array) => {
    objects.set(`${keyPrefix}/${relative}`, bytes);
    return { uri: `${location}/${relative}`, bytes: bytes.byteLength };
  };
  const dataFile = (name: string, rows: OrderRow[]): DataFileRef => {
    const written = put(`data/${name}.parquet`, parquetFile(rows));
    return { path: written.uri, rows: rows.length, bytes: written.bytes };
  };
  const a = dataFile("00000-0-a", options.rows.a);
  const b = dataFile("00001-0-b", options.rows.b);
  const c = dataFile("00000-1-c", options.rows.c);

  const manifestMetadata = {
    schema: JSON.stringify(ICEBERG_SCHEMA),
    "schema-id": "0",
    "partition-spec": "[]",
    "partition-spec-id": "0",
    "format-version": "2",
    content: "data",
  };
  const manifest = async (name: string, entries: object[]) =>
    put(`metadata/${name}.avro`, await avroFile(MANIFEST_ENTRY_SCHEMA, entries, manifestMetadata, codec));
  const manifestListEntry = (
    m: { uri: string; bytes: number },
    snapshot: bigint,
    sequence: bigint,
    counts: number[],
    content = 0,
  ) => ({
    manifest_path: m.uri,
    manifest_length: BigInt(m.bytes),
    partition_spec_id: 0,
    content,
    sequence_number: sequence,
    min_sequence_number: 1n,
    added_snapshot_id: snapshot,
    added_files_count: counts[0],
    existing_files_count: counts[1],
    deleted_files_count: counts[2],
    added_rows_count: 0n,
    existing_rows_count: 0n,
    deleted_rows_count: 0n,
    partitions: { array: [] },
    key_metadata: null,
  });
  const manifestList = async (
    name: string,
    snapshot: bigint,
    parent: bigint | null,
    sequence: bigint,
    entries: object[],
  ) =>
    put(
      `metadata/${name}.avro`,
      await avroFile(
        MANIFEST_FILE_SCHEMA,
        entries,
        {
          "snapshot-id": String(snapshot),
          "parent-snapshot-id": parent === null ? "null" : String(parent),
          "sequence-number": String(sequence),
          "format-version": "2",
        },
        codec,
      ),
    );

  // Snapshot 1: A and B added.
  const m1 = await manifest("m1-snap1", [entry(ADDED, SNAPSHOT_1, 1n, a), entry(ADDED, SNAPSHOT_1, 1n, b)]);
  const list1 = await manifestList(`snap-${SNAPSHOT_1}-1-list1`, SNAPSHOT_1, null, 1n, [
    manifestListEntry(m1, SNAPSHOT_1, 1n, [2, 0, 0]),
  ]);
  // Snapshot 2 (current): B deleted, A kept, C added.
  const m1b = await manifest("m1-snap2", [entry(EXISTING, SNAPSHOT_1, 1n, a), entry(DELETED, SNAPSHOT_2, 1n, b)]);
  const m2 = await manifest("m2-snap2", [entry(ADDED, SNAPSHOT_2, 2n, c)]);
  const deletes = [];
  if (options.positionDeletes) {
    // A position-delete file removing row 0 of A (columns file_path, pos: Iceberg spec, "Position Delete Files").
    const written = put(
      "data/00002-deletes.parquet",
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [
            { name: "file_path", data: [a.path], type: "STRING", nullable: false },
            { name: "pos", data: [0n], type: "INT64", nullable: false },
          ],
        }),
      ),
    );
    const deleteFile = { path: written.uri, rows: 1, bytes: written.bytes };
    const dm = await manifest("d1-snap2", [entry(ADDED, SNAPSHOT_2, 2n, deleteFile, 1)]);
    deletes.push(manifestListEntry(dm, SNAPSHOT_2, 2n, [1, 0, 0], 1));
  }
  const list2 = await manifestList(`snap-${SNAPSHOT_2}-1-list2`, SNAPSHOT_2, SNAPSHOT_1, 2n, [
    manifestListEntry(m1b, SNAPSHOT_2, 2n, [0, 1, 1]),
    manifestListEntry(m2, SNAPSHOT_2, 2n, [1, 0, 0]),
    ...deletes,
  ]);

  const snapshot = (id: bigint, parent: bigint | null, sequence: number, list: string, operation: string) => ({
    "snapshot-id": `@${id}@`,
    ...(parent === null ? {} : { "parent-snapshot-id": `@${parent}@` }),
    "sequence-number": sequence,
    "timestamp-ms": 1_717_000_000_000 + sequence,
    "manifest-list": list,
    summary: { operation },
    "schema-id": 0,
  });
  const metadata = (current: bigint, snapshots: object[], sequence: number) =>
    // Snapshot ids are written as JSON numbers of 19 digits, as Iceberg writes them (JSON.stringify cannot).
    JSON.stringify(
      {
        "format-version": 2,
        "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
        location,
        "last-sequence-number": sequence,
        "last-updated-ms": 1_717_000_000_000 + sequence,
        "last-column-id": 4,
        "current-schema-id": 0,
        schemas: [ICEBERG_SCHEMA],
        "default-spec-id": 0,
        "partition-specs": [{ "spec-id": 0, fields: [] }],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{ "order-id": 0, fields: [] }],
        properties: { "write.format.default": "parquet" },
        "current-snapshot-id": `@${current}@`,
        refs: { main: { "snapshot-id": `@${current}@`, type: "branch" } },
        snapshots,
        "snapshot-log": [],
        "metadata-log": [],
      },
      null,
      2,
    ).replace(/"@(\d+)@"/g, "$1");
  const enc = new TextEncoder();
  put(
    "metadata/00001-first.metadata.json",
    enc.encode(metadata(SNAPSHOT_1, [snapshot(SNAPSHOT_1, null, 1, list1.uri, "append")], 1)),
  );
  const current = put(
    "metadata/00002-second.metadata.json",
    enc.encode(
      metadata(
        SNAPSHOT_2,
        [
          snapshot(SNAPSHOT_1, null, 1, list1.uri, "append"),
          snapshot(SNAPSHOT_2, SNAPSHOT_1, 2, list2.uri, "overwrite"),
        ],
        2,
      ),
    ),
  );
  return { objects, location, metadataLocation: current.uri };
}
