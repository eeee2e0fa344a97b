import { and, eq, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
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
import { writeWith } from "../db/json-insert";
import type { AssetAttribute, AssetRow, ConnectionRow } from "../db/schema";
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
  return schemaSourceOf(await schemaSourceQuery(db, tenantId));
}

/** schemaSource's query, for a batch. */
function schemaSourceQuery(db: Db, tenantId: string) {
  return db
    .select({ useInformationSchema: tenants.useInformationSchema })
    .from(tenants)
    .where(eq(tenants.id, tenantId))
    .limit(1);
}

function schemaSourceOf(rows: readonly { useInformationSchema: boolean }[]): SchemaSource {
  return { useInformationSchema: rows[0]?.useInformationSchema ?? false };
}

/**
 * What loading an asset's schema reads of D1 before it calls its source (its connection, the
 * tenant's schema source), as queries for the caller's batch (e.g. with its access check); read
 * the answer with schemaInputs.
 */
export function schemaInputQueries(db: Db, tenantId: string, asset: { connectionId: SQL | number }) {
  return {
    connection: db
      .select()
      .from(connections)
      .where(and(eq(connections.tenantId, tenantId), sql`${connections.id} = ${asset.connectionId}`))
      .limit(1),
    source: schemaSourceQuery(db, tenantId),
  };
}

/** What schemaInputQueries read. */
export interface SchemaInputs {
  connection: ConnectionRow | undefined;
  source: SchemaSource;
}

export function schemaInputs(
  connection: readonly ConnectionRow[],
  source: readonly { useInformationSchema: boolean }[],
): SchemaInputs {
  return { connection: connection[0], source: schemaSourceOf(source) };
}

async function readAttributes(env: Env, db: Db, asset: AssetRow, inputs?: SchemaInputs): Promise<SchemaField[]> {
  if (asset.type === "UPLOAD") return readLastBatchSchema(env, db, asset);
  const connection = inputs
    ? inputs.connection
    : await db.query.connections.findFirst({
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
      return await loadSchema(
        runner,
        tableOf(asset.payload),
        inputs?.source ?? (await schemaSource(db, asset.tenantId)),
      );
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
 * remain (kind, statistics); at most 2000 attributes are kept. `inputs`: what it reads of D1
 * first, read by the caller (schemaInputQueries, e.g. with its access check); `after`: statements
 * that go with the update, in its batch (e.g. its audit row).
 */
export async function loadAssetSchema(
  env: Env,
  db: Db,
  asset: AssetRow,
  inputs?: SchemaInputs,
  after: readonly BatchItem<"sqlite">[] = [],
) {
  // A ConnectorError (the source said no) goes up as it is: the edge answers 422.
  const known = new Map((asset.attributes ?? []).map((a) => [a.name, a]));
  const attributes: AssetAttribute[] = (await readAttributes(env, db, asset, inputs))
    .slice(0, MAX_SCHEMA_ATTRIBUTES)
    .map((f) => {
      const { name: _n, type: _t, nullable: _u, ...learnt } = known.get(f.name) ?? {};
      return { ...f, ...learnt };
    });
  const loadedAt = nowIso();
  await writeWith(
    db,
    db
      .update(assets)
      .set({ attributes, updatedAt: loadedAt })
      .where(and(eq(assets.tenantId, asset.tenantId), eq(assets.id, asset.id))),
    after,
  );
  return { asset_id: String(asset.id), attributes, loaded_at: loadedAt };
}
