import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../db";
import { alerts } from "../db/schema";

export type AlertRow = typeof alerts.$inferSelect;

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

/** The alerts one job raised for one asset, in a stable order. */
export function alertsOfJob(db: Db, tenantId: string, assetId: number, jobId: string) {
  return db.query.alerts.findMany({
    where: and(eq(alerts.tenantId, tenantId), eq(alerts.assetId, assetId), eq(alerts.jobId, jobId)),
    orderBy: asc(alerts.id),
  });
}
