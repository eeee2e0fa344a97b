import type { ScanJobRow } from "../../db/schema";
/** A job as the API shows it: status, progress, timings and error. */
export function scanJobView(job: ScanJobRow) {
  const started = job.startedAt ? Date.parse(job.startedAt) : undefined;
  const finished = job.finishedAt ? Date.parse(job.finishedAt) : undefined;
  return {
    job_id: job.id,
    asset_id: String(job.assetId),
    kind: job.kind,
    status: job.status,
    trigger: job.trigger,
    progress: {
      rows: job.rowsScanned,
      bytes: job.bytesScanned,
      total_bytes: job.totalBytes,
      /** 0-1 when the total is known up front (files), else null. */
      fraction: job.totalBytes ? Math.min(1, job.bytesScanned / job.totalBytes) : job.status === "SUCCEEDED" ? 1 : null,
    },
    engine: job.engine,
    engine_reason: job.engineReason,
    provider: job.provider
      ? { name: job.provider, run_id: job.providerRunId, run_url: job.providerRunUrl, state: job.providerState }
      : null,
    attempts: job.attempts,
    error: job.error,
    created_at: job.createdAt,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
    duration_ms: started !== undefined && finished !== undefined ? finished - started : null,
  };
}
