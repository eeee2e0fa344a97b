/**
 * The AssetMonitor's RPC interface (one Durable Object per asset, monitor/asset-monitor.ts) and the
 * shapes it takes and answers in: what env.ts types its binding with, and what its callers (the
 * pipeline, the backfill, retention, routes) see of it.
 */
import type { CloseReason, IncidentEntry, KeptAlert, ScanJobRow } from "../db/schema";
import type { DqScore } from "./dimensions";
import type { AssetProfile } from "./profile";

/** The asset as the monitor needs it (and as its incidents and alerts copy it). */
export interface MonitoredAsset {
  tenantId: string;
  id: number;
  name: string;
  type: string;
  projectId: number;
  connectionId: number;
  idAttributes?: string[];
  timestampAttribute?: string;
  /** The asset's skip_investigator is 'true': alerts say nothing of where their problem sits. */
  skipInvestigator?: boolean;
}

/** A past value of a metric. `excluded` keeps an anomalous point out of every baseline. */
export interface HistoryPoint {
  job_id: string;
  /** ISO 8601: the scan time of that job. */
  time: string;
  value: number;
  excluded: boolean;
}

/** A stored point as measured; `offset` is how far adopting a later level moved it for the baselines. */
export interface RecordedPoint extends HistoryPoint {
  offset: number;
}

/** An anomaly policy that cannot judge a metric yet: it has `points` of the `needed` past scans. */
export interface TrainingState {
  policy: string;
  metric: string;
  attribute?: string;
  points: number;
  needed: number;
}

/** A metric of the asset's history: how many points it has and its newest. */
export type MetricSummary = {
  metric: string;
  points: number;
  last_time: string;
  last_value: number;
};

/** Why a manual state change cannot be made; the monitor answers with it instead of changing anything. */
export type TransitionRefusal =
  | { ok: false; problem: "not_found"; message: string }
  | { ok: false; problem: "conflict"; message: string };

export interface ApplyScanInput {
  asset: MonitoredAsset;
  jobId: string;
  /** When the job was created (upload time): the alerts' create_time. */
  createdAt: string;
  /** When the scan ran: the time of its metrics. */
  scanTime: string;
  profile: AssetProfile;
  /**
   * The job's row as the caller read it (still QUEUED or RUNNING): the scan ends it SUCCEEDED in
   * its D1 batch, which deletes the row, the object keeping the job (issue 38). Without it the
   * caller ends the job.
   */
  job?: ScanJobRow;
}

/**
 * As ApplyScanInput, with the profile as its JSON text: what the scan pipeline sends. A profile is
 * thousands of small objects (every attribute's top values, quantiles, patterns); handed over as
 * one string and parsed here, it costs the caller and this object less CPU than the structured
 * clone of the object itself, for the same profile (the pipeline sends the text only when it has
 * no null, which may stand for a NaN or an infinity: see applyProfile).
 */
export interface ApplyScanJsonInput extends Omit<ApplyScanInput, "profile"> {
  profileJson: string;
}

/** As ApplyScanJsonInput, with the profile's wire text (top values packed: profile-wire.ts), shorter still. */
export interface ApplyScanWireInput extends Omit<ApplyScanInput, "profile"> {
  profileWire: string;
}

export interface IncidentStateChange {
  tenantId: string;
  incidentId: number;
  state: "OPEN" | "CLOSED";
  note?: string;
  reason?: CloseReason;
  actor: string;
}

/** An incident's history entries its asset's object keeps (oldest first), and the steps out of D1 it had taken in. */
export interface KeptIncidentHistory {
  entries: IncidentEntry[];
  movedSteps: number;
}

/** A change made answers the incident's history as the object keeps it after the change. */
export type IncidentStateResult = { ok: true; history: KeptIncidentHistory } | TransitionRefusal;

/** What the AssetMonitor answers when it applied (or had applied) one scan. */
export interface ApplyScanResult {
  jobId: string;
  alerts: number;
  dqScore: DqScore | null;
  /** True when this job had been applied before: nothing was written this time. */
  replay: boolean;
  /** Whether this call ended the job (given as `job`): SUCCEEDED, kept in the object, gone from D1. */
  jobEnded?: boolean;
}

/** What the AssetMonitor answers over RPC (its stub's methods). */
/** What retention removed from an asset's object: metric points, applied-job records, DQ scores. */
export interface PrunedHistory {
  /** History entries of incidents closed before the cutoff. */
  incidentHistory: number;
  points: number;
  appliedJobs: number;
  dqScores: number;
  alerts: number;
  /** Finished scan jobs (created before the cutoff). */
  scanJobs: number;
}

/** What one step of the move of an asset's history out of D1 moved (AssetMonitor.moveHistoryIn). */
export interface MovedHistory {
  dqScores: number;
  appliedJobs: number;
  alerts: number;
  /** Finished scan jobs. */
  scanJobs: number;
  /** History entries of the asset's incidents. */
  incidentHistory: number;
  /** Whether rows may be left. */
  more: boolean;
}

export interface AssetMonitorRpc extends Rpc.DurableObjectBranded {
  applyScan(input: ApplyScanInput | ApplyScanJsonInput | ApplyScanWireInput): Promise<ApplyScanResult>;
  setIncidentState(change: IncidentStateChange): Promise<IncidentStateResult>;
  incidentHistory(incidentId: number): Promise<KeptIncidentHistory>;
  rebuildIncidents(input: { asset: MonitoredAsset; since: string }): Promise<{ incidents: number; alerts: number }>;
  pruneHistory(cutoff: string, openSince?: string): Promise<PrunedHistory>;
  forget(): Promise<void>;
  alerts(
    query: { jobId: string } | { ids: number[] } | { metric: string },
  ): Promise<{ alerts: KeptAlert[]; movedSteps: number; hasJob?: boolean }>;
  training(): Promise<TrainingState[]>;
  metricSeries(metric: string): Promise<RecordedPoint[]>;
  dqScores(
    limit: number,
    before?: string,
  ): Promise<{ scores: Array<DqScore & { jobId: string; scoredAt: string }>; movedSteps: number }>;
  moveHistoryIn(input: { asset: { tenantId: string; id: number }; limit: number }): Promise<MovedHistory>;
  metricCatalog(prefix: string | null): Promise<MetricSummary[]>;
  keepJob(job: ScanJobRow): Promise<void>;
  scanJob(jobId: string): Promise<{ job: ScanJobRow | undefined; movedSteps: number }>;
  scanJobs(query: FinishedJobsQuery): Promise<{ jobs: ScanJobRow[]; movedSteps: number }>;
}

/**
 * A page of an asset's finished jobs: newest first (created_at, then id), `limit` of them after the
 * keyset (`before`, `beforeId`) — created before `before`, or at `before` with an id below
 * `beforeId` (without it, created before `before`); `uploaded`: only uploads' jobs.
 */
export interface FinishedJobsQuery {
  limit: number;
  before?: string;
  beforeId?: string;
  uploaded?: boolean;
}
