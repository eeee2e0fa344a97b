/**
 * Iceberg tables whose files come from writers independent of ours: Parquet data files written by
 * DuckDB (with the field ids Iceberg writers put in the Parquet schema), manifest lists and
 * manifests by Debian's python3-avro (test/support/avro_write.py), in the layouts the Iceberg table
 * spec gives. They hold what real tables hold and the orders table does not:
 *
 * - `evolved` (format v2, snappy manifests): a column renamed after a file was written (`name` →
 *   `label`, field id 2), a new column taking the old name (`name`, field id 5), a column added
 *   later (`score`), one added with an initial default (`flag`, true), and an identity partition
 *   (`category`) whose value one file holds only in its manifest (written with
 *   write.data.partition-columns=false, as Hive-migrated and some Spark tables are).
 * - `legacyV1` (format v1, deflate): the deprecated layout: `schema` and `partition-spec` instead of
 *   their lists, a snapshot listing its manifests inline (no manifest list), v1 manifest entries;
 *   a date identity partition held only in the manifest.
 */

import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DuckDBInstance } from "@duckdb/node-api";
import { MANIFEST_ENTRY_SCHEMA, MANIFEST_FILE_SCHEMA, type WrittenTable } from "./iceberg-tables";

/** Debian's python3 (python3-avro and python3-snappy are Debian packages, installed by .ci/run). */
const PYTHON = "/usr/bin/python3";
const AVRO_WRITER = fileURLToPath(new URL("./avro_write.py", import.meta.url).href);

/** An Avro container file written by python3-avro. */
export function pythonAvro(
  schema: object,
  records: object[],
  metadata: Record<string, string>,
  codec: string,
): Uint8Array {
  try {
    return new Uint8Array(
      execFileSync(PYTHON, [AVRO_WRITER], { input: JSON.stringify({ schema, records, metadata, codec }) }),
    );
  } catch (error) {
    throw new Error(
      `${PYTHON} ${AVRO_WRITER} failed (Debian's python3-avro and python3-snappy are needed): ${String(error)}`,
    );
  }
}

/** Parquet files written by DuckDB from a query, with Iceberg field ids. */
async function duckdbParquet(files: Array<{ query: string; fieldIds: Record<string, number> }>): Promise<Uint8Array[]> {
  const dir = await mkdtemp(join(tmpdir(), "iceberg-duckdb-"));
  const db = await DuckDBInstance.create(":memory:");
  const connection = await db.connect();
  try {
    const out: Uint8Array[] = [];
    for (const [i, file] of files.entries()) {
      const path = join(dir, `${i}.parquet`);
      const ids = Object.entries(file.fieldIds)
        .map(([name, id]) => `${name}: ${id}`)
        .join(", ");
      await connection.run(`COPY (${file.query}) TO '${path}' (FORMAT parquet, FIELD_IDS {${ids}})`);
      out.push(new Uint8Array(await readFile(path)));
    }
    return out;
  } finally {
    connection.closeSync();
    db.closeSync();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The v2 manifest entry schema with a partition struct of these fields. */
function entrySchemaWith(partition: object[]): object {
  const schema = structuredClone(MANIFEST_ENTRY_SCHEMA) as { fields: Array<{ name: string; type: unknown }> };
  const dataFile = schema.fields.find((f) => f.name === "data_file")!.type as {
    fields: Array<{ name: string; type: unknown }>;
  };
  dataFile.fields.find((f) => f.name === "partition")!.type = { type: "record", name: "r102", fields: partition };
  return schema;
}

interface Written {
  uri: string;
  bytes: number;
}

function tableWriter(location: string, keyPrefix: string) {
  const objects = new Map<string, Uint8Array>();
  const put = (relative: string, bytes: Uint8Array): Written => {
    objects.set(`${keyPrefix}/${relative}`, bytes);
    return { uri: `${location}/${relative}`, bytes: bytes.byteLength };
  };
  return { objects, put };
}

/** The `evolved` table (format v2) at `location`, its objects under `keyPrefix`. */
export async function writeEvolvedTable(location: string, keyPrefix: string): Promise<WrittenTable> {
  const { objects, put } = tableWriter(location, keyPrefix);
  const [a, b] = await duckdbParquet([
    // Written under schema 0, partition category=alpha, the partition column left out of the file.
    {
      query: "SELECT * FROM (VALUES (1::BIGINT, 'a1'), (2, 'a2'), (3, 'a3')) t(id, name)",
      fieldIds: { id: 1, name: 2 },
    },
    // Written under schema 1, partition category=beta, the partition column in the file.
    {
      query:
        "SELECT * FROM (VALUES (10::BIGINT, 'b10', 'beta', 1.5::DOUBLE, 'n10'), (11, 'b11', 'beta', 2.5, 'n11'), " +
        "(12, 'b12', 'beta', 3.5, 'n12'), (13, 'b13', 'beta', 4.5, 'n13')) t(id, label, category, score, name)",
      fieldIds: { id: 1, label: 2, category: 3, score: 4, name: 5 },
    },
  ]);
  const fileA = put("data/category=alpha/00000-0-a.parquet", a!);
  const fileB = put("data/category=beta/00000-1-b.parquet", b!);

  const schema0 = {
    type: "struct",
    "schema-id": 0,
    fields: [
      { id: 1, name: "id", required: true, type: "long" },
      { id: 2, name: "name", required: false, type: "string" },
      { id: 3, name: "category", required: false, type: "string" },
    ],
  };
  const schema1 = {
    type: "struct",
    "schema-id": 1,
    fields: [
      { id: 1, name: "id", required: true, type: "long" },
      { id: 2, name: "label", required: false, type: "string" },
      { id: 3, name: "category", required: false, type: "string" },
      { id: 4, name: "score", required: false, type: "double" },
      { id: 5, name: "name", required: false, type: "string" },
    ],
  };
  const schema2 = {
    ...schema1,
    "schema-id": 2,
    fields: [
      ...schema1.fields,
      { id: 6, name: "flag", required: false, type: "boolean", "initial-default": true, "write-default": true },
    ],
  };
  const spec = [{ name: "category", transform: "identity", "source-id": 3, "field-id": 1000 }];
  const partitionFields = [{ name: "category", type: ["null", "string"], default: null, "field-id": 1000 }];
  const snapshot = 4_000_000_000_000_001;
  const dataFile = (file: Written, category: string, rows: number) => ({
    status: 1,
    snapshot_id: snapshot,
    sequence_number: 1,
    file_sequence_number: 1,
    data_file: {
      content: 0,
      file_path: file.uri,
      file_format: "PARQUET",
      partition: { category },
      record_count: rows,
      file_size_in_bytes: file.bytes,
      column_sizes: null,
      value_counts: null,
      null_value_counts: null,
      lower_bounds: null,
      upper_bounds: null,
      key_metadata: null,
      split_offsets: null,
      equality_ids: null,
      sort_order_id: 0,
    },
  });
  const manifest = put(
    "metadata/m0-evolved.avro",
    pythonAvro(
      entrySchemaWith(partitionFields),
      [dataFile(fileA, "alpha", 3), dataFile(fileB, "beta", 4)],
      {
        schema: JSON.stringify(schema2),
        "schema-id": "2",
        "partition-spec": JSON.stringify(spec),
        "partition-spec-id": "0",
        "format-version": "2",
        content: "data",
      },
      "snappy",
    ),
  );
  const list = put(
    `metadata/snap-${snapshot}-1-list.avro`,
    pythonAvro(
      MANIFEST_FILE_SCHEMA,
      [
        {
          manifest_path: manifest.uri,
          manifest_length: manifest.bytes,
          partition_spec_id: 0,
          content: 0,
          sequence_number: 1,
          min_sequence_number: 1,
          added_snapshot_id: snapshot,
          added_files_count: 2,
          existing_files_count: 0,
          deleted_files_count: 0,
          added_rows_count: 7,
          existing_rows_count: 0,
          deleted_rows_count: 0,
          partitions: [{ contains_null: false, contains_nan: null, lower_bound: null, upper_bound: null }],
          key_metadata: null,
        },
      ],
      { "snapshot-id": String(snapshot), "parent-snapshot-id": "null", "sequence-number": "1", "format-version": "2" },
      "snappy",
    ),
  );
  const metadata = {
    "format-version": 2,
    "table-uuid": "1f0b8a52-7a43-4c5e-9d7e-5b2f4c0e8a11",
    location,
    "last-sequence-number": 1,
    "last-updated-ms": 1_717_000_100_000,
    "last-column-id": 6,
    "current-schema-id": 2,
    schemas: [schema0, schema1, schema2],
    "default-spec-id": 0,
    "partition-specs": [{ "spec-id": 0, fields: spec }],
    "last-partition-id": 1000,
    "default-sort-order-id": 0,
    "sort-orders": [{ "order-id": 0, fields: [] }],
    properties: { "write.format.default": "parquet" },
    "current-snapshot-id": snapshot,
    refs: { main: { "snapshot-id": snapshot, type: "branch" } },
    snapshots: [
      {
        "snapshot-id": snapshot,
        "sequence-number": 1,
        "timestamp-ms": 1_717_000_100_000,
        "manifest-list": list.uri,
        summary: { operation: "append" },
        "schema-id": 1,
      },
    ],
    "snapshot-log": [],
    "metadata-log": [],
  };
  const current = put("metadata/00003-evolved.metadata.json", new TextEncoder().encode(JSON.stringify(metadata)));
  return { objects, location, metadataLocation: current.uri };
}

/** The `legacyV1` table (format v1, inline manifests) at `location`, its objects under `keyPrefix`. */
export async function writeLegacyV1Table(location: string, keyPrefix: string): Promise<WrittenTable> {
  const { objects, put } = tableWriter(location, keyPrefix);
  const [c, d] = await duckdbParquet([
    {
      query: "SELECT * FROM (VALUES (1::BIGINT, 10.0::DOUBLE), (2, 20.0), (3, NULL)) t(id, amount)",
      fieldIds: { id: 1, amount: 2 },
    },
    {
      query: "SELECT * FROM (VALUES (4::BIGINT, 40.0::DOUBLE), (5, 50.0)) t(id, amount)",
      fieldIds: { id: 1, amount: 2 },
    },
  ]);
  const fileC = put("data/day=2024-03-18/00000-0-c.parquet", c!);
  const fileD = put("data/day=2024-03-19/00000-0-d.parquet", d!);
  const schema = {
    type: "struct",
    fields: [
      { id: 1, name: "id", required: false, type: "long" },
      { id: 2, name: "amount", required: false, type: "double" },
      { id: 3, name: "day", required: false, type: "date" },
    ],
  };
  const spec = [{ name: "day", transform: "identity", "source-id": 3, "field-id": 1000 }];
  // Iceberg spec, format v1 manifest_entry: snapshot_id required, no sequence numbers, no content.
  const entrySchema = {
    type: "record",
    name: "manifest_entry",
    fields: [
      { name: "status", type: "int", "field-id": 0 },
      { name: "snapshot_id", type: "long", "field-id": 1 },
      {
        name: "data_file",
        "field-id": 2,
        type: {
          type: "record",
          name: "r2",
          fields: [
            { name: "file_path", type: "string", "field-id": 100 },
            { name: "file_format", type: "string", "field-id": 101 },
            {
              name: "partition",
              "field-id": 102,
              type: {
                type: "record",
                name: "r102",
                fields: [{ name: "day", type: ["null", "int"], "field-id": 1000 }],
              },
            },
            { name: "record_count", type: "long", "field-id": 103 },
            { name: "file_size_in_bytes", type: "long", "field-id": 104 },
            { name: "block_size_in_bytes", type: "long", "field-id": 105 },
          ],
        },
      },
    ],
  };
  const snapshot = 4_000_000_000_000_002;
  const entry = (file: Written, day: number, rows: number) => ({
    status: 1,
    snapshot_id: snapshot,
    data_file: {
      file_path: file.uri,
      file_format: "PARQUET",
      partition: { day },
      record_count: rows,
      file_size_in_bytes: file.bytes,
      block_size_in_bytes: 67_108_864,
    },
  });
  // 2024-03-18 and -19 as days since 1970-01-01.
  const manifest = put(
    "metadata/m0-legacy.avro",
    pythonAvro(
      entrySchema,
      [entry(fileC, 19800, 3), entry(fileD, 19801, 2)],
      { schema: JSON.stringify(schema), "partition-spec": JSON.stringify(spec), "format-version": "1" },
      "deflate",
    ),
  );
  const metadata = {
    "format-version": 1,
    "table-uuid": "5c3e2b8d-6f1a-4d2e-8b7c-9a0d1e2f3a4b",
    location,
    "last-updated-ms": 1_717_000_200_000,
    "last-column-id": 3,
    schema,
    "partition-spec": spec,
    properties: {},
    "current-snapshot-id": snapshot,
    snapshots: [
      {
        "snapshot-id": snapshot,
        "timestamp-ms": 1_717_000_200_000,
        manifests: [manifest.uri],
        summary: { operation: "append" },
      },
    ],
  };
  const current = put("metadata/v1.metadata.json", new TextEncoder().encode(JSON.stringify(metadata)));
  return { objects, location, metadataLocation: current.uri };
}
