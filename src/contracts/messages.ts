import type { AssetProfile } from "./profile";

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

/** A message of the `scan-results` queue: one accepted callback. */
export interface ScanResultMessage {
  job_id: string;
  tenant_id: string;
  asset_id: number;
  status: "SUCCEEDED" | "FAILED";
  /** When the callback was accepted: the scan time of its metrics. */
  received_at: string;
  profile?: AssetProfile;
  /** The profile is in the tenant's storage at resultKey(tenant, job). */
  profile_ref?: { bytes: number };
  error?: string;
}

/** A message of the notifications queue: which delivery to attempt. The log row holds the rest. */
export interface NotificationMessage {
  delivery_id: string;
  tenant_id: string;
}
