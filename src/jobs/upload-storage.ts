/**
 * Where uploaded batches are kept: in the tenant's own bucket when its configuration names one
 * (storage: S3, R2, GCS or AZURE — private cloud, the data never lands in our bucket), else in our
 * R2 bucket (UPLOADS). A job records which, so its scan reads the batch where it was written.
 */

import { eq } from "drizzle-orm";
import { createObjectStore } from "../connections";
import type { Db } from "../db";
import { type TenantRow, tenants } from "../db/schema";
import type { Env } from "../env";
import { secretBox } from "../lib/crypto";
import {
  ConnectorError,
  type ObjectStore,
  R2Store,
  type StoredObject,
  type WritableObjectStore,
} from "../scan/connectors";
import { rangeBytes } from "../scan/connectors/types";
import { openTenantStorageSecret, type StorageSecret, type TenantStorage } from "../tenancy/tenants";

export type StorageEnv = Pick<Env, "ENCRYPTION_KEYS" | "ALLOW_PRIVATE_TARGETS">;

/** Where an upload goes: our bucket, or the tenant's store. */
export type UploadTarget = { bucket: R2Bucket } | { store: WritableObjectStore };

/** Where an uploaded batch was stored, as its job records it. */
export interface StoredUpload {
  key: string;
  /** "tenant": the tenant's own bucket; absent: ours. */
  storage?: "tenant";
  /** "gzip": stored as sent, compressed (tenant buckets); the scan inflates it. */
  encoding?: "gzip";
}

/** The prefix under which a tenant's uploads are kept, in our bucket and in its own. */
export const uploadPrefix = (tenantId: string) => `uploads/${tenantId}/`;

/** What of a tenant row says where its uploads go. */
export type TenantStorageColumns = Pick<TenantRow, "id"> & Partial<Pick<TenantRow, "storage" | "storageSecret">>;

/** The tenant's own bucket as a store, or undefined when it configured none. */
export async function tenantUploadStore(
  env: StorageEnv,
  tenant: TenantStorageColumns,
): Promise<WritableObjectStore | undefined> {
  const storage = tenant.storage as TenantStorage | null | undefined;
  if (!storage) return undefined;
  const secret = await openTenantStorageSecret(secretBox(env.ENCRYPTION_KEYS), {
    id: tenant.id,
    storageSecret: tenant.storageSecret ?? null,
  });
  return storeOf(storage, secret, env);
}

/**
 * The tenant's storage as the file connection it amounts to, opened by that connection type's
 * module (createObjectStore (R2 through its S3 API: region auto, the account's endpoint)).
 */
function storeOf(storage: TenantStorage, secret: StorageSecret, env: StorageEnv): WritableObjectStore {
  const { payload } = storage;
  const endpoint = payload.endpoint ? { endpoint: payload.endpoint } : {};
  const credentials = secret.credentials ?? {};
  const s3 = (region: string | undefined, s3Endpoint: { endpoint?: string }) =>
    createObjectStore(
      { type: "S3", payload: { bucket: payload.bucket, ...(region ? { region } : {}), ...s3Endpoint } },
      { type: "AWS", payload: credentials },
      env,
      { writable: true },
    );
  switch (storage.type) {
    case "S3":
      return s3(payload.region, endpoint);
    case "R2":
      return s3(payload.region ?? "auto", {
        endpoint: payload.endpoint ?? `https://${payload.account_id}.r2.cloudflarestorage.com`,
      });
    case "GCS":
      return createObjectStore(
        { type: "GCS", payload: { bucket: payload.bucket, ...endpoint } },
        { type: "GCP", payload: credentials },
        env,
        { writable: true },
      );
    case "AZURE":
      return createObjectStore(
        {
          type: "AZURE",
          payload: { storage_account: payload.security?.storage_account, bucket: payload.bucket, ...endpoint },
        },
        { type: "AZURE_SAS", payload: { sas_key: secret.sas_key ?? "" } },
        env,
        { writable: true },
      );
    default:
      throw new ConnectorError(`the tenant's storage type ${String(storage.type)} is not known`, "invalid");
  }
}

/** Where new uploads of a tenant go. */
export async function uploadTarget(
  env: StorageEnv & Pick<Env, "UPLOADS">,
  tenant: TenantStorageColumns,
): Promise<UploadTarget> {
  const store = await tenantUploadStore(env, tenant);
  return store ? { store } : { bucket: env.UPLOADS };
}

/** The store a job's uploaded batch is read from (inflated when it was stored compressed). */
export async function uploadSource(
  env: StorageEnv & Pick<Env, "UPLOADS">,
  tenant: TenantStorageColumns | undefined,
  upload: StoredUpload,
): Promise<ObjectStore> {
  let store: ObjectStore = new R2Store(env.UPLOADS);
  if (upload.storage === "tenant") {
    const own = tenant ? await tenantUploadStore(env, tenant) : undefined;
    if (!own) {
      throw new ConnectorError(
        "the batch was uploaded to the tenant's storage, which is not configured any more",
        "not_found",
      );
    }
    store = own;
  }
  return upload.encoding === "gzip" ? new InflatedObjects(store) : store;
}

/** The store of a job's uploaded batch, with the tenant's storage settings as they are now when it went there. */
export async function uploadedBatchStore(
  env: StorageEnv & Pick<Env, "UPLOADS">,
  db: Db,
  tenantId: string,
  upload: StoredUpload,
): Promise<ObjectStore> {
  const tenant =
    upload.storage === "tenant" ? await db.query.tenants.findFirst({ where: eq(tenants.id, tenantId) }) : undefined;
  return uploadSource(env, tenant, upload);
}

/** A store whose objects are gzip files, read inflated (uploads kept compressed in a tenant's bucket). */
class InflatedObjects implements ObjectStore {
  constructor(private readonly store: ObjectStore) {}

  list(pattern: string, options?: { folders?: boolean }): Promise<StoredObject[]> {
    return this.store.list(pattern, options);
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    const gzip = await this.store.stream(key);
    return gzip.pipeThrough(new DecompressionStream("gzip"));
  }

  /** Gzip has no random access: the inflated stream is read up to the range and sliced. */
  async readRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    return rangeBytes(new Response(await this.stream(key)), offset, length);
  }
}
