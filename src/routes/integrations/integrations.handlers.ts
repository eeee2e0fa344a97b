import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import * as tickets from "../../integrations/tickets";
import { secretBox } from "../../lib/crypto";
import { incidentWithAccess } from "../incidents/incidents.handlers";
import { decodeCursor, takePage } from "../pagination";
import { ApiError } from "../problems";
import type * as routes from "./integrations.routes";
import { jiraIntegrationView, ticketRequestView } from "./integrations.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const putJiraIntegration: Handler<"putJiraIntegration"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const box = secretBox(c.env.ENCRYPTION_KEYS);
  const { row, created } = await tickets.putJiraIntegration(c.var.db, box, tenant, c.req.valid("json"));
  const view = jiraIntegrationView(row);
  return created ? c.json(view, 201) : c.json(view, 200);
};

export const getJiraIntegration: Handler<"getJiraIntegration"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  return c.json(jiraIntegrationView(await tickets.getJiraIntegration(c.var.db, tenant)), 200);
};

export const deleteJiraIntegration: Handler<"deleteJiraIntegration"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  await tickets.deleteJiraIntegration(c.var.db, tenant);
  return c.json({ message: "Jira integration removed" }, 200);
};

export const createTicket: Handler<"createTicket"> = async (c) => {
  const { tenant, incidentId } = c.req.valid("param");
  await incidentWithAccess(c.var.access, c.var.db, tenant, incidentId, "PROJECT_EDITOR");
  const row = await tickets.requestTicket(c.env, {
    tenantId: tenant,
    incidentId,
    templateId: c.req.valid("json").template_id,
    actor: actorName(c.var.principal),
  });
  return c.json(ticketRequestView(row), 201);
};

export const listTickets: Handler<"listTickets"> = async (c) => {
  const { tenant, incidentId } = c.req.valid("param");
  await incidentWithAccess(c.var.access, c.var.db, tenant, incidentId, "PROJECT_VIEWER");
  const { limit, cursor } = c.req.valid("query");
  let after: { createdAt: string; id: string } | undefined;
  if (cursor !== undefined) {
    const [createdAt, id, ...rest] = decodeCursor(cursor);
    if (typeof createdAt !== "string" || typeof id !== "string" || rest.length > 0) {
      throw ApiError.badRequest("Invalid cursor", [{ path: "query.cursor", message: "not a cursor of this list" }]);
    }
    after = { createdAt, id };
  }
  const rows = await tickets.listTicketRequests(c.var.db, tenant, incidentId, limit, after);
  return c.json(takePage(c, rows, limit, (r) => [r.createdAt, r.id]).map(ticketRequestView), 200);
};
