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
import { AvroError, type AvroRecord, readAvroFile } from "./avro";

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

/** What the table metadata says of the current state: its schema and its snapshot's manifest list. */
export interface IcebergMetadata {
  schema: SchemaField[];
  /** The current snapshot's manifest list, or null for a table without a snapshot (empty). */
  manifestList: string | null;
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
});
const icebergSchema = z.looseObject({
  "schema-id": z.number().optional(),
  fields: z.array(icebergField),
});
const tableMetadata = z.looseObject({
  "format-version": z.number().optional(),
  "current-snapshot-id": z.number().nullable().optional(),
  snapshots: z.array(z.looseObject({ "snapshot-id": z.number(), "manifest-list": z.string().optional() })).optional(),
  "current-schema-id": z.number().optional(),
  schemas: z.array(icebergSchema).optional(),
  schema: icebergSchema.optional(),
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
  const schema = currentSchema(metadata);
  const currentId = metadata["current-snapshot-id"];
  // No snapshot yet (v1 writes -1): an empty table.
  if (currentId === undefined || currentId === null || currentId === -1) return { schema, manifestList: null };
  const snapshot = metadata.snapshots?.find((s) => s["snapshot-id"] === currentId);
  if (!snapshot?.["manifest-list"]) {
    throw new ConnectorError(
      `the Iceberg metadata ${metadataUri} has no manifest list for its current snapshot (format v1 inline manifests are not supported)`,
      "invalid",
    );
  }
  return { schema, manifestList: snapshot["manifest-list"] };
}

/**
 * The live data files of a snapshot, from its manifest list: entries ADDED or EXISTING (a
 * DELETED entry is not part of the snapshot). Delete files and non-Parquet files are refused.
 */
export async function liveDataFiles(store: ObjectStore, keyOf: KeyOf, manifestList: string): Promise<StoredObject[]> {
  const files: StoredObject[] = [];
  for (const manifest of await readAvro(store, keyOf, manifestList)) {
    const path = manifest.manifest_path;
    if (typeof path !== "string")
      throw new ConnectorError("an Iceberg manifest list entry has no manifest_path", "invalid");
    const deletes = (manifest.content ?? DATA) !== DATA;
    for (const entry of await readAvro(store, keyOf, path)) {
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
      files.push({ key: keyOf(file.file_path), size: Number(file.file_size_in_bytes ?? 0) });
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

/** The table's current schema as an asset's attributes (name, type, nullable). */
function currentSchema(metadata: TableMetadata): SchemaField[] {
  const schema =
    metadata.schemas?.find((s) => s["schema-id"] === metadata["current-schema-id"]) ??
    metadata.schema ??
    metadata.schemas?.[0];
  // Any schema there has its fields (tableMetadata checked them): only its absence is left.
  if (!schema) throw new ConnectorError("the Iceberg metadata has no schema", "invalid");
  return schema.fields.map((f) => ({ name: f.name, type: attributeType(f.type), nullable: !f.required }));
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

async function readAvro(store: ObjectStore, keyOf: KeyOf, uri: string): Promise<AvroRecord[]> {
  try {
    return (await readAvroFile(await readWhole(store, keyOf(uri), uri))).records;
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
