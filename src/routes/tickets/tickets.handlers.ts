import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import * as tickets from "../../integrations/tickets";
import * as templates from "../../settings/tickets";
import { settleInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { afterKey, decodeCursor, listed } from "../pagination";
import { ApiError } from "../problems";
import type * as routes from "./tickets.routes";
import { ticketRequestView, ticketTemplateView } from "./tickets.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const createTicketTemplate: Handler<"createTicketTemplate"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { principal } = await c.var.access.tenant(tenant, "TENANT_ADMIN");
  // One round trip: the insert and its audit row (written if it inserted).
  const row = await templates.createTicketTemplate(c.var.db, tenant, c.req.valid("json"), actorName(principal), [
    auditInBatch(c, 201),
  ]);
  auditedInBatch(c, 201);
  return c.json(ticketTemplateView(row), 201);
};

export const listTicketTemplates: Handler<"listTicketTemplates"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant);
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => templates.listTicketTemplates(c.var.db, tenant, limit, afterKey(cursor, "number")),
    (r) => [r.id],
  );
  return c.json(rows.map(ticketTemplateView), 200);
};

export const getTicketTemplate: Handler<"getTicketTemplate"> = async (c) => {
  const { tenant, templateId } = c.req.valid("param");
  await c.var.access.tenant(tenant);
  const row = await templates.getTicketTemplate(c.var.db, tenant, templateId);
  return c.json(ticketTemplateView(row), 200);
};

export const updateTicketTemplate: Handler<"updateTicketTemplate"> = async (c) => {
  const { tenant, templateId } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  // One round trip: the update and its audit row (written if it updated).
  const row = await templates.updateTicketTemplate(c.var.db, tenant, templateId, c.req.valid("json"), [
    auditInBatch(c, 200),
  ]);
  auditedInBatch(c, 200);
  return c.json(ticketTemplateView(row), 200);
};

/**
 * Two round trips, the floor: Jira is called between them. The access check, what the request
 * needs (integration, template, incident), the request's insert (conditioned on the same access)
 * with its first attempt's claim, and the audit row are one batch; Jira's answer is recorded in the
 * second. The call needs the sealed token and the template read by the first, and its outcome is
 * what the second writes.
 */
export const createTicket: Handler<"createTicket"> = async (c) => {
  const { tenant, incidentId } = c.req.valid("param");
  const check = c.var.access.incidentInBatch(tenant, incidentId, "PROJECT_EDITOR");
  const row = await tickets.requestTicket(
    c.env,
    {
      tenantId: tenant,
      incidentId,
      templateId: c.req.valid("json").template_id,
      actor: actorName(c.var.principal),
    },
    c.var.db,
    {
      read: check.read,
      allowed: check.allowed,
      settle: (rows) => settleInBatch(c, () => check.settle(rows as Awaited<typeof check.read>)),
      audit: (when) => auditInBatch(c, 201, when),
    },
  );
  auditedInBatch(c, 201);
  return c.json(ticketRequestView(row), 201);
};

function requestsAfter(cursor: string | undefined): { createdAt: string; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const [createdAt, id, ...rest] = decodeCursor(cursor);
  if (typeof createdAt !== "string" || typeof id !== "string" || rest.length > 0) {
    throw ApiError.badRequest("Invalid cursor", [{ path: "query.cursor", message: "not a cursor of this list" }]);
  }
  return { createdAt, id };
}

export const listTickets: Handler<"listTickets"> = async (c) => {
  const { tenant, incidentId } = c.req.valid("param");
  await c.var.access.incident(tenant, incidentId, "PROJECT_VIEWER");
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => tickets.listTicketRequests(c.var.db, tenant, incidentId, limit, requestsAfter(cursor)),
    (r) => [r.createdAt, r.id],
  );
  return c.json(rows.map(ticketRequestView), 200);
};
