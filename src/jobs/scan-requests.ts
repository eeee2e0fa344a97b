import type { AssetRow } from "../auth/access";
import type { Db } from "../db";
import type { ScanJobMessage } from "../jobs/messages";
import { createScanJob, enqueueScanJobs, type ScanJobRow } from "../jobs/scan-jobs";
import { ApiError } from "../lib/errors";
import { locationType, type ScanRequestBody } from "../routes/scans/scans.schemas";

/** Formats of data uploaded in the request body, by Content-Type. */
export const UPLOAD_FORMATS: Record<string, "csv" | "ndjson"> = {
  "text/csv": "csv",
  "application/x-ndjson": "ndjson",
};

/** What a job's `request` holds: the scan request, plus where uploaded data was stored. */
export type ScanJobRequest = ScanRequestBody & {
  /** Uploaded data stored in the UPLOADS bucket. */
  upload?: { key: string; format: "csv" | "ndjson"; bytes: number };
};

/** Checks a scan request against its asset (400 naming the field), records the job and queues it. */
export async function queueScan(
  db: Db,
  queue: Queue<ScanJobMessage>,
  asset: AssetRow,
  request: ScanJobRequest,
  trigger: string,
  totalBytes?: number,
): Promise<ScanJobRow> {
  if (request.location && locationType(request.location as never) !== asset.type) {
    throw ApiError.badRequest("The location does not match the asset", [
      { path: "body.location", message: `the asset is of type ${asset.type}` },
    ]);
  }
  const files = ["GCS", "S3", "AZURE"].includes(asset.type);
  if (!files && !request.upload && (request.path || request.format || request.delimiter)) {
    throw ApiError.badRequest("path, format and delimiter apply to files", [
      { path: "body.path", message: `the asset is a ${asset.type} table, not files` },
    ]);
  }
  if (files && (request.table || request.query)) {
    throw ApiError.badRequest("table and query apply to databases", [
      { path: request.table ? "body.table" : "body.query", message: `the asset is ${asset.type} files` },
    ]);
  }
  const job = await createScanJob(db, {
    tenantId: asset.tenantId,
    assetId: asset.id,
    kind: "SCAN",
    trigger,
    request,
    totalBytes,
  });
  await enqueueScanJobs(queue, [job]);
  return job;
}

/**
 * Streams an uploaded body into the UPLOADS bucket and queues its scan. The Content-Length is
 * required (411) and checked against the tenant's free_upload_limit (413) before any byte is
 * stored, so an oversized upload changes nothing.
 */
export async function queueUpload(
  db: Db,
  queue: Queue<ScanJobMessage>,
  bucket: R2Bucket,
  asset: AssetRow,
  upload: { body: ReadableStream<Uint8Array> | null; contentType: string; length: string | undefined; limit: number },
  delimiter: string | undefined,
): Promise<ScanJobRow> {
  const format = UPLOAD_FORMATS[upload.contentType]!;
  const bytes = Number(upload.length);
  if (upload.length === undefined || !Number.isSafeInteger(bytes) || bytes < 0) {
    throw new ApiError(411, "length_required", "Uploads need a Content-Length header (e.g. curl --data-binary @file)");
  }
  if (bytes > upload.limit) {
    throw new ApiError(
      413,
      "payload_too_large",
      `The upload is ${bytes} bytes; this tenant's limit is ${upload.limit}`,
    );
  }
  if (bytes === 0 || !upload.body) throw ApiError.badRequest("The upload is empty");
  const key = `uploads/${asset.tenantId}/${asset.id}/${crypto.randomUUID()}.${format}`;
  // A body with a Content-Length is a fixed-length stream, which R2 stores without buffering.
  await bucket.put(key, upload.body, { httpMetadata: { contentType: upload.contentType } });
  const request: ScanJobRequest = { upload: { key, format, bytes }, ...(delimiter ? { delimiter } : {}) };
  return queueScan(db, queue, asset, request, "upload", bytes);
}
