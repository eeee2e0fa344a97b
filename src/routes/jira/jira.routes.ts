import { inTenant, inTenantInBatch } from "../access";
import { authedRoute, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { TenantParams } from "../params";
import { JiraIntegrationSchema, PutJiraIntegrationBody } from "./jira.schemas";

const tags = ["Integrations"];
const jiraPath = "/api/backend/{tenant}/configuration/integrations/jira";

export const putJiraIntegration = authedRoute({
  operationId: "putJiraIntegration",
  access: inTenant("TENANT_ADMIN"),
  method: "put",
  path: jiraPath,
  tags,
  summary: "Create or replace the tenant's Jira Cloud integration (TENANT_ADMIN)",
  request: { params: TenantParams, body: jsonBody(PutJiraIntegrationBody) },
  responses: {
    200: jsonResponse(JiraIntegrationSchema, "Replaced"),
    201: jsonResponse(JiraIntegrationSchema, "Created"),
  },
});

export const getJiraIntegration = authedRoute({
  operationId: "getJiraIntegration",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: jiraPath,
  tags,
  summary: "The tenant's Jira integration, without its API token (TENANT_ADMIN)",
  request: { params: TenantParams },
  responses: { 200: jsonResponse(JiraIntegrationSchema, "The integration") },
});

export const deleteJiraIntegration = authedRoute({
  operationId: "deleteJiraIntegration",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "delete",
  path: jiraPath,
  tags,
  summary: "Remove the tenant's Jira integration (TENANT_ADMIN)",
  request: { params: TenantParams },
  responses: { 200: jsonResponse(MessageSchema, "Removed") },
});
