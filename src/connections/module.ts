/**
 * What one connection type is (issue 36: one module per type, as soda-core keeps one data-source
 * module per store): its payload, the credential it needs, the payload fields that bind that
 * credential, its assets' payload, and what it can open (an object store, a SQL runner, an
 * Iceberg table through a metastore, a Spark provider), each through the connectors of scan/.
 */

import type { z } from "zod";
import type { OutboundPolicy } from "../lib/outbound";
import type { WritableObjectStore } from "../scan/connectors/types";
import type { IcebergTable } from "../scan/iceberg";
import type { SqlRunner } from "../scan/sql/runner";
import type { WarehouseRunnerOptions } from "../scan/sql/warehouse-api";
import type { ConnectionCredential, CredentialOf } from "./credentials";
import type { SparkSourceInput, SparkStart } from "./spark";

/** A connection of one type, loaded: its payload parsed by its module, its credential of the type it needs. */
export interface Loaded<P, C extends ConnectionCredential = ConnectionCredential> {
  readonly type: string;
  readonly payload: P;
  readonly credential: C;
}

/** How a store of a file connection is opened: where requests may go, and whether it may write. */
export interface StoreOptions {
  policy?: OutboundPolicy | undefined;
  writable?: boolean | undefined;
}

/** A stored payload as the row holds it (what a module compares to find a moved address). */
export type StoredPayload = Record<string, unknown>;

/** The OpenAPI document's words for a connection type, where a description lists every type. */
export interface ConnectionDocs {
  /** Its assets' payload, e.g. `{database, schema, table}`. */
  readonly asset: string;
  /** Its database type (`dbType`), e.g. `snowflake`, `payload.db_type`, `null`. */
  readonly dbType: string;
}

/** A connection type's source groups: their payload (zod) and its shape in words, e.g. `{database, schema}`. */
export interface SourceGroupOf {
  readonly payload: z.ZodType<Record<string, unknown>>;
  readonly doc: string;
}

/**
 * One connection type. `P` is its parsed payload, `K` the type of credential it authenticates with, `A`
 * its assets' payload. Every capability is optional: a type has those it can open.
 */
export interface ConnectionModule<
  T extends string = string,
  P = unknown,
  K extends ConnectionCredential["type"] = ConnectionCredential["type"],
  A = unknown,
> {
  readonly type: T;
  /** The payload a request sends and a row stores (zod; its meta id names it in the OpenAPI document). */
  readonly payload: z.ZodType<P>;
  /** The payload as a row is read back, when it accepts more than a request may send (default `payload`). */
  readonly stored?: z.ZodType<P>;
  /** The credential type a connection with this (valid) payload must carry. */
  credentialType(payload: P): K;
  /** When the payload decides the credential type: the payload's value that did (HIVE_ICEBERG's location_type). */
  credentialBasis?(payload: P): string;
  /**
   * The payload paths (e.g. `endpoint`, `connection_properties.host`) whose value differs between
   * two payloads and that decide where the credential goes (see changedAddressFields in index.ts).
   */
  changedAddress(before: StoredPayload, after: StoredPayload): string[];
  /** The database type its scans use (a SQL dialect, or a format reader), null for files and uploads. */
  dbType(payload: P): string | null;
  /** Where an asset's table or files are, relative to the connection. */
  readonly asset: z.ZodType<A>;
  /** What the API's documentation says of it (see docsByType in index.ts). */
  readonly docs: ConnectionDocs;
  /** Source group (deprecated API): what its assets share, each adding its `table`; none: it has no groups. */
  readonly group?: SourceGroupOf;
  /** Whether its assets can have a light (metadata and pushdown only) scan only. */
  readonly lightScan?: true;
  /** Object store: its assets are files in a bucket. */
  objectStore?(c: Loaded<P, CredentialOf<K>>, options: StoreOptions): WritableObjectStore;
  /** SQL runner: its assets are tables profiled by SQL pushdown. */
  sqlRunner?(c: Loaded<P, CredentialOf<K>>, options: WarehouseRunnerOptions): Promise<SqlRunner>;
  /** Metastore: its assets are Iceberg tables found through a catalog. */
  metastore?(c: Loaded<P, CredentialOf<K>>, policy: OutboundPolicy, asset: A): Promise<IcebergTable>;
  /** Spark target: the provider its credential can start a full scan on (none: it starts none). */
  sparkTarget?(c: Loaded<P, CredentialOf<K>>): SparkStart | undefined;
  /**
   * What the Spark driver reads for an asset (its --source argument, never a credential), from
   * the fields of the stored payload it needs, parsed (sparkFields); none: full scans of its
   * assets do not run on Spark.
   */
  sparkSource?(payload: StoredPayload, input: SparkSourceInput): Record<string, unknown>;
  /** Why its assets have no Spark source, when a full scan asks (default: not available on Spark). */
  readonly noSparkSource?: string;
  /** Why it has no object store, when a caller asks for one (default: it is a database). */
  readonly noObjectStore?: string;
}

/** Declares a module, inferring its payload, credential and asset types from what it holds. */
export const defineConnection = <T extends string, P, K extends ConnectionCredential["type"], A>(
  module: ConnectionModule<T, P, K, A>,
): ConnectionModule<T, P, K, A> => module;

/** A credential-type guard for a module whose credential depends on its payload. */
export const isCredential = <T extends ConnectionCredential["type"]>(
  credential: ConnectionCredential,
  type: T,
): credential is CredentialOf<T> => credential.type === type;

/** `changedAddress` of a type whose address is a fixed list of top-level payload fields. */
export function addressFields(fields: readonly string[]) {
  return (before: StoredPayload, after: StoredPayload): string[] =>
    fields.filter((key) => !sameValue(before[key], after[key]));
}

/** Equal as stored JSON (a missing value is null). */
export const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * A module of any connection type, its payload, credential and asset types erased: what the
 * registry holds (a typed module is one, its methods taking what it loaded).
 */
export interface AnyConnectionModule {
  readonly type: string;
  readonly payload: z.ZodType;
  readonly stored?: z.ZodType;
  credentialType(payload: unknown): ConnectionCredential["type"];
  credentialBasis?(payload: unknown): string;
  changedAddress(before: StoredPayload, after: StoredPayload): string[];
  dbType(payload: unknown): string | null;
  readonly asset: z.ZodType;
  readonly docs: ConnectionDocs;
  readonly group?: SourceGroupOf;
  readonly lightScan?: true;
  objectStore?(c: Loaded<unknown>, options: StoreOptions): WritableObjectStore;
  sqlRunner?(c: Loaded<unknown>, options: WarehouseRunnerOptions): Promise<SqlRunner>;
  metastore?(c: Loaded<unknown>, policy: OutboundPolicy, asset: unknown): Promise<IcebergTable>;
  sparkTarget?(c: Loaded<unknown>): SparkStart | undefined;
  sparkSource?(payload: StoredPayload, input: SparkSourceInput): Record<string, unknown>;
  readonly noSparkSource?: string;
  readonly noObjectStore?: string;
}
