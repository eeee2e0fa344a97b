import type { IncidentRow, KeptAlert } from "../db/schema";
import { segmentOf } from "./segments";

/**
 * An incident as the list shows it: the API's incident fields, and the incident a notification
 * carries (the same object, so a receiver can use one parser for both).
 */
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
    segment: segmentOf(row.segment) ?? null,
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

/** An alert as the API returns it (every field of spec 2.6, then the explanation), and as a notification carries it. */
export function alertView(row: KeptAlert & { assetId: number }) {
  return {
    type: row.type,
    source: String(row.assetId),
    description: row.description,
    job_id: row.jobId,
    create_time: row.createTime,
    save_time: row.saveTime,
    is_notification_enabled: row.isNotificationEnabled,
    metric_time: row.metricTime,
    metric_value: row.metricValue,
    policy_name: row.policyName,
    priority: row.priority,
    source_name: row.sourceName,
    source_type: row.sourceType,
    id: row.id,
    attribute: row.attribute === "" ? null : row.attribute,
    segment: segmentOf(row.segment) ?? null,
    metric: row.metric,
    details: row.details,
  };
}
