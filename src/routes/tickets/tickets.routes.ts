import { z } from "@hono/zod-openapi";
import { inTenant, onIncident, onIncidentInBatch } from "../access";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse } from "../openapi";
import { PageQuery } from "../pagination";
import { IntId, TenantParams } from "../params";
import {
  CreateTicketBody,
  CreateTicketTemplateBody,
  TicketRequestSchema,
  TicketTemplateSchema,
  UpdateTicketTemplateBody,
} from "./tickets.schemas";

const tags = ["Ticket templates"];
// The spec roots this path at the tenant id, without /api/backend.
const base = "/{tenant}/configuration/integrations/tickets/template";
const templateParams = TenantParams.extend({ templateId: IntId("templateId") });

export const createTicketTemplate = authedRoute({
  operationId: "createTicketTemplate",
  access: inTenant("TENANT_ADMIN"),
  method: "post",
  path: base,
  tags,
  summary: "Create a ticket template (TENANT_ADMIN); names are unique in the tenant",
  request: { params: TenantParams, body: jsonBody(CreateTicketTemplateBody) },
  responses: { 201: jsonResponse(TicketTemplateSchema, "Created"), ...CONFLICT_RESPONSE },
});

export const listTicketTemplates = authedRoute({
  operationId: "listTicketTemplates",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: base,
  tags,
  summary: "List the tenant's ticket templates (any tenant member)",
  request: { params: TenantParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(TicketTemplateSchema), "Templates, by id") },
});

export const getTicketTemplate = authedRoute({
  operationId: "getTicketTemplate",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: `${base}/{templateId}`,
  tags,
  summary: "Get a ticket template (any tenant member)",
  request: { params: templateParams },
  responses: { 200: jsonResponse(TicketTemplateSchema, "The template") },
});

export const updateTicketTemplate = authedRoute({
  operationId: "updateTicketTemplate",
  access: inTenant("TENANT_ADMIN"),
  method: "put",
  path: `${base}/{templateId}`,
  tags,
  summary: "Replace a ticket template (TENANT_ADMIN)",
  description:
    "Body: name, description (opt), jira_project_id, jira_issue_type_id, custom_fields (opt); " +
    "the create shape with type and props is accepted too. The template is replaced whole.",
  request: { params: templateParams, body: jsonBody(UpdateTicketTemplateBody) },
  responses: { 200: jsonResponse(TicketTemplateSchema, "Replaced"), ...CONFLICT_RESPONSE },
});

// An incident's tickets: Jira issues opened from a template.
const ticketTags = ["Integrations"];
const ticketsPath = "/api/backend/{tenant}/incidents/{incidentId}/tickets";
const incidentParams = TenantParams.extend({ incidentId: IntId("incidentId") });

export const createTicket = authedRoute({
  operationId: "createTicket",
  access: onIncidentInBatch("PROJECT_EDITOR"),
  method: "post",
  path: ticketsPath,
  tags: ticketTags,
  summary: "Open a Jira issue for an incident from a ticket template (PROJECT_EDITOR)",
  description:
    "Records a ticket request and tries Jira once. status CREATED: the key is on the incident; PENDING: " +
    "Jira was unreachable, rate-limited or failing, retried with backoff; FAILED: Jira refused, error says why. " +
    "While a request is PENDING or CREATED, that request is returned instead of a new one.",
  request: { params: incidentParams, body: jsonBody(CreateTicketBody) },
  responses: { 201: jsonResponse(TicketRequestSchema, "The ticket request"), ...CONFLICT_RESPONSE },
});

export const listTickets = authedRoute({
  operationId: "listTickets",
  access: onIncident("PROJECT_VIEWER"),
  method: "get",
  path: ticketsPath,
  tags: ticketTags,
  summary: "An incident's ticket requests, oldest first (PROJECT_VIEWER)",
  request: { params: incidentParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(TicketRequestSchema), "Ticket requests") },
});
