import type { IncidentHistoryRow, IncidentRow } from "../../db/schema";
import type { IncidentDetail } from "../../incidents/incidents";
/** An incident as the list and the detail show it. */
export function incidentView(row: IncidentRow) {
  return {
    id: row.id,
    asset_id: String(row.assetId),
    project_id: row.projectId,
    connection_id: row.connectionId,
    connection_type: row.connectionType,
    source_name: row.sourceName,
    alert_policy_id: row.policy,
    policy_name: row.policyName,
    attribute: row.attribute === "" ? null : row.attribute,
    state: row.state,
    severity: row.severity,
    impact: row.impact,
    tag: row.tag,
    alert_count: row.alertCount,
    clean_scans: row.cleanScans,
    level_scans: row.levelScans,
    opened_at: row.openedAt,
    last_alert_at: row.lastAlertAt,
    closed_at: row.closedAt,
    close_reason: row.closeReason,
    first_response_at: row.firstResponseAt,
    ticket: row.ticketKey ? { key: row.ticketKey, url: row.ticketUrl } : null,
  };
}

export function historyView(row: IncidentHistoryRow) {
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
