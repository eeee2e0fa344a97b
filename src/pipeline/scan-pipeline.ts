import { and, eq } from "drizzle-orm";
import type { Db } from "../db";
import type { AssetRow, ConnectionRow, ScanJobRow } from "../db/schema";
import { assets, connections, scanJobs } from "../db/schema";
import type { Env } from "../env";
import type { ScanJobRequest } from "../jobs/scan-requests";
import { nowIso } from "../lib/time";
import type { ApplyScanResult, MonitoredAsset } from "../monitor/asset-monitor";
import { assetMonitor } from "../monitor/client";
import { createObjectStore, R2Store } from "../scan/connectors";
import { ConnectorError } from "../scan/connectors/types";
import { openCredential } from "../scan/credentials";
import { profileObjects, type ScanProgress } from "../scan/files";
import type { FileFormat } from "../scan/formats";
import type { AssetProfile } from "../scan/profile";
import type { ProfileBuilderOptions } from "../scan/profiler/profile-builder";
import { createSqlRunner, loadSchema, profileTable, type SqlProfileOptions, tableOf } from "../scan/sql";

/** Asset options (spec 2.3) as stored: validated by the assets API. */
interface AssetOptions {
  id_attributes?: string[];
  separator?: string;
  sample_fraction?: number;
  delta_only?: "true" | "false";
  timestamp_attribute?: string;
  limit?: number;
  filter?: Record<string, Array<string | number | boolean>>;
  segments?: Record<string, Array<string | number | boolean>>;
}

const FILE_TYPES = new Set(["S3", "GCS", "AZURE"]);

function monitored(asset: AssetRow, options: AssetOptions): MonitoredAsset {
  return {
    tenantId: asset.tenantId,
    id: asset.id,
    name: asset.name,
    type: asset.type,
    projectId: asset.projectId,
    connectionId: asset.connectionId,
    ...(options.id_attributes?.length ? { idAttributes: options.id_attributes } : {}),
    ...(options.timestamp_attribute ? { timestampAttribute: options.timestamp_attribute } : {}),
  };
}

function profilerOptions(options: AssetOptions): ProfileBuilderOptions {
  return {
    ...(options.id_attributes?.length ? { idAttributes: options.id_attributes } : {}),
    ...(options.timestamp_attribute ? { timestampAttribute: options.timestamp_attribute } : {}),
    ...(options.segments ? { segments: options.segments } : {}),
    ...(options.sample_fraction !== undefined ? { sampleFraction: options.sample_fraction } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
  };
}

/** Records progress on the job row (throttled by the callers). */
function progressRecorder(db: Db, jobId: string) {
  return async ({ rows, bytes }: ScanProgress) => {
    await db.update(scanJobs).set({ rowsScanned: rows, bytesScanned: bytes }).where(eq(scanJobs.id, jobId));
  };
}

async function connectionOf(db: Db, asset: AssetRow): Promise<ConnectionRow> {
  const row = await db.query.connections.findFirst({
    where: and(eq(connections.tenantId, asset.tenantId), eq(connections.id, asset.connectionId)),
  });
  if (!row) throw new ConnectorError("the asset's connection no longer exists", "not_found");
  return row;
}

/** Profiles the data a job names, through the asset's connector. */
async function profileFor(
  env: Env,
  db: Db,
  job: ScanJobRow,
  asset: AssetRow,
  options: AssetOptions,
  since: string | undefined,
): Promise<AssetProfile> {
  const request = job.request as ScanJobRequest;
  const onProgress = progressRecorder(db, job.id);
  const delta =
    since && options.timestamp_attribute
      ? { attribute: options.timestamp_attribute, after: Date.parse(since) }
      : undefined;
  const fileOptions = (format: FileFormat, separator: string | undefined) => ({
    format,
    ...(separator ? { separator } : {}),
    profile: profilerOptions(options),
    ...(options.filter ? { filter: options.filter } : {}),
    ...(delta ? { since: delta } : {}),
    onProgress,
  });

  if (request.upload) {
    const store = new R2Store(env.UPLOADS);
    const object = { key: request.upload.key, size: request.upload.bytes };
    return profileObjects(store, [object], fileOptions(request.upload.format, request.delimiter ?? options.separator));
  }

  const connection = await connectionOf(db, asset);
  const credential = await openCredential(env, connection);
  if (FILE_TYPES.has(asset.type)) {
    const payload = asset.payload as { path: string; format: FileFormat };
    const store = createObjectStore(connection, credential, env);
    const objects = await store.list(request.path ?? payload.path);
    const total = objects.reduce((s, o) => s + o.size, 0);
    await db.update(scanJobs).set({ totalBytes: total }).where(eq(scanJobs.id, job.id));
    return profileObjects(
      store,
      objects,
      fileOptions(request.format ?? payload.format, request.delimiter ?? options.separator),
    );
  }
  if (request.query) {
    throw new ConnectorError("scanning a query is not supported yet: name a table", "invalid");
  }
  const runner = await createSqlRunner(connection, credential);
  if (runner) {
    try {
      const table = tableOf(asset.payload, request.table);
      const columns = await loadSchema(runner, table);
      const sqlOptions: SqlProfileOptions = {
        ...(options.filter ? { filter: options.filter } : {}),
        ...(options.segments ? { segments: options.segments } : {}),
        ...(options.sample_fraction !== undefined ? { sample_fraction: options.sample_fraction } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.timestamp_attribute ? { timestamp_attribute: options.timestamp_attribute } : {}),
        ...(options.id_attributes?.length ? { id_attributes: options.id_attributes } : {}),
        ...(since ? { delta_only: true, last_max_timestamp: since } : {}),
      };
      const profile = await profileTable(runner, table, columns, sqlOptions);
      await onProgress({ rows: profile.row_count, bytes: profile.bytes ?? 0 });
      return profile;
    } finally {
      await runner.close();
    }
  }
  if (asset.type === "HIVE_ICEBERG") {
    throw new ConnectorError(
      "HIVE_ICEBERG assets need a full scan on Spark, which is not available yet",
      "unsupported",
    );
  }
  throw new ConnectorError(`light scans of ${asset.type} assets are not available yet`, "unsupported");
}

/**
 * Runs a scan job: profiles the asset's data through its connector (rows never leave a
 * database: SQL is pushed down; files are streamed), then hands the profile to the asset's
 * AssetMonitor, which applies the policies and writes alerts and the DQ score.
 */
export async function runScanJob(env: Env, db: Db, job: ScanJobRow): Promise<ApplyScanResult> {
  const asset = await db.query.assets.findFirst({
    where: and(eq(assets.tenantId, job.tenantId), eq(assets.id, job.assetId)),
  });
  if (!asset) throw new ConnectorError("the asset was deleted", "not_found");
  const options = asset.options as AssetOptions;
  const monitor = assetMonitor(env, asset.tenantId, asset.id);
  const since = options.delta_only === "true" ? await monitor.lastFreshness() : undefined;
  const scanTime = nowIso();
  const profile = await profileFor(env, db, job, asset, options, since);
  return monitor.applyScan({
    asset: monitored(asset, options),
    jobId: job.id,
    createdAt: job.createdAt,
    scanTime,
    profile,
  });
}
