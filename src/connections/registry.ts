/**
 * The connection types, one module each (see module.ts). Everything that depends on a
 * connection's type (the API's schemas, the catalog's checks, the scans' connectors, the Spark
 * dispatch) asks this registry instead of listing types.
 */

import type { ConnectionType } from "../db/schema";
import { azure } from "./azure";
import { bigquery } from "./bigquery";
import type { ConnectionCredential } from "./credentials";
import { deltalake } from "./deltalake";
import { gcs } from "./gcs";
import { genericJdbc } from "./generic-jdbc";
import { hiveIceberg } from "./hive-iceberg";
import type { AnyConnectionModule, ConnectionModule } from "./module";

export type { AnyConnectionModule } from "./module";

import { redshift } from "./redshift";
import { s3 } from "./s3";
import { snowflake } from "./snowflake";
import { upload } from "./upload";

/** The modules of the interface's connection types, in the order of its enum (CONNECTION_TYPES). */
export const CONNECTION_MODULES = {
  REDSHIFT: redshift,
  GCS: gcs,
  S3: s3,
  AZURE: azure,
  BIGQUERY: bigquery,
  DELTALAKE: deltalake,
  GENERIC_JDBC: genericJdbc,
  HIVE_ICEBERG: hiveIceberg,
  SNOWFLAKE: snowflake,
  UPLOAD: upload,
} as const satisfies { [T in ConnectionType]: AnyConnectionModule & { type: T } };

/** Types registered beside the interface's, by tests only (registerConnectionType). */
const extra = new Map<string, AnyConnectionModule>();

/** The module of a connection type; undefined for a type nobody registered. */
export function connectionModule(type: string): AnyConnectionModule | undefined {
  return Object.hasOwn(CONNECTION_MODULES, type) ? CONNECTION_MODULES[type as ConnectionType] : extra.get(type);
}

/**
 * Registers a connection type that is not one of the interface's, for a test: everything that asks
 * the registry (loading a connection, opening its store, runner or Spark target, its required
 * credential and address fields) then knows it. The API's enums and schemas are built from the
 * interface's types only, so such a type never reaches a request. Returns the unregistration.
 */
export function registerConnectionType<T extends string, P, K extends ConnectionCredential["type"], A>(
  module: ConnectionModule<T, P, K, A>,
): () => void {
  if (connectionModule(module.type)) throw new Error(`connection type ${module.type} is already registered`);
  extra.set(module.type, module);
  return () => extra.delete(module.type);
}
