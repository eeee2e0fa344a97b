/** A message of the `scan-jobs` queue: which job to run. The job row in D1 holds the rest. */
export interface ScanJobMessage {
  job_id: string;
  tenant_id: string;
  asset_id: number;
}

/** A step of an incident backfill (POST …/incidents/historical), carried by the same queue. */
export interface BackfillMessage {
  kind: "incident_backfill";
  tenant_id: string;
  job_id: string;
  /** The step starts after this asset id (0 for the first step). */
  after_asset_id: number;
}

/** What the scan-jobs queue carries: scan jobs, and backfill steps. */
export type ScanQueueMessage = ScanJobMessage | BackfillMessage;

/** Queues accept at most 100 messages per sendBatch. */
export const QUEUE_BATCH_LIMIT = 100;
