/**
 * Which parts of a connection's payload decide where its stored credential is sent.
 *
 * A credential goes only to the address it was entered for: changing any of these fields
 * without sending the credential again would let someone who may change a connection, but never
 * read its secret, re-point it to a server of their own and receive the token, password or key
 * at the next scan or schema load.
 */

import type { ConnectionType } from "../db/schema";

/** Payload fields that name where a connection of each type connects (host, account, endpoint…). */
const ADDRESS_FIELDS: Record<Exclude<ConnectionType, "GENERIC_JDBC" | "HIVE_ICEBERG">, readonly string[]> = {
  REDSHIFT: ["endpoint_prefix", "endpoint"],
  GCS: ["endpoint"],
  S3: ["endpoint", "region"],
  AZURE: ["storage_account", "endpoint"],
  BIGQUERY: ["endpoint"],
  DELTALAKE: ["host", "port", "endpoint"],
  SNOWFLAKE: ["account", "endpoint"],
  // No address, and no credential to send to one.
  UPLOAD: [],
};

/**
 * JDBC connection properties that change nothing about where or how the driver connects. Every
 * other property (host, port, url, ssl, and any a future driver option may read) counts as part
 * of the address: new keys are safe by default.
 */
const HARMLESS_JDBC_PROPERTIES = new Set(["connect_timeout", "schema", "currentSchema", "database"]);

type Payload = Record<string, unknown>;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The payload paths (relative to the payload, e.g. `endpoint`, `connection_properties.host`) whose
 * value differs between two payloads of one connection type and that decide where its credential
 * goes. Empty when the credential would still reach the same place.
 */
export function changedAddressFields(type: ConnectionType, before: Payload, after: Payload): string[] {
  if (type === "HIVE_ICEBERG") {
    // Metastore, store type, region and bucket all steer where the catalog's credential is used.
    return unionKeys(before, after).filter((key) => !same(before[key], after[key]));
  }
  if (type === "GENERIC_JDBC") {
    const changed = same(before.db_type, after.db_type) ? [] : ["db_type"];
    const props = (p: Payload) => (p.connection_properties ?? {}) as Record<string, unknown>;
    const [was, now] = [props(before), props(after)];
    for (const key of unionKeys(was, now)) {
      if (!HARMLESS_JDBC_PROPERTIES.has(key) && !same(was[key], now[key])) {
        changed.push(`connection_properties.${key}`);
      }
    }
    return changed;
  }
  return ADDRESS_FIELDS[type].filter((key) => !same(before[key], after[key]));
}

function unionKeys(a: Payload, b: Payload): string[] {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
}
