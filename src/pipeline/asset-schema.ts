import { and, eq } from "drizzle-orm";
import {
  createObjectStore,
  createSqlRunner,
  isFileType,
  isMetastoreType,
  openCredential,
  openIcebergTable,
} from "../connections";
import { assetMonitor } from "../contracts/asset-monitor-client";
import type { SchemaField } from "../contracts/profile";
import type { Db } from "../db";
import type { AssetAttribute, AssetRow } from "../db/schema";
import { assets, connections, tenants } from "../db/schema";
import type { Env } from "../env";
import { lastUploadedBatch } from "../jobs/scan-requests";
import { uploadedBatchStore } from "../jobs/upload-storage";
import { ConflictError } from "../lib/errors";
import { nowIso } from "../lib/time";
import { ConnectorError } from "../scan/connectors/types";
import { type FileFormat, objectSource, readSchema } from "../scan/formats";
import { loadSchema, MAX_SCHEMA_ATTRIBUTES, type SchemaSource, tableOf } from "../scan/sql";

/** Where the tenant's schema loads and SQL profiles read column types (its use_information_schema). */
export async function schemaSource(db: Db, tenantId: string): Promise<SchemaSource> {
  const row = await db.query.tenants.findFirst({
    where: eq(tenants.id, tenantId),
    columns: { useInformationSchema: true },
  });
  return { useInformationSchema: row?.useInformationSchema ?? false };
}

async function readAttributes(env: Env, db: Db, asset: AssetRow): Promise<SchemaField[]> {
  if (asset.type === "UPLOAD") return readLastBatchSchema(env, db, asset);
  const connection = await db.query.connections.findFirst({
    where: and(eq(connections.tenantId, asset.tenantId), eq(connections.id, asset.connectionId)),
  });
  if (!connection) throw new ConnectorError("the asset's connection no longer exists", "not_found");
  const credential = await openCredential(env, connection);
  if (isFileType(asset.type)) {
    const payload = asset.payload as { path: string; format: FileFormat };
    const { separator, resolve_wildcards_to_folders: folders } = asset.options as {
      separator?: string;
      resolve_wildcards_to_folders?: string;
    };
    const store = createObjectStore(connection, credential, env);
    const [first] = await store.list(payload.path, { folders: folders === "true" });
    if (!first) throw new ConnectorError(`no file matches ${payload.path}`, "not_found");
    return readSchema(objectSource(store, first), payload.format, separator ? { separator } : {});
  }
  if (isMetastoreType(asset.type)) return (await openIcebergTable(connection, credential, env, asset.payload)).schema;
  const runner = await createSqlRunner(connection, credential);
  if (runner) {
    try {
      return await loadSchema(runner, tableOf(asset.payload), await schemaSource(db, asset.tenantId));
    } finally {
      await runner.close();
    }
  }
  throw new ConnectorError(`loading the schema of ${asset.type} assets is not available yet`, "unsupported");
}

/** An UPLOAD asset's attributes: those of its newest uploaded batch (a CSV header, the first NDJSON records). */
async function readLastBatchSchema(env: Env, db: Db, asset: AssetRow): Promise<SchemaField[]> {
  const batch = await lastUploadedBatch(db, assetMonitor(env, asset.tenantId, asset.id), asset.tenantId, asset.id);
  if (!batch) {
    throw new ConflictError(
      `Asset ${asset.id} has no uploaded batch yet; its schema is that of its last batch: ` +
        `upload one (POST /v2/${asset.tenantId}/sources/${asset.id}/batch_data) first`,
    );
  }
  const { upload } = batch;
  const store = await uploadedBatchStore(env, db, asset.tenantId, upload);
  const separator = batch.delimiter ?? (asset.options as { separator?: string }).separator;
  return readSchema(
    objectSource(store, { key: upload.key, size: upload.bytes }),
    upload.format,
    separator ? { separator } : {},
  );
}

/**
 * Reads an asset's attributes (name, type, nullable) from its source and stores them on the
 * asset (shown with with_attributes=true), keeping what the scans learnt of the attributes that
 * remain (kind, statistics); at most 2000 attributes are kept.
 */
export async function loadAssetSchema(env: Env, db: Db, asset: AssetRow) {
  // A ConnectorError (the source said no) goes up as it is: the edge answers 422.
  const known = new Map((asset.attributes ?? []).map((a) => [a.name, a]));
  const attributes: AssetAttribute[] = (await readAttributes(env, db, asset))
    .slice(0, MAX_SCHEMA_ATTRIBUTES)
    .map((f) => {
      const { name: _n, type: _t, nullable: _u, ...learnt } = known.get(f.name) ?? {};
      return { ...f, ...learnt };
    });
  const loadedAt = nowIso();
  await db
    .update(assets)
    .set({ attributes, updatedAt: loadedAt })
    .where(and(eq(assets.tenantId, asset.tenantId), eq(assets.id, asset.id)));
  return { asset_id: String(asset.id), attributes, loaded_at: loadedAt };
}
