import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import * as tickets from "../../settings/tickets";
import { afterKey, takePage } from "../pagination";
import type * as routes from "./tickets.routes";
import { ticketTemplateView } from "./tickets.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const createTicketTemplate: Handler<"createTicketTemplate"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { principal } = await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const row = await tickets.createTicketTemplate(c.var.db, tenant, c.req.valid("json"), actorName(principal));
  return c.json(ticketTemplateView(row), 201);
};

export const listTicketTemplates: Handler<"listTicketTemplates"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant);
  const { limit, cursor } = c.req.valid("query");
  const rows = await tickets.listTicketTemplates(c.var.db, tenant, limit, afterKey(cursor, "number"));
  return c.json(takePage(c, rows, limit, (r) => [r.id]).map(ticketTemplateView), 200);
};

export const getTicketTemplate: Handler<"getTicketTemplate"> = async (c) => {
  const { tenant, templateId } = c.req.valid("param");
  await c.var.access.tenant(tenant);
  const row = await tickets.getTicketTemplate(c.var.db, tenant, templateId);
  return c.json(ticketTemplateView(row), 200);
};

export const updateTicketTemplate: Handler<"updateTicketTemplate"> = async (c) => {
  const { tenant, templateId } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const row = await tickets.updateTicketTemplate(c.var.db, tenant, templateId, c.req.valid("json"));
  return c.json(ticketTemplateView(row), 200);
};
