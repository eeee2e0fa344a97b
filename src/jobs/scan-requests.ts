import { and, eq, exists, inArray, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { isFileType } from "../connections";
import type { Db } from "../db";
import { insertWhere } from "../db/json-insert";
import { type AssetHead, assets, CONNECTION_TYPES, type ScanJobRow, scanJobs } from "../db/schema";
import type { Env } from "../env";
import { ConflictError, InvalidInputError, LimitExceededError, UnavailableError } from "../lib/errors";
import { dialectOfDbType, identifierProblem } from "../scan/sql/identifiers";
import { storeCompressed, storeInflated } from "./inflate-upload";
import { failUnqueuedJob } from "./lifecycle";
import { createScanJob, type EndedJobSource, enqueueScanJobs, lastUploadJob, newScanJobRow } from "./scan-jobs";
import { type StoredUpload, type UploadTarget, uploadPrefix } from "./upload-storage";

/** Formats of data uploaded in the request body, by Content-Type. */
export const UPLOAD_FORMATS: Record<string, "csv" | "ndjson"> = {
  "text/csv": "csv",
  "application/x-ndjson": "ndjson",
};

/** Upload locations of the interface (GBQ is BigQuery) plus the asset's other connection types. */
export const LOCATIONS = ["GCS", "GBQ", "S3", "AZURE", "SNOWFLAKE", ...CONNECTION_TYPES] as const;
export type Location = (typeof LOCATIONS)[number];

/** The connection type a location stands for. */
export function locationType(location: Location): string {
  return location === "GBQ" ? "BIGQUERY" : location;
}

/** What a scan is asked to read; unset fields come from the asset's payload, options and connection. */
export type ScanRequest = {
  location?: string;
  path?: string;
  format?: "csv" | "ndjson" | "json" | "parquet";
  delimiter?: string;
  table?: string;
  query?: string;
  /** Run on the tenant's Spark cluster (docs/resources/light-and-full-scans.md). */
  full_scan?: boolean;
};

/** What a job's `request` holds: the scan request, plus where uploaded data was stored. */
export type ScanJobRequest = ScanRequest & {
  /** Uploaded data: where it is stored (our UPLOADS bucket, or the tenant's), its format and inflated size. */
  upload?: StoredUpload & { format: "csv" | "ndjson"; bytes: number };
};

/**
 * Why `request` cannot scan `asset` (409 for an UPLOAD asset without uploaded data, 400 naming
 * the field), from the asset's type and, for a table named, its database; undefined when it can.
 */
function scanRequestProblem(
  asset: Pick<AssetHead, "id" | "tenantId" | "type" | "dbType">,
  request: ScanJobRequest,
): Error | undefined {
  if (asset.type === "UPLOAD" && !request.upload) {
    // Rescanning the last batch would add a second point of the same data to every metric's history.
    return new ConflictError(
      `Asset ${asset.id} is an UPLOAD asset: its data arrives only by upload, and each batch is scanned as it arrives. ` +
        `Upload a batch (POST /v2/${asset.tenantId}/sources/${asset.id}/batch_data with text/csv or application/x-ndjson)`,
    );
  }
  if (request.location && locationType(request.location as Location) !== asset.type) {
    return new InvalidInputError([{ field: "location", message: `the asset is of type ${asset.type}` }]);
  }
  const files = isFileType(asset.type);
  if (!files && !request.upload && (request.path || request.format || request.delimiter)) {
    return new InvalidInputError([{ field: "path", message: `the asset is a ${asset.type} table, not files` }]);
  }
  if (files && (request.table || request.query)) {
    return new InvalidInputError([
      { field: request.table ? "table" : "query", message: `the asset is ${asset.type} files` },
    ]);
  }
  const tableProblem = request.table && identifierProblem(request.table, dialectOfDbType(asset.dbType));
  if (tableProblem) return new InvalidInputError([{ field: "table", message: tableProblem }]);
  return undefined;
}

/** The bindings queuing a scan uses: the scan queue, and the asset's object for a job it could not queue. */
export type QueueEnv = Pick<Env, "SCAN_JOBS" | "ASSET_MONITOR">;

/** How long a request whose job the queue refused is asked to wait before it is sent again. */
const QUEUE_RETRY_AFTER_SECONDS = 5;

/**
 * Sends a committed job to the scan queue. If the queue refuses it, the job ends FAILED with the
 * reason (never left QUEUED: no delivery would claim it, and retention removes only ended jobs)
 * and the request is refused as unavailable (503, Retry-After): sent again, it makes
 * a new job.
 */
async function enqueueOrFail(env: QueueEnv, db: Db, job: ScanJobRow): Promise<void> {
  try {
    await enqueueScanJobs(env.SCAN_JOBS, [job]);
  } catch (err) {
    console.error(JSON.stringify({ job_id: job.id, job_not_queued: String(err) }));
    try {
      await failUnqueuedJob(env, db, job, "not queued: the scan queue refused the job; its request was answered 503");
    } catch (failed) {
      console.error(JSON.stringify({ job_id: job.id, unqueued_job_not_failed: String(failed) }));
    }
    throw new UnavailableError(
      `The scan queue did not take the job; nothing will run. Send the request again in ${QUEUE_RETRY_AFTER_SECONDS} s`,
      QUEUE_RETRY_AFTER_SECONDS,
    );
  }
}

/** Checks a scan request against its asset (400 naming the field), records the job (with `after` in its batch) and queues it. */
export async function queueScan(
  db: Db,
  env: QueueEnv,
  asset: AssetHead,
  request: ScanJobRequest,
  trigger: string,
  totalBytes?: number,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<ScanJobRow> {
  const problem = scanRequestProblem(asset, request);
  if (problem) throw problem;
  const job = await createScanJob(
    db,
    { tenantId: asset.tenantId, assetId: asset.id, kind: "SCAN", trigger, request, totalBytes },
    after,
  );
  await enqueueOrFail(env, db, job);
  return job;
}

/**
 * A scan request checked in the batch that records its job (one round trip with the caller's
 * access check): the asset's type, as the batch sees it, must be one of those scanRequestProblem
 * accepts for `request`, tried for every type. A request that names a table is checked against
 * the asset's database too, which this does not cover: undefined, queue it with queueScan.
 */
export function scanInBatch(db: Db, asset: { tenantId: string; id: number }, request: ScanJobRequest, trigger: string) {
  if (request.table) return undefined;
  const accepts = CONNECTION_TYPES.filter(
    (type) => !scanRequestProblem({ id: asset.id, tenantId: asset.tenantId, type, dbType: null }, request),
  );
  const accepted = exists(
    db
      .select({ one: sql`1` })
      .from(assets)
      .where(and(eq(assets.tenantId, asset.tenantId), eq(assets.id, asset.id), inArray(assets.type, accepts))),
  );
  const job = newScanJobRow({ tenantId: asset.tenantId, assetId: asset.id, kind: "SCAN", trigger, request });
  return {
    job,
    /** The insert of the job, where `allowed` (the caller's access) holds and the request fits the asset. */
    insert: (allowed: SQL) => insertWhere(db, scanJobs, job, and(allowed, accepted)!).returning({ id: scanJobs.id }),
    /**
     * After the batch, from the asset it read (the caller's access settled): the job inserted is
     * queued; none inserted means the request does not fit the asset, and the error says why.
     */
    queue: async (env: QueueEnv, inserted: boolean, seen: AssetHead) => {
      if (!inserted)
        throw scanRequestProblem(seen, request) ?? new ConflictError(`Asset ${asset.id} changed; send the scan again`);
      await enqueueOrFail(env, db, job);
      return job;
    },
  };
}

/** What an upload carries: its body, media type, length as sent, the tenant's limit and its Content-Encoding. */
export interface UploadBody {
  body: ReadableStream<Uint8Array> | null;
  contentType: string;
  /** Bytes as sent (the Content-Length): compressed ones when `encoding` is gzip. */
  bytes: number;
  limit: number;
  /** gzip: inflated on the way into the bucket, the limit counting inflated bytes. */
  encoding?: "gzip";
}

/**
 * Streams an uploaded body of a known length into the tenant's bucket, or our UPLOADS bucket when
 * it has none, and queues its scan. The length is checked against the tenant's free_upload_limit
 * before any byte is stored, so an oversized upload changes nothing. A gzip body has the limit
 * applied to its inflated bytes as they come (src/jobs/inflate-upload.ts): stored inflated in our
 * bucket, as sent in the tenant's.
 */
export async function queueUpload(
  db: Db,
  env: QueueEnv,
  target: UploadTarget,
  asset: AssetHead,
  upload: UploadBody,
  delimiter: string | undefined,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<ScanJobRow> {
  const format = UPLOAD_FORMATS[upload.contentType]!;
  const { limit, contentType } = upload;
  if (upload.bytes > limit) {
    throw new LimitExceededError(`The upload is ${upload.bytes} bytes; this tenant's limit is ${limit}`);
  }
  if (upload.bytes === 0 || !upload.body) throw new InvalidInputError([], "The upload is empty");
  const key = `${uploadPrefix(asset.tenantId)}${asset.id}/${crypto.randomUUID()}.${format}`;
  let stored: StoredUpload & { bytes: number };
  if ("store" in target) {
    if (upload.encoding === "gzip") {
      const gzipKey = `${key}.gz`;
      const bytes = await storeCompressed(target.store, gzipKey, upload.body, { bytes: upload.bytes, limit });
      stored = { key: gzipKey, storage: "tenant", encoding: "gzip", bytes };
    } else {
      await target.store.put(key, upload.body, { bytes: upload.bytes, contentType });
      stored = { key, storage: "tenant", bytes: upload.bytes };
    }
  } else if (upload.encoding === "gzip") {
    stored = { key, bytes: await storeInflated(target.bucket, key, upload.body, { contentType, limit }) };
  } else {
    // A body with a Content-Length is a fixed-length stream, which R2 stores without buffering.
    await target.bucket.put(key, upload.body, { httpMetadata: { contentType } });
    stored = { key, bytes: upload.bytes };
  }
  const request: ScanJobRequest = { upload: { ...stored, format }, ...(delimiter ? { delimiter } : {}) };
  return queueScan(db, env, asset, request, "upload", stored.bytes, after);
}

/**
 * The request of the newest job of an asset that carried an uploaded batch (where the batch is, its
 * format and delimiter), or undefined when nothing was ever uploaded to it: D1's running jobs and
 * the asset's object's ended ones (lastUploadJob).
 */
export async function lastUploadedBatch(
  db: Db,
  source: EndedJobSource,
  tenantId: string,
  assetId: number,
): Promise<(ScanJobRequest & Required<Pick<ScanJobRequest, "upload">>) | undefined> {
  const job = await lastUploadJob(db, source, tenantId, assetId);
  return job?.request as (ScanJobRequest & Required<Pick<ScanJobRequest, "upload">>) | undefined;
}
