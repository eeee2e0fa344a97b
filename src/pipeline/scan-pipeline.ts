/**
 * One scan, from the queue's job to the monitor's result: load the scan subject once (asset,
 * validated options, connection and credential), read and profile the data through the
 * asset's connector (files streamed, SQL pushed down), and hand the profile to the asset's
 * AssetMonitor, called once.
 */

import { and, eq } from "drizzle-orm";
import { AssetOptions } from "../catalog/assets";
import {
  type ConnectionCredential,
  createObjectStore,
  createSqlRunner,
  isFileType,
  isMetastoreType,
  openCredential,
  openIcebergTable,
  scanSource,
} from "../connections";
import type { ApplyScanResult, MonitoredAsset } from "../contracts/asset-monitor";
import { assetMonitor } from "../contracts/asset-monitor-client";
import type { AssetProfile } from "../contracts/profile";
import type { Db } from "../db";
import type { AssetHead, ConnectionRow, ScanJobRow } from "../db/schema";
import { assetHeadColumns, assets, connections, scanJobs, tenants } from "../db/schema";
import type { Env } from "../env";
import { lastFreshness } from "../incidents/monitor-store";
import type { ScanJobRequest } from "../jobs/scan-requests";
import { uploadedBatchStore } from "../jobs/upload-storage";
import { nowIso } from "../lib/time";
import type { ObjectStore, StoredObject } from "../scan/connectors";
import { ConnectorError } from "../scan/connectors/types";
import { type FileScanOptions, profileObjects, type ScanProgress } from "../scan/files";
import type { FileFormat } from "../scan/formats";
import type { IcebergTable } from "../scan/iceberg";
import { encodeProfile } from "../scan/profile-wire";
import type { ProfileBuilderOptions } from "../scan/profiler/profile-builder";
import { DEFAULT_FULL_SCAN_THRESHOLD_BYTES, decideEngine } from "../scan/spark/engine";
import { loadSchema, profileTable, type SqlProfileOptions, tableOf } from "../scan/sql";
import { getSparkJobConfig } from "../settings/spark";
import { loadAssetSchema, schemaSource } from "./asset-schema";
import {
  chooseSparkTarget,
  dispatchFullScan,
  driverSource,
  type FullScanInput,
  resultKey,
  type SparkChoice,
} from "./spark-dispatch";

/** Everything a scan is about, loaded once: the job, its asset with validated options, and where the data is. */
export interface ScanSubject {
  job: ScanJobRow;
  request: ScanJobRequest;
  /** The asset's row but its attributes (the latest scan's statistics), which a scan does not read. */
  asset: AssetHead;
  options: AssetOptions;
  /** The asset as the monitor sees it. */
  monitored: MonitoredAsset;
  /** The connection and its opened credential; absent for uploaded data, in our bucket or the tenant's. */
  source?: { connection: ConnectionRow; credential: ConnectionCredential };
  /** delta_only: only rows newer than the last applied scan's freshness. */
  since?: string;
}

/**
 * Loads the subject of a job; a deleted asset or connection, or unreadable options, is a connector
 * error. `loaded` is the job's asset when the caller read it already.
 */
export async function loadScanSubject(env: Env, db: Db, job: ScanJobRow, loaded?: AssetHead): Promise<ScanSubject> {
  const asset =
    loaded ??
    (
      await db
        .select(assetHeadColumns)
        .from(assets)
        .where(and(eq(assets.tenantId, job.tenantId), eq(assets.id, job.assetId)))
        .limit(1)
    )[0];
  if (!asset) throw new ConnectorError("the asset was deleted", "not_found");
  const parsed = AssetOptions.safeParse(asset.options);
  if (!parsed.success) throw new ConnectorError("the asset's options are not valid: set them again", "invalid");
  const options = parsed.data;
  const request = job.request as ScanJobRequest;
  if (asset.type === "UPLOAD" && !request.upload) {
    // Queued before the asset became UPLOAD: there is no batch to read, and no store to read one from.
    throw new ConnectorError("the asset is an UPLOAD asset: only an uploaded batch can be scanned", "invalid");
  }
  const since =
    options.delta_only === "true" ? await lastFreshness(db, { tenantId: asset.tenantId, id: asset.id }) : undefined;
  return {
    job,
    request,
    asset,
    options,
    monitored: monitoredAsset(asset, options),
    ...(request.upload ? {} : { source: await sourceOf(env, db, asset) }),
    ...(since ? { since } : {}),
  };
}

/**
 * Runs a scan job: profiles the asset's data through its connector (rows never leave a
 * database: SQL is pushed down; files are streamed), then hands the profile to the asset's
 * AssetMonitor, which applies the policies and writes alerts, incidents and the DQ score.
 */
export async function runScanJob(
  env: Env,
  db: Db,
  job: ScanJobRow,
  asset?: AssetHead,
): Promise<ApplyScanResult | { dispatched: true }> {
  const subject = await loadScanSubject(env, db, job, asset);
  // A source group's ANALYZE job reads and stores the schema first: the asset lists its
  // attributes even when the profile that follows fails. It keeps what the scans learnt of
  // them, so it reads the asset's attributes (the subject has none).
  if (job.kind === "ANALYZE" && !subject.request.upload) {
    const full = await db.query.assets.findFirst({
      where: and(eq(assets.tenantId, subject.asset.tenantId), eq(assets.id, subject.asset.id)),
    });
    if (!full) throw new ConnectorError("the asset was deleted", "not_found");
    await loadAssetSchema(env, db, full);
  }
  const placement = await placeScan(env, db, subject);
  if (placement.full) {
    await dispatchFullScan(env, db, placement.full);
    return { dispatched: true };
  }
  const scanTime = nowIso();
  const profile = await profileSubject(env, db, subject, placement.listed);
  return applyProfile(env, subject, scanTime, profile);
}

/**
 * Hands a profile to the asset's AssetMonitor: idempotent per job id (a replay writes nothing). The
 * profile goes as text (cheaper than the structured clone of its objects): its wire text, top
 * values packed (ApplyScanWireInput, scan/profile-wire.ts), or its plain JSON when an attribute
 * has no list of them (ApplyScanJsonInput); unless the text has a null, which may stand for a NaN
 * or an infinity JSON cannot carry: such a profile goes as it is.
 */
export function applyProfile(
  env: Env,
  subject: Pick<ScanSubject, "job" | "asset" | "monitored">,
  scanTime: string,
  profile: AssetProfile,
): Promise<ApplyScanResult> {
  const wire = encodeProfile(profile);
  const json = wire ?? JSON.stringify(profile);
  // The job goes along: the monitor ends it SUCCEEDED in its D1 batch (ApplyScanInput.job).
  const scan = {
    asset: subject.monitored,
    jobId: subject.job.id,
    createdAt: subject.job.createdAt,
    scanTime,
    job: subject.job,
  };
  return assetMonitor(env, subject.asset.tenantId, subject.asset.id).applyScan(
    JSON_NULL.test(json)
      ? { ...scan, profile }
      : wire !== undefined
        ? { ...scan, profileWire: wire }
        : { ...scan, profileJson: json },
  );
}

/** A null value in JSON.stringify's output (no whitespace): what NaN, ±Infinity and undefined array items become. */
const JSON_NULL = /[:,[]null[,\]}]/;

/** Why an uploaded batch runs where it does: always in the Worker. */
export const UPLOAD_ENGINE_REASON = "light scan: an uploaded batch is scanned in the Worker";

/** Where a scan runs (scan/spark/engine.ts), recorded on the job; a full scan comes back ready to dispatch. */
async function placeScan(env: Env, db: Db, subject: ScanSubject): Promise<{ full?: FullScanInput; listed?: Listed }> {
  const { request, asset, options, source, job } = subject;
  const record = (engineReason: string) => db.update(scanJobs).set({ engineReason }).where(eq(scanJobs.id, job.id));
  if (request.upload || !source) {
    // The consumer's claim records it (processScanJob); another caller's job may not have it yet.
    if (job.engineReason !== UPLOAD_ENGINE_REASON) await record(UPLOAD_ENGINE_REASON);
    return {};
  }
  const onlyLightScan = options.only_light_scan === "true";
  const fullScanRequested = request.full_scan === true;
  // Files, and an Iceberg table's live data files, are listed for their size, unless a full scan
  // was asked for (Spark lists them itself).
  let listed: Listed | undefined;
  if (onlyLightScan || !fullScanRequested) {
    if (isFileType(asset.type)) {
      const store = createObjectStore(source.connection, source.credential, env);
      listed = { store, objects: await listSubjectFiles(db, subject, store) };
    } else if (isMetastoreType(asset.type)) {
      listed = await listIcebergFiles(env, db, subject, source);
    }
  }
  const config = await getSparkJobConfig(db, asset.tenantId);
  const inputs = {
    reads: scanSource(asset.type),
    onlyLightScan,
    fullScanRequested,
    ...(listed ? { sizeBytes: listed.objects.reduce((sum, o) => sum + o.size, 0) } : {}),
    thresholdBytes: config.full_scan_threshold_bytes ?? DEFAULT_FULL_SCAN_THRESHOLD_BYTES,
  };
  // The provider is looked up only when a provider would change the answer.
  let decision = decideEngine({ ...inputs, spark: { provider: "Spark" } });
  let choice: SparkChoice | undefined;
  if (decision.engine !== "WORKER") {
    choice = await chooseSparkTarget(env, db, asset, source);
    decision = decideEngine({ ...inputs, spark: "missing" in choice ? choice : { provider: choice.provider } });
  }
  await record(decision.reason);
  if (decision.engine === "NONE") throw new ConnectorError(decision.reason, "invalid");
  if (decision.engine === "WORKER" || !choice || "missing" in choice) return listed ? { listed } : {};
  const tenant = await db.query.tenants.findFirst({ where: eq(tenants.id, asset.tenantId) });
  const resultUri = storageResultUri(tenant?.storage, asset.tenantId, job.id, choice.s3Scheme);
  return {
    full: {
      job,
      reason: decision.reason,
      target: choice,
      source: driverSource(asset, source.connection, request, choice.s3Scheme),
      options: { ...sqlProfileOptions(subject), breakdown: false },
      ...(resultUri ? { resultUri } : {}),
    },
  };
}

/** The URI of the tenant's storage where the driver writes a profile too large for the callback. */
function storageResultUri(storage: unknown, tenantId: string, jobId: string, s3Scheme: string): string | undefined {
  const s = storage as { type?: string; payload?: { bucket?: string; security?: { storage_account?: string } } } | null;
  const bucket = s?.payload?.bucket;
  if (!s || !bucket) return undefined;
  const key = resultKey(tenantId, jobId);
  if (s.type === "S3") return `${s3Scheme}://${bucket}/${key}`;
  if (s.type === "GCS") return `gs://${bucket}/${key}`;
  if (s.type === "AZURE" && s.payload?.security?.storage_account) {
    return `abfss://${bucket}@${s.payload.security.storage_account}.dfs.core.windows.net/${key}`;
  }
  return undefined;
}

/** The files a scan reads and the store they are read from, listed once: their size decides light or full. */
interface Listed {
  store: ObjectStore;
  objects: StoredObject[];
  /** An Iceberg table's files: their columns by field id (FileScanOptions.projectionOf). */
  projectionOf?: IcebergTable["projectionOf"];
}

/** The files a file asset's scan reads; total_bytes recorded on the job (its progress fraction). */
async function listSubjectFiles(db: Db, subject: ScanSubject, store: ObjectStore): Promise<StoredObject[]> {
  const payload = subject.asset.payload as { path: string };
  const objects = await store.list(subject.request.path ?? payload.path, {
    folders: subject.options.resolve_wildcards_to_folders === "true",
  });
  await recordTotalBytes(db, subject, objects);
  return objects;
}

/** An Iceberg table's live data files (its current snapshot), from the metastore and the manifests. */
async function listIcebergFiles(
  env: Env,
  db: Db,
  subject: ScanSubject,
  source: NonNullable<ScanSubject["source"]>,
): Promise<Listed> {
  const table = await openIcebergTable(source.connection, source.credential, env, subject.asset.payload);
  const objects = await table.dataFiles();
  if (objects.length === 0) throw new ConnectorError(`the Iceberg table ${table.name} has no data files`, "not_found");
  await recordTotalBytes(db, subject, objects);
  return { store: table.store, objects, projectionOf: table.projectionOf };
}

async function recordTotalBytes(db: Db, subject: ScanSubject, objects: readonly StoredObject[]): Promise<void> {
  const total = objects.reduce((s, o) => s + o.size, 0);
  await db.update(scanJobs).set({ totalBytes: total }).where(eq(scanJobs.id, subject.job.id));
}

/** Profiles the data a subject names, through the asset's connector. */
async function profileSubject(
  env: Env,
  db: Db,
  subject: ScanSubject,
  listed: Listed | undefined,
): Promise<AssetProfile> {
  const { request, asset, options, source } = subject;
  const onProgress = progressRecorder(db, subject.job.id);
  if (request.upload) {
    const object = { key: request.upload.key, size: request.upload.bytes };
    const separator = request.delimiter ?? options.separator;
    return profileObjects(
      await uploadedBatchStore(env, db, asset.tenantId, request.upload),
      [object],
      fileScanOptions(subject, request.upload.format, separator, onProgress),
    );
  }
  if (!source) throw new ConnectorError("the asset has no connection", "not_found");
  if (isFileType(asset.type)) {
    const payload = asset.payload as { path: string; format: FileFormat };
    const store = listed?.store ?? createObjectStore(source.connection, source.credential, env);
    const objects = listed?.objects ?? (await listSubjectFiles(db, subject, store));
    const format = request.format ?? payload.format;
    return profileObjects(
      store,
      objects,
      fileScanOptions(subject, format, request.delimiter ?? options.separator, onProgress),
    );
  }
  if (isMetastoreType(asset.type)) {
    // A light scan of the current snapshot: its Parquet data files, streamed like a file scan.
    const { store, objects, projectionOf } = listed ?? (await listIcebergFiles(env, db, subject, source));
    return profileObjects(store, objects, {
      ...fileScanOptions(subject, "parquet", undefined, onProgress),
      projectionOf,
    });
  }
  if (request.query) throw new ConnectorError("scanning a query is not supported yet: name a table", "invalid");
  const runner = await createSqlRunner(source.connection, source.credential);
  if (!runner) {
    throw new ConnectorError(`light scans of ${asset.type} assets are not available yet`, "unsupported");
  }
  try {
    const table = tableOf(asset.payload, request.table);
    const columns = await loadSchema(runner, table, await schemaSource(db, asset.tenantId));
    const profile = await profileTable(runner, table, columns, sqlProfileOptions(subject));
    await onProgress({ rows: profile.row_count, bytes: profile.bytes ?? 0 });
    return profile;
  } finally {
    await runner.close();
  }
}

async function sourceOf(env: Env, db: Db, asset: AssetHead): Promise<NonNullable<ScanSubject["source"]>> {
  const connection = await db.query.connections.findFirst({
    where: and(eq(connections.tenantId, asset.tenantId), eq(connections.id, asset.connectionId)),
  });
  if (!connection) throw new ConnectorError("the asset's connection no longer exists", "not_found");
  return { connection, credential: await openCredential(env, connection) };
}

function monitoredAsset(asset: AssetHead, options: AssetOptions): MonitoredAsset {
  return {
    tenantId: asset.tenantId,
    id: asset.id,
    name: asset.name,
    type: asset.type,
    projectId: asset.projectId,
    connectionId: asset.connectionId,
    ...(options.id_attributes?.length ? { idAttributes: options.id_attributes } : {}),
    ...(options.timestamp_attribute ? { timestampAttribute: options.timestamp_attribute } : {}),
    ...(options.skip_investigator === "true" ? { skipInvestigator: true } : {}),
  };
}

/** The asset's options as the streaming file profiler takes them. */
function fileScanOptions(
  subject: ScanSubject,
  format: FileFormat,
  separator: string | undefined,
  onProgress: FileScanOptions["onProgress"],
): FileScanOptions {
  const { options, since } = subject;
  const profile: ProfileBuilderOptions = {
    ...(options.id_attributes?.length ? { idAttributes: options.id_attributes } : {}),
    ...(options.timestamp_attribute ? { timestampAttribute: options.timestamp_attribute } : {}),
    ...(options.segments ? { segments: options.segments } : {}),
    ...(options.sample_fraction !== undefined ? { sampleFraction: options.sample_fraction } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    breakdown: options.skip_investigator !== "true",
  };
  return {
    format,
    ...(separator ? { separator } : {}),
    profile,
    ...(options.filter ? { filter: options.filter } : {}),
    ...(since && options.timestamp_attribute
      ? { since: { attribute: options.timestamp_attribute, after: Date.parse(since) } }
      : {}),
    ...(onProgress ? { onProgress } : {}),
  };
}

/** The asset's options as SQL pushdown takes them. */
function sqlProfileOptions({ options, since }: ScanSubject): SqlProfileOptions {
  return {
    ...(options.filter ? { filter: options.filter } : {}),
    ...(options.segments ? { segments: options.segments } : {}),
    ...(options.sample_fraction !== undefined ? { sample_fraction: options.sample_fraction } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.timestamp_attribute ? { timestamp_attribute: options.timestamp_attribute } : {}),
    ...(options.id_attributes?.length ? { id_attributes: options.id_attributes } : {}),
    ...(since ? { delta_only: true, last_max_timestamp: since } : {}),
    breakdown: options.skip_investigator !== "true",
  };
}

/** Records progress on the job row (throttled by the callers). */
function progressRecorder(db: Db, jobId: string) {
  return async ({ rows, bytes }: ScanProgress) => {
    await db.update(scanJobs).set({ rowsScanned: rows, bytesScanned: bytes }).where(eq(scanJobs.id, jobId));
  };
}
