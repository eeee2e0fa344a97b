import type { JiraIntegrationRow, TicketRequestRow } from "../../db/schema";
/** The integration as GET returns it: the API token never leaves. */
export function jiraIntegrationView(row: JiraIntegrationRow) {
  return {
    base_url: row.baseUrl,
    email: row.email,
    api_token_set: true,
    default_template_id: row.defaultTemplateId,
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
