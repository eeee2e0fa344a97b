import { z } from "@hono/zod-openapi";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse } from "../openapi";
import { PageQuery } from "../pagination";
import { IntId, TenantParams } from "../params";
import { CreateTicketTemplateBody, TicketTemplateSchema, UpdateTicketTemplateBody } from "./tickets.schemas";

const tags = ["Ticket templates"];
// The spec roots this path at the tenant id, without /api/backend.
const base = "/{tenant}/configuration/integrations/tickets/template";
const templateParams = TenantParams.extend({ templateId: IntId("templateId") });

export const createTicketTemplate = authedRoute({
  method: "post",
  path: base,
  tags,
  summary: "Create a ticket template (TENANT_ADMIN); names are unique in the tenant",
  request: { params: TenantParams, body: jsonBody(CreateTicketTemplateBody) },
  responses: { 201: jsonResponse(TicketTemplateSchema, "Created"), ...CONFLICT_RESPONSE },
});

export const listTicketTemplates = authedRoute({
  method: "get",
  path: base,
  tags,
  summary: "List the tenant's ticket templates (any tenant member)",
  request: { params: TenantParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(TicketTemplateSchema), "Templates, by id") },
});

export const getTicketTemplate = authedRoute({
  method: "get",
  path: `${base}/{templateId}`,
  tags,
  summary: "Get a ticket template (any tenant member)",
  request: { params: templateParams },
  responses: { 200: jsonResponse(TicketTemplateSchema, "The template") },
});

export const updateTicketTemplate = authedRoute({
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
