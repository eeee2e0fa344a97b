/** A message of the `scan-jobs` queue: which job to run. The job row in D1 holds the rest. */
export interface ScanJobMessage {
  job_id: string;
  tenant_id: string;
  asset_id: number;
}

/** Queues accept at most 100 messages per sendBatch. */
export const QUEUE_BATCH_LIMIT = 100;
