import type { AlertRow } from "../../db/schema";
/** An alert as the API returns it: every field of spec 2.6, then the explanation. */
export function alertView(row: AlertRow) {
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
    metric: row.metric,
    details: row.details,
  };
}
