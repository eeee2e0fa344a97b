import type { ChannelRow, DeliveryRow } from "../../notifications/channels";

/** A channel as the API shows it: its URL's scheme and host only, never its signing secret. */
export function channelView(row: ChannelRow) {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    url: row.url,
    events: row.events,
    min_severity: row.minSeverity,
    project_ids: row.projectIds,
    enabled: row.enabled,
    secret_set: row.signingSecret !== null,
    created_by: row.createdBy,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function deliveryView(row: DeliveryRow) {
  return {
    id: row.id,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
