import { incidentView } from "../../contracts/incident-views";
import type { IncidentEntry } from "../../db/schema";
import type { IncidentDetail } from "../../incidents/incidents";

/** An incident as the list and the detail show it (shared with the notifications' payloads). */
export { incidentView };

export function historyView(row: IncidentEntry) {
  return {
    time: row.time,
    from_state: row.fromState,
    to_state: row.toState,
    alert_refs: row.alertRefs,
    actor: row.actor,
    note: row.note,
    reason: row.reason,
    job_id: row.jobId,
    details: row.details ?? null,
  };
}

/**
 * The detail: the incident, its metrics (each alert's observed and expected, and each scan that
 * confirmed it without a new alert), its history.
 */
export function incidentDetailView(detail: IncidentDetail) {
  const alerted = detail.metrics.map((m) => ({
    alert_id: m.id as number | null,
    job_id: m.jobId,
    metric: m.metric,
    metric_value: m.metricValue,
    metric_time: m.metricTime,
    priority: m.priority,
    observed: m.details.observed ?? null,
    expected: m.details.expected ?? null,
    ...(Array.isArray(m.details.investigation) ? { investigation: m.details.investigation } : {}),
  }));
  const confirmed = detail.history
    .filter((h) => h.jobId && h.alertRefs.length === 0 && typeof h.details?.metric === "string")
    .map((h) => ({
      alert_id: null,
      job_id: h.jobId!,
      metric: String(h.details!.metric),
      metric_value: String(h.details!.observed ?? ""),
      metric_time: h.time,
      priority: detail.incident.severity,
      observed: h.details!.observed ?? null,
      expected: h.details!.expected ?? null,
    }));
  return {
    ...incidentView(detail.incident),
    metrics: [...alerted, ...confirmed].sort((a, b) =>
      a.metric_time < b.metric_time ? -1 : a.metric_time > b.metric_time ? 1 : 0,
    ),
    history: detail.history.map(historyView),
  };
}
