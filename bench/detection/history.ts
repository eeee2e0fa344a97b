/**
 * bench/detection: the real-history asset's alerts, each told new or repeated from the incidents
 * API. An alert is new when it opened its incident (it is in the alert_refs of the incident's
 * opening history entry, from_state null); repeated when it joined an incident an earlier scan had
 * opened (an escalation entry's alert_refs). Alerts no incident names are "unmatched". Also per
 * scan: incidents the scan confirmed without an alert (an OPEN → OPEN entry of its job with no
 * alert_refs) and incidents it closed.
 */
import { type DqService, pool, type ScanRecord } from "./service";

export type AlertKind = "new" | "repeated" | "unmatched";

export interface HistoryBatch {
  batch: string;
  job: string;
  status: string;
  /** Earlier uploads of the batch whose job the queue never delivered. */
  lostJobs?: string[];
  alerts: Array<{
    type: string;
    attribute: string | null;
    priority: string;
    kind: AlertKind;
    incident?: number;
    /** The alert's text and details.strategy, to read a history's false alarms from the JSON. */
    description?: string;
    strategy?: string;
  }>;
  /** Open incidents this scan confirmed without raising an alert. */
  confirmed: number;
  /** Incidents this scan closed (auto-resolved, or the level adopted as the new normal). */
  closed: number;
}

/** Reads the project's incidents (with their history) and classifies the scans' alerts. */
export async function classifyHistory(
  service: DqService,
  projectId: number,
  scans: readonly ScanRecord[],
): Promise<HistoryBatch[]> {
  const kinds = new Map<number, { kind: AlertKind; incident: number }>();
  const confirmed = new Map<string, number>();
  const closed = new Map<string, number>();
  const bump = (m: Map<string, number>, job: string) => m.set(job, (m.get(job) ?? 0) + 1);
  const list = await service.incidents(projectId);
  await pool(list, 8, async ({ id }) => {
    const detail = await service.incident(id);
    let openingJob: string | null = null;
    for (const entry of detail.history) {
      const opening = entry.from_state === null;
      if (opening) openingJob = entry.job_id;
      for (const ref of entry.alert_refs) kinds.set(ref, { kind: opening ? "new" : "repeated", incident: id });
      if (!entry.job_id) continue;
      if (!opening && entry.to_state === "OPEN" && entry.alert_refs.length === 0) bump(confirmed, entry.job_id);
      if (entry.to_state === "CLOSED") bump(closed, entry.job_id);
    }
    // Alerts the history does not name (it should name them all): judged by the opening job.
    for (const m of detail.metrics) {
      if (!kinds.has(m.alert_id)) {
        kinds.set(m.alert_id, { kind: m.job_id === openingJob ? "new" : "repeated", incident: id });
      }
    }
  });
  return scans.map((s) => ({
    batch: s.batch,
    job: s.job,
    status: s.status,
    ...(s.lostJobs ? { lostJobs: s.lostJobs } : {}),
    alerts: s.alerts.map((a) => {
      const k = kinds.get(a.id);
      return {
        type: a.type,
        attribute: a.attribute,
        priority: a.priority,
        kind: k?.kind ?? "unmatched",
        ...(k ? { incident: k.incident } : {}),
        description: a.description,
        ...(typeof a.details?.strategy === "string" ? { strategy: a.details.strategy } : {}),
      };
    }),
    confirmed: confirmed.get(s.job) ?? 0,
    closed: closed.get(s.job) ?? 0,
  }));
}
