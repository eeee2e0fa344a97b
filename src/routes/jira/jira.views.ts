import type { JiraIntegrationRow } from "../../db/schema";
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
