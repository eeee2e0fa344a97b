/**
 * An Iceberg table's current snapshot, read from its files (Iceberg table spec, format v1 and v2):
 * the table metadata JSON → the current snapshot → its manifest list (Avro) → its manifests
 * (Avro) → the live data files (entry status EXISTING or ADDED; DELETED entries are not part of
 * the snapshot). Only what a light scan needs: the Parquet data files and the current schema.
 */

import { z } from "zod";
import type { SchemaField } from "../../contracts/profile";
import { readBytes } from "../../lib/streams";
import type { ObjectStore, StoredObject } from "../connectors/types";
import { ConnectorError } from "../connectors/types";
import { AvroError, type AvroFile, type AvroRecord, type AvroValue, readAvroFile } from "./avro";

/** A metadata JSON, a manifest list or a manifest larger than this is refused (the Worker's memory). */
export const MAX_METADATA_BYTES = 32 * 1024 * 1024;
/** A snapshot with more data files than this is beyond a light scan. */
export const MAX_DATA_FILES = 100_000;

/** Manifest entry status (manifest_entry.status). */
const DELETED = 2;
/** data_file.content / manifest_file.content: 0 = data, 1 = position deletes / delete manifest, 2 = equality deletes. */
const DATA = 0;

/** Where a file named by an Iceberg URI lies in the connection's bucket. */
export type KeyOf = (uri: string) => string;

/** A column of the current schema: its field id (its identity), name, type and initial default. */
export interface IcebergColumn {
  id: number;
  name: string;
  type: IcebergField["type"];
  /** The value of rows in data files written before the column was added (format v3), when set. */
  initialDefault?: unknown;
}

/** A partition field of a partition spec: the partition tuple's field `name` is `transform(source column)`. */
export interface PartitionField {
  name: string;
  sourceId: number;
  transform: string;
}

/** What the table metadata says of the current state: its schema and its snapshot's manifests. */
export interface IcebergMetadata {
  schema: SchemaField[];
  /** The current schema's top-level columns, by field id. */
  columns: IcebergColumn[];
  /** `schema.name-mapping.default` (top level): a name → its field id, for data files written without ids. */
  nameMapping?: Map<string, number>;
  /** The partition specs by spec id (a manifest names its own in its header too). */
  partitionSpecs: Map<number, PartitionField[]>;
  /** The current snapshot's manifest list, or null for a table without a snapshot (empty). */
  manifestList: string | null;
  /** Format v1: a snapshot may list its manifests inline instead of in a manifest list. */
  manifests?: string[];
}

/** A live data file of the current snapshot, with its partition tuple and the spec that names its fields. */
export interface IcebergDataFile extends StoredObject {
  partition: Record<string, AvroValue>;
  spec: PartitionField[];
}

/**
 * What is read of a table metadata file (Iceberg table spec, "Table Metadata"), checked as it is
 * parsed: a file that is JSON but not in this shape is an input error naming what is wrong, not a
 * TypeError halfway through. Other keys pass through unread.
 */
const icebergField = z.looseObject({
  name: z.string(),
  required: z.boolean().optional(),
  type: z.union([z.string(), z.looseObject({ type: z.string() })]),
  id: z.number(),
  "initial-default": z.unknown().optional(),
});
const partitionFields = z.array(z.looseObject({ name: z.string(), transform: z.string(), "source-id": z.number() }));
const icebergSchema = z.looseObject({
  "schema-id": z.number().optional(),
  fields: z.array(icebergField),
});
const tableMetadata = z.looseObject({
  "format-version": z.number().optional(),
  "current-snapshot-id": z.number().nullable().optional(),
  snapshots: z
    .array(
      z.looseObject({
        "snapshot-id": z.number(),
        "manifest-list": z.string().optional(),
        manifests: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  "current-schema-id": z.number().optional(),
  schemas: z.array(icebergSchema).optional(),
  schema: icebergSchema.optional(),
  "partition-specs": z.array(z.looseObject({ "spec-id": z.number(), fields: partitionFields })).optional(),
  /** Format v1's single spec, a bare list of fields (spec id 0). */
  "partition-spec": partitionFields.optional(),
  properties: z.record(z.string(), z.unknown()).optional(),
});
type TableMetadata = z.infer<typeof tableMetadata>;
type IcebergField = z.infer<typeof icebergField>;

/** Reads the table metadata file `metadataUri` (JSON, or gzipped JSON), through `store`. */
export async function readTableMetadata(
  store: ObjectStore,
  keyOf: KeyOf,
  metadataUri: string,
): Promise<IcebergMetadata> {
  const metadata = await readMetadata(store, keyOf(metadataUri), metadataUri);
  const fields = currentFields(metadata);
  const state = {
    schema: fields.map((f) => ({ name: f.name, type: attributeType(f.type), nullable: !f.required })),
    columns: fields.map((f) => ({
      id: f.id,
      name: f.name,
      type: f.type,
      ...(f["initial-default"] !== undefined ? { initialDefault: f["initial-default"] } : {}),
    })),
    ...nameMappingOf(metadata),
    partitionSpecs: partitionSpecsOf(metadata),
  };
  const currentId = metadata["current-snapshot-id"];
  // No snapshot yet (v1 writes -1): an empty table.
  if (currentId === undefined || currentId === null || currentId === -1) return { ...state, manifestList: null };
  const snapshot = metadata.snapshots?.find((s) => s["snapshot-id"] === currentId);
  if (snapshot?.["manifest-list"]) return { ...state, manifestList: snapshot["manifest-list"] };
  if (snapshot?.manifests) return { ...state, manifestList: null, manifests: snapshot.manifests };
  throw new ConnectorError(
    `the Iceberg metadata ${metadataUri} has no manifest list (nor manifests) for its current snapshot`,
    "invalid",
  );
}

/** The top-level name mapping of `schema.name-mapping.default`, when the table has one. */
function nameMappingOf(metadata: TableMetadata): { nameMapping?: Map<string, number> } {
  const text = metadata.properties?.["schema.name-mapping.default"];
  if (typeof text !== "string") return {};
  const parsed = nameMapping.safeParse(safeJson(text));
  if (!parsed.success)
    throw new ConnectorError("the table's schema.name-mapping.default is not a name mapping", "invalid");
  const mapping = new Map<string, number>();
  for (const field of parsed.data) {
    if (field["field-id"] === undefined) continue;
    for (const name of field.names) mapping.set(name, field["field-id"]);
  }
  return { nameMapping: mapping };
}
const nameMapping = z.array(z.looseObject({ names: z.array(z.string()), "field-id": z.number().optional() }));

function partitionSpecsOf(metadata: TableMetadata): Map<number, PartitionField[]> {
  const specs = new Map<number, PartitionField[]>();
  const fieldsOf = (fields: z.infer<typeof partitionFields>) =>
    fields.map((f) => ({ name: f.name, sourceId: f["source-id"], transform: f.transform }));
  if (metadata["partition-spec"]) specs.set(0, fieldsOf(metadata["partition-spec"]));
  for (const spec of metadata["partition-specs"] ?? []) specs.set(spec["spec-id"], fieldsOf(spec.fields));
  return specs;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The live data files of the current snapshot, from its manifest list (or, format v1, its inline
 * manifests): entries ADDED or EXISTING (a DELETED entry is not part of the snapshot), each with
 * its partition tuple. Delete files and non-Parquet files are refused.
 */
export async function liveDataFiles(
  store: ObjectStore,
  keyOf: KeyOf,
  table: Pick<IcebergMetadata, "manifestList" | "manifests" | "partitionSpecs">,
): Promise<IcebergDataFile[]> {
  const manifests: Array<{ path: string; content: AvroValue; specId: AvroValue }> = table.manifestList
    ? (await readAvro(store, keyOf, table.manifestList)).records.map((m) => {
        if (typeof m.manifest_path !== "string")
          throw new ConnectorError("an Iceberg manifest list entry has no manifest_path", "invalid");
        return { path: m.manifest_path, content: m.content ?? DATA, specId: m.partition_spec_id ?? null };
      })
    : (table.manifests ?? []).map((path) => ({ path, content: DATA, specId: null }));
  const files: IcebergDataFile[] = [];
  for (const manifest of manifests) {
    const { path } = manifest;
    const deletes = manifest.content !== DATA;
    const read = await readAvro(store, keyOf, path);
    const spec = manifestSpec(read, manifest.specId, table.partitionSpecs, path);
    for (const entry of read.records) {
      if (entry.status === DELETED) continue;
      const file = entry.data_file as AvroRecord | undefined;
      if (!file || typeof file.file_path !== "string") {
        throw new ConnectorError(`the Iceberg manifest ${path} has an entry without a data file`, "invalid");
      }
      if (deletes || (file.content ?? DATA) !== DATA) {
        throw new ConnectorError(
          "the table's current snapshot has row-level delete files (merge-on-read): light scans read tables without them only",
          "unsupported",
        );
      }
      const format = String(file.file_format ?? "").toUpperCase();
      if (format !== "PARQUET") {
        throw new ConnectorError(
          `the table has ${format || "unknown"} data files: light scans read Parquet only`,
          "unsupported",
        );
      }
      const partition = file.partition;
      files.push({
        key: keyOf(file.file_path),
        size: Number(file.file_size_in_bytes ?? 0),
        partition:
          partition && typeof partition === "object" && !Array.isArray(partition) && !(partition instanceof Uint8Array)
            ? partition
            : {},
        spec,
      });
      if (files.length > MAX_DATA_FILES) {
        throw new ConnectorError(
          `the table's current snapshot has more than ${MAX_DATA_FILES} data files`,
          "unsupported",
        );
      }
    }
  }
  return files;
}

/**
 * The partition spec of a manifest: the `partition-spec` its header carries (the spec requires
 * it), else the table's spec of the manifest's spec id.
 */
function manifestSpec(
  manifest: AvroFile,
  specId: AvroValue,
  specs: Map<number, PartitionField[]>,
  path: string,
): PartitionField[] {
  const header = partitionFields.safeParse(safeJson(manifest.metadata["partition-spec"] ?? ""));
  if (header.success) {
    return header.data.map((f) => ({ name: f.name, sourceId: f["source-id"], transform: f.transform }));
  }
  const id = Number(specId ?? manifest.metadata["partition-spec-id"] ?? 0);
  const spec = specs.get(id);
  if (!spec && specs.size > 0) {
    throw new ConnectorError(
      `the Iceberg manifest ${path} names partition spec ${id}, which the table lacks`,
      "invalid",
    );
  }
  return spec ?? [];
}

/** The fields of the table's current schema. */
function currentFields(metadata: TableMetadata): IcebergField[] {
  const schema =
    metadata.schemas?.find((s) => s["schema-id"] === metadata["current-schema-id"]) ??
    metadata.schema ??
    metadata.schemas?.[0];
  // Any schema there has its fields (tableMetadata checked them): only its absence is left.
  if (!schema) throw new ConnectorError("the Iceberg metadata has no schema", "invalid");
  return schema.fields;
}

/** An Iceberg type as the attribute types the file readers give (src/scan/formats/parquet.ts). */
export function attributeType(type: IcebergField["type"]): string {
  if (typeof type === "object") return type.type === "list" ? "array" : "object"; // struct, map
  if (type.startsWith("decimal")) return "number";
  if (type.startsWith("fixed")) return "binary";
  if (type.startsWith("timestamp")) return "timestamp";
  switch (type) {
    case "boolean":
      return "boolean";
    case "int":
    case "long":
      return "integer";
    case "float":
    case "double":
      return "number";
    case "date":
      return "date";
    case "binary":
      return "binary";
    default:
      return "string"; // string, uuid, time
  }
}

async function readMetadata(store: ObjectStore, key: string, uri: string): Promise<TableMetadata> {
  let bytes = await readWhole(store, key, uri);
  if (/\.gz\.metadata\.json$|\.metadata\.json\.gz$/.test(key)) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ConnectorError(`the Iceberg metadata ${uri} is not valid JSON`, "invalid");
  }
  const parsed = tableMetadata.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? `at ${issue.path.join(".")}: ` : "";
  throw new ConnectorError(`the Iceberg metadata ${uri} is not table metadata (${where}${issue.message})`, "invalid");
}

async function readAvro(store: ObjectStore, keyOf: KeyOf, uri: string): Promise<AvroFile> {
  try {
    return await readAvroFile(await readWhole(store, keyOf(uri), uri));
  } catch (err) {
    if (err instanceof AvroError)
      throw new ConnectorError(`the Iceberg file ${uri} cannot be read: ${err.message}`, "invalid");
    throw err;
  }
}

/** A whole object (metadata, manifest list, manifest), refused past MAX_METADATA_BYTES. */
async function readWhole(store: ObjectStore, key: string, uri: string): Promise<Uint8Array> {
  return readBytes(await store.stream(key), MAX_METADATA_BYTES, () => {
    return new ConnectorError(`the Iceberg file ${uri} is larger than ${MAX_METADATA_BYTES} bytes`, "unsupported");
  });
}
