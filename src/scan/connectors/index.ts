import { AzurePayload, GcsPayload, S3Payload } from "../../catalog/connection-types";
import type { ConnectionCredential } from "../../catalog/connections";
import type { ConnectionType } from "../../db/schema";
import type { Env } from "../../env";
import { type OutboundPolicy, outboundPolicy } from "../../lib/outbound";
import { AzureBlobStore } from "./azure";
import { GcsStore } from "./gcs";
import { S3Store } from "./s3";
import { ConnectorError, type WritableObjectStore } from "./types";

export { AzureBlobStore } from "./azure";
export { GcsStore } from "./gcs";
export { compileKeyPattern } from "./glob";
export { R2Store } from "./r2";
export { S3Store } from "./s3";
export { ConnectorError, type ObjectStore, type StoredObject, type WritableObjectStore } from "./types";

/** The part of a connection row that decides its store. */
export interface StorageConnection {
  type: ConnectionType;
  payload: Record<string, unknown>;
}

/**
 * The object store of a file connection (S3, GCS, AZURE) with its decrypted credential; with
 * `writable`, one that may also put and delete (a GCS token then asks for read_write).
 * `env` is the deployment's, for settings that apply to every tenant: ALLOW_PRIVATE_TARGETS
 * decides where the store may send requests (without `env`, the deployment's own).
 */
export function createObjectStore(
  connection: StorageConnection,
  credential: ConnectionCredential,
  env?: Partial<Env>,
  options: { writable?: boolean } = {},
): WritableObjectStore {
  const policy: OutboundPolicy | undefined = env ? outboundPolicy(env) : undefined;
  const withPolicy = policy ? { policy } : {};
  switch (connection.type) {
    case "S3": {
      const payload = parsePayload(S3Payload, connection);
      const secret = credentialOf(credential, "AWS", connection.type);
      return new S3Store({
        bucket: payload.bucket,
        ...(payload.region ? { region: payload.region } : {}),
        ...(payload.endpoint ? { endpoint: payload.endpoint } : {}),
        accessKeyId: secret.access_key,
        secretAccessKey: secret.secret_key,
        ...withPolicy,
      });
    }
    case "GCS": {
      const payload = parsePayload(GcsPayload, connection);
      const secret = credentialOf(credential, "GCP", connection.type);
      return new GcsStore({
        bucket: payload.bucket,
        serviceAccount: {
          client_email: secret.client_email,
          private_key: secret.private_key,
          private_key_id: secret.private_key_id,
          ...(secret.token_uri ? { token_uri: secret.token_uri } : {}),
        },
        ...(payload.endpoint ? { endpoint: payload.endpoint } : {}),
        ...(options.writable ? { writable: true } : {}),
        ...withPolicy,
      });
    }
    case "AZURE": {
      const payload = parsePayload(AzurePayload, connection);
      const secret = credentialOf(credential, "AZURE_SAS", connection.type);
      return new AzureBlobStore({
        account: payload.storage_account,
        container: payload.bucket,
        sasToken: secret.sas_key,
        ...(payload.endpoint ? { endpoint: payload.endpoint } : {}),
        ...withPolicy,
      });
    }
    case "HIVE_ICEBERG":
      throw new ConnectorError(
        "a HIVE_ICEBERG connection's files are found through its metastore: scan its tables as HIVE_ICEBERG assets",
        "invalid",
      );
    case "UPLOAD":
      throw new ConnectorError(
        "an UPLOAD connection has no store of its own: each batch is read where its upload stored it",
        "invalid",
      );
    default:
      throw new ConnectorError(
        `a ${connection.type} connection is a database, not object storage: it has no files to list`,
        "invalid",
      );
  }
}

/** The payload, checked again: a row written before a schema change must not crash a scan. */
function parsePayload<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  c: StorageConnection,
): T {
  const parsed = schema.safeParse(c.payload);
  if (!parsed.success) throw new ConnectorError(`the ${c.type} connection's payload is not valid`, "invalid");
  return parsed.data;
}

type CredentialPayload<T extends ConnectionCredential["type"]> = Extract<ConnectionCredential, { type: T }>["payload"];

function credentialOf<T extends ConnectionCredential["type"]>(
  credential: ConnectionCredential,
  type: T,
  connectionType: ConnectionType,
): CredentialPayload<T> {
  if (credential.type !== type) {
    throw new ConnectorError(
      `a ${connectionType} connection needs a ${type} credential, not ${credential.type}`,
      "invalid",
    );
  }
  return credential.payload as CredentialPayload<T>;
}
