import type { TicketRequestRow, TicketTemplateRow } from "../../db/schema";
import type { JiraProps } from "../../settings/tickets";
export function ticketTemplateView(row: TicketTemplateRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    props: row.props as unknown as JiraProps,
    created_by: row.createdBy,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function ticketRequestView(row: TicketRequestRow) {
  return {
    request_id: row.id,
    incident_id: row.incidentId,
    template_id: row.templateId,
    status: row.status,
    attempts: row.attempts,
    ticket_key: row.ticketKey,
    error: row.error,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
