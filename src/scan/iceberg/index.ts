/**
 * HIVE_ICEBERG light scans: the table's metadata location from the Hive Metastore (Thrift), then
 * the current snapshot's Parquet data files from the bucket, read with the connection's
 * credential through the object store of its location type (S3, GCS, AZURE). The files are then
 * profiled like any file scan (src/scan/files.ts).
 */

import type { SchemaField } from "../../contracts/profile";
import type { OutboundPolicy } from "../../lib/outbound";
import { ConnectorError, type ObjectStore, type StoredObject } from "../connectors/types";
import { parquetColumnIds } from "../formats/parquet";
import type { ColumnProjection } from "../formats/projection";
import type { RecordSource } from "../formats/types";
import { getMetastoreTable, metastoreAddress } from "./metastore";
import { icebergProjection } from "./projection";
import { type IcebergDataFile, type KeyOf, liveDataFiles, readTableMetadata } from "./table";

/** An Iceberg table opened for reading: its bucket's store, its current schema and snapshot. */
export interface IcebergTable {
  store: ObjectStore;
  /** database.table, as the metastore knows it. */
  name: string;
  /** The current schema, as an asset's attributes. */
  schema: SchemaField[];
  /** The current snapshot's live Parquet data files (none for a table without a snapshot). */
  dataFiles(): Promise<StoredObject[]>;
  /**
   * Which columns of one of those files make the current schema (by field id, from its Parquet
   * footer), and the values of those it lacks (src/scan/iceberg/projection.ts).
   */
  projectionOf(object: StoredObject, source: RecordSource): Promise<ColumnProjection>;
}

/** A Hive catalog of Iceberg tables: its metastore, and the one bucket its files may be read from. */
export interface IcebergCatalog {
  thrift_uri: string;
  location_type: "S3" | "GCS" | "AZURE";
  bucket: string;
}

/** URI schemes of each location type, as Iceberg's FileIO implementations write them. */
const SCHEMES: Record<IcebergCatalog["location_type"], readonly string[]> = {
  S3: ["s3", "s3a", "s3n"],
  GCS: ["gs"],
  AZURE: ["abfs", "abfss", "wasb", "wasbs"],
};

/**
 * Opens the table an HIVE_ICEBERG asset names (payload `{database, table}`) through its catalog;
 * `storeFor` opens the catalog's bucket with its credential (on Azure, in the storage account the
 * table's location names). Every file the table names must lie in that bucket: the credential is
 * never used elsewhere.
 */
export async function openIcebergTable(
  payload: IcebergCatalog,
  storeFor: (account: string | undefined) => ObjectStore,
  policy: OutboundPolicy,
  asset: { database: string; table: string },
): Promise<IcebergTable> {
  const { database, table } = asset;
  const name = `${database}.${table}`;
  const found = await getMetastoreTable(metastoreAddress(payload.thrift_uri), database, table, policy);
  const tableType = found.parameters.table_type ?? found.parameters.TABLE_TYPE;
  if (tableType?.toUpperCase() !== "ICEBERG") {
    throw new ConnectorError(
      `the table ${name} is not an Iceberg table (table_type ${tableType ?? "not set"})`,
      "invalid",
    );
  }
  const metadataUri = found.parameters.metadata_location;
  if (!metadataUri) throw new ConnectorError(`the metastore gives no metadata_location for ${name}`, "invalid");
  const first = locate(payload, metadataUri);
  const store = storeFor(first.account);
  const keyOf: KeyOf = (uri) => {
    const at = locate(payload, uri);
    if (at.account !== first.account) throw outside(uri, payload);
    return at.key;
  };
  const metadata = await readTableMetadata(store, keyOf, metadataUri);
  const listed = new Map<string, IcebergDataFile>();
  return {
    name,
    store,
    schema: metadata.schema,
    dataFiles: async () => {
      const files = await liveDataFiles(store, keyOf, metadata);
      for (const file of files) listed.set(file.key, file);
      return files;
    },
    projectionOf: async (object, source) => {
      const file = listed.get(object.key) ?? { key: object.key, partition: {}, spec: [] };
      return icebergProjection(metadata, await parquetColumnIds(source), file);
    },
  };
}

/** The key (and, on Azure, the storage account) of a file URI in the connection's bucket. */
function locate(payload: IcebergCatalog, uri: string): { key: string; account?: string } {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    throw new ConnectorError(`the table names a file that is not a URI: ${uri}`, "invalid");
  }
  const scheme = url.protocol.replace(/:$/, "");
  if (!SCHEMES[payload.location_type].includes(scheme)) throw outside(uri, payload);
  const key = decodeURIComponent(url.pathname.replace(/^\/+/, ""));
  if (payload.location_type === "AZURE") {
    // abfss://container@account.dfs.core.windows.net/path (wasbs: …blob.core.windows.net)
    const account = /^([a-z0-9]{3,24})\.(dfs|blob)\.core\.windows\.net$/.exec(url.hostname)?.[1];
    if (decodeURIComponent(url.username) !== payload.bucket || !account) throw outside(uri, payload);
    return { key, account };
  }
  if (url.hostname.toLowerCase() !== payload.bucket.toLowerCase() || url.username || url.port) {
    throw outside(uri, payload);
  }
  return { key };
}

function outside(uri: string, payload: IcebergCatalog): ConnectorError {
  const shown = uri.replace(/[?#].*$/s, "");
  return new ConnectorError(
    `the table names ${shown}, which is not in the connection's ${payload.location_type} bucket ${payload.bucket}: the credential is used for that bucket only`,
    "invalid",
  );
}
