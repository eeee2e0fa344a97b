/**
 * Connections, by type (one module each, listed in registry.ts): what the catalog validates, what
 * the API's schemas are built from, and how a scan opens a connection's store, SQL runner, Iceberg
 * table or Spark provider. A stored connection is parsed by its type's module once, when it is
 * opened: what it yields is typed, so no caller reads stored JSON by casting it.
 */

import type { ConnectionType } from "../db/schema";
import type { EnvironmentEnv } from "../lib/environment";
import { type OutboundPolicy, outboundPolicy } from "../lib/outbound";
import { ConnectorError, type WritableObjectStore } from "../scan/connectors/types";
import type { IcebergTable } from "../scan/iceberg";
import type { ScanSource } from "../scan/spark/engine";
import type { SqlRunner } from "../scan/sql/runner";
import type { WarehouseRunnerOptions } from "../scan/sql/warehouse-api";
import type { ConnectionCredential } from "./credentials";
import type { Loaded, SourceGroupOf, StoredPayload } from "./module";
import { type AnyConnectionModule, CONNECTION_MODULES, connectionModule } from "./registry";
import type { SparkSourceInput, SparkStart } from "./spark";

export type { WarehouseRunnerOptions } from "../scan/sql/warehouse-api";
export { AzurePayload } from "./azure";
export { BigQueryPayload } from "./bigquery";
export * from "./credentials";
export { DeltaLakePayload } from "./deltalake";
export { GcsPayload } from "./gcs";
export { GenericJdbcPayload, JDBC_DB_TYPES } from "./generic-jdbc";
export { HiveIcebergPayload, ICEBERG_LOCATION_TYPES } from "./hive-iceberg";
export type { ConnectionDocs, ConnectionModule, Loaded, SourceGroupOf, StoreOptions } from "./module";
export { defineConnection } from "./module";
export { dbTypesThatCannotHold, type NamingOptions, namesTheDatabaseCannotHold } from "./names";
export { RedshiftPayload } from "./redshift";
export { type AnyConnectionModule, CONNECTION_MODULES, connectionModule, registerConnectionType } from "./registry";
export { S3Payload, s3Store } from "./s3";
export { holdableName, identifier, storageEndpoint } from "./schema-parts";
export { SnowflakePayload } from "./snowflake";
export type { SparkRequest, SparkSourceInput, SparkStart } from "./spark";
export { UploadPayload } from "./upload";

type Modules = typeof CONNECTION_MODULES;

const entries = <K extends keyof Modules, V>(pick: (m: Modules[K]) => V) =>
  Object.fromEntries(Object.entries(CONNECTION_MODULES).map(([type, m]) => [type, pick(m as Modules[K])]));

/** The payload schema of each connection type. */
export const CONNECTION_PAYLOADS = entries((m) => m.payload) as { [T in ConnectionType]: Modules[T]["payload"] };

/** Payload of an asset, per type: where its table or files are, relative to the connection. */
export const ASSET_PAYLOADS = entries((m) => m.asset) as { [T in ConnectionType]: Modules[T]["asset"] };

/** Asset types whose connectors can do a light (metadata and pushdown only) scan. */
export const LIGHT_SCAN_TYPES: readonly ConnectionType[] = Object.values(CONNECTION_MODULES)
  .filter((m: AnyConnectionModule) => m.lightScan)
  .map((m) => m.type);

/** Types as a sentence names them: "A", "A and B", "A, B and C". */
export function typeList(types: readonly string[]): string {
  return types.length < 2 ? types.join("") : `${types.slice(0, -1).join(", ")} and ${types.at(-1)}`;
}

/**
 * One of the interface's types' words for a description that covers them all (picked from each
 * module, e.g. its assets' payload), in the enum's order; types with the same words share an entry
 * (`{ types: ["REDSHIFT", "SNOWFLAKE"], text: "{database, schema, table}" }`). Types whose module
 * has no words for it (undefined) are left out.
 */
export function docsByType(pick: (m: AnyConnectionModule) => string | undefined): { types: string[]; text: string }[] {
  const entries = new Map<string, string[]>();
  for (const m of Object.values(CONNECTION_MODULES) as AnyConnectionModule[]) {
    const text = pick(m);
    if (text !== undefined) entries.set(text, [...(entries.get(text) ?? []), m.type]);
  }
  return [...entries].map(([text, types]) => ({ types, text }));
}

/** The interface's types that have source groups (the deprecated API), in the enum's order. */
export const GROUP_TYPES: readonly string[] = (Object.values(CONNECTION_MODULES) as AnyConnectionModule[])
  .filter((m) => m.group)
  .map((m) => m.type);

/** The group of a connection type's module: its payload schema and words; undefined for a type without groups. */
export const sourceGroupOf = (type: string): SourceGroupOf | undefined => connectionModule(type)?.group;

/** The module of a type the caller knows to exist (a row's, a request's). */
function moduleOf(type: string): AnyConnectionModule {
  const module = connectionModule(type);
  if (!module) throw new ConnectorError(`${type} is not a connection type`, "unsupported");
  return module;
}

/** The credential type a connection of this type and (valid) payload must carry. */
export function requiredCredentialType(type: string, payload: StoredPayload): ConnectionCredential["type"] {
  return moduleOf(type).credentialType(payload);
}

/** What decided the credential type, when the payload did (" on S3"), for messages; "" when the type alone does. */
export function credentialBasis(type: string, payload: StoredPayload): string {
  const basis = connectionModule(type)?.credentialBasis?.(payload);
  return basis ? ` on ${basis}` : "";
}

/**
 * The payload paths (relative to the payload, e.g. `endpoint`, `connection_properties.host`) whose
 * value differs between two payloads of one connection type and that decide where its credential
 * goes. Empty when the credential would still reach the same place.
 *
 * A credential goes only to the address it was entered for: changing any of these fields
 * without sending the credential again would let someone who may change a connection, but never
 * read its secret, re-point it to a server of their own and receive the token, password or key
 * at the next scan or schema load.
 */
export function changedAddressFields(type: string, before: StoredPayload, after: StoredPayload): string[] {
  return moduleOf(type).changedAddress(before, after);
}

/** The database type of a connection: what SQL dialect or format reader its scans use. */
export function deriveDbType(type: string, payload: StoredPayload): string | null {
  return moduleOf(type).dbType(payload);
}

/** Whether the assets of a connection type are files in an object store. */
export const isFileType = (type: string): boolean => connectionModule(type)?.objectStore !== undefined;

/** Whether the assets of a connection type are Iceberg tables found through a metastore. */
export const isMetastoreType = (type: string): boolean => connectionModule(type)?.metastore !== undefined;

/** What a scan of an asset of this type reads: what decides where it runs (scan/spark/engine.ts). */
export const scanSource = (type: string): ScanSource =>
  isFileType(type) ? "files" : isMetastoreType(type) ? "metastore" : "tables";

/** A connection as a row or a caller gives it: its type and stored payload. */
export interface StoredConnection {
  type: string;
  payload: StoredPayload;
}

/** A credential as a caller gives it (opened from a row, or built by a test). */
export type GivenCredential = ConnectionCredential | { type: string; payload: StoredPayload };

/** A connection loaded by its module: its payload parsed, its credential the one its type needs. */
export interface LoadedConnection extends Loaded<unknown> {
  readonly module: AnyConnectionModule;
}

/**
 * Parses a stored connection with its type's module, once: a row written before a schema change,
 * or a credential of another type than the connection needs, is an `invalid` connector error
 * (the scan fails with a message the user can act on), never a crash further down.
 */
export function loadConnection(connection: StoredConnection, credential: GivenCredential): LoadedConnection {
  const module = moduleOf(connection.type);
  const parsed = (module.stored ?? module.payload).safeParse(connection.payload);
  if (!parsed.success) throw new ConnectorError(`the ${connection.type} connection's payload is not valid`, "invalid");
  const need = module.credentialType(parsed.data);
  if (credential.type !== need) {
    throw new ConnectorError(
      `a ${connection.type} connection needs a ${need} credential, not ${credential.type}`,
      "invalid",
    );
  }
  // Its type is the one the module needs: the credential was checked against that type's schema when sealed.
  return { module, type: connection.type, payload: parsed.data, credential: credential as ConnectionCredential };
}

/**
 * The object store of a file connection (S3, GCS, AZURE…) with its decrypted credential; with
 * `writable`, one that may also put and delete (a GCS token then asks for read_write).
 * `env` is the deployment's, for settings that apply to every tenant: ALLOW_PRIVATE_TARGETS
 * decides where the store may send requests (without `env`, the deployment's own).
 */
export function createObjectStore(
  connection: StoredConnection,
  credential: GivenCredential,
  env?: EnvironmentEnv,
  options: { writable?: boolean } = {},
): WritableObjectStore {
  const module = moduleOf(connection.type);
  if (!module.objectStore) {
    throw new ConnectorError(
      module.noObjectStore ??
        `a ${connection.type} connection is a database, not object storage: it has no files to list`,
      "invalid",
    );
  }
  const loaded = loadConnection(connection, credential);
  return module.objectStore(loaded, { policy: env ? outboundPolicy(env) : undefined, writable: options.writable });
}

/**
 * The SQL runner of a database or warehouse connection with its credential; undefined for
 * connection types that are not SQL (files, HIVE_ICEBERG, UPLOAD). `policy` decides where it may
 * connect (default: the deployment's, ALLOW_PRIVATE_TARGETS).
 */
export async function createSqlRunner(
  connection: StoredConnection,
  credential: GivenCredential,
  policy?: OutboundPolicy,
): Promise<SqlRunner | undefined> {
  if (!connectionModule(connection.type)?.sqlRunner) return undefined;
  return createWarehouseRunner(connection, credential, policy ? { policy } : {});
}

/**
 * The SQL runner of a connection whose type runs SQL (a warehouse over its HTTP API, a database
 * over TCP); `unsupported` for any other. Nothing is sent until the first query; a credential that
 * cannot be used at all fails here.
 */
export async function createWarehouseRunner(
  connection: StoredConnection,
  credential: GivenCredential,
  options: WarehouseRunnerOptions = {},
): Promise<SqlRunner> {
  const module = moduleOf(connection.type);
  if (!module.sqlRunner) throw new ConnectorError(`${connection.type} is not a SQL connection`, "unsupported");
  return module.sqlRunner(loadConnection(connection, credential), options);
}

/**
 * Opens the Iceberg table an asset of a metastore connection (HIVE_ICEBERG) names through its
 * catalog; `invalid` for a connection of another type.
 */
export async function openIcebergTable(
  connection: StoredConnection,
  credential: GivenCredential,
  env: EnvironmentEnv,
  assetPayload: unknown,
): Promise<IcebergTable> {
  const module = moduleOf(connection.type);
  if (!module.metastore) {
    throw new ConnectorError(`a ${connection.type} connection has no metastore of Iceberg tables`, "invalid");
  }
  const loaded = loadConnection(connection, credential);
  // Parsed by its type's module, as the connection is: what the metastore opens is typed.
  const asset = module.asset.safeParse(assetPayload);
  if (!asset.success) {
    throw new ConnectorError(`a ${connection.type} asset's payload must be ${module.docs.asset}`, "invalid");
  }
  return module.metastore(loaded, outboundPolicy(env), asset.data);
}

/**
 * The Spark provider a connection's credential can start a full scan on (DELTALAKE's token →
 * Databricks, AWS keys → EMR, a GCP service account → Dataproc); undefined when it starts none,
 * or when the stored connection no longer fits its type.
 */
export function sparkStartOf(connection: StoredConnection, credential: GivenCredential): SparkStart | undefined {
  let loaded: LoadedConnection;
  try {
    loaded = loadConnection(connection, credential);
  } catch (err) {
    if (err instanceof ConnectorError) return undefined;
    throw err;
  }
  return loaded.module.sparkTarget?.(loaded);
}

/**
 * What the Spark driver reads for an asset of this type (its --source argument: never a
 * credential; the cluster reads with its own identity); `unsupported` for a type whose full scans
 * do not run on Spark.
 */
export function driverSourceOf(type: string, payload: StoredPayload, input: SparkSourceInput): Record<string, unknown> {
  const module = connectionModule(type);
  if (!module?.sparkSource) {
    throw new ConnectorError(
      module?.noSparkSource ?? `full scans of ${type} assets are not available on Spark`,
      "unsupported",
    );
  }
  return module.sparkSource(payload, input);
}
