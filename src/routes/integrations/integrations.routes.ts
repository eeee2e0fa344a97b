import { z } from "@hono/zod-openapi";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { PageQuery } from "../pagination";
import { IntId, TenantParams } from "../params";
import {
  CreateTicketBody,
  JiraIntegrationSchema,
  PutJiraIntegrationBody,
  TicketRequestSchema,
} from "./integrations.schemas";

const tags = ["Integrations"];
const jiraPath = "/api/backend/{tenant}/configuration/integrations/jira";
const ticketsPath = "/api/backend/{tenant}/incidents/{incidentId}/tickets";
const incidentParams = TenantParams.extend({ incidentId: IntId("incidentId") });

export const putJiraIntegration = authedRoute({
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
  method: "get",
  path: jiraPath,
  tags,
  summary: "The tenant's Jira integration, without its API token (TENANT_ADMIN)",
  request: { params: TenantParams },
  responses: { 200: jsonResponse(JiraIntegrationSchema, "The integration") },
});

export const deleteJiraIntegration = authedRoute({
  method: "delete",
  path: jiraPath,
  tags,
  summary: "Remove the tenant's Jira integration (TENANT_ADMIN)",
  request: { params: TenantParams },
  responses: { 200: jsonResponse(MessageSchema, "Removed") },
});

export const createTicket = authedRoute({
  method: "post",
  path: ticketsPath,
  tags,
  summary: "Open a Jira issue for an incident from a ticket template (PROJECT_EDITOR)",
  description:
    "Records a ticket request and tries Jira once. status CREATED: the key is on the incident; PENDING: " +
    "Jira was unreachable, rate-limited or failing, retried with backoff; FAILED: Jira refused, error says why. " +
    "While a request is PENDING or CREATED, that request is returned instead of a new one.",
  request: { params: incidentParams, body: jsonBody(CreateTicketBody) },
  responses: { 201: jsonResponse(TicketRequestSchema, "The ticket request"), ...CONFLICT_RESPONSE },
});

export const listTickets = authedRoute({
  method: "get",
  path: ticketsPath,
  tags,
  summary: "An incident's ticket requests, oldest first (PROJECT_VIEWER)",
  request: { params: incidentParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(TicketRequestSchema), "Ticket requests") },
});
