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
  };
}

/** The detail: the incident, the metrics of its alerts (observed and expected from each alert's details), its history. */
export function incidentDetailView(detail: IncidentDetail) {
  return {
    ...incidentView(detail.incident),
    metrics: detail.metrics.map((m) => ({
      alert_id: m.id,
      job_id: m.jobId,
      metric: m.metric,
      metric_value: m.metricValue,
      metric_time: m.metricTime,
      priority: m.priority,
      observed: m.details.observed ?? null,
      expected: m.details.expected ?? null,
    })),
    history: detail.history.map(historyView),
  };
}
