import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import * as tickets from "../../integrations/tickets";
import { secretBox } from "../../lib/crypto";
import { writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import type * as routes from "./jira.routes";
import { jiraIntegrationView } from "./jira.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const putJiraIntegration: Handler<"putJiraIntegration"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const box = secretBox(c.env.ENCRYPTION_KEYS);
  // One round trip: the current row, the write and its audit row, as 201 or 200 by what the write
  // will do (each audit statement runs before it, under the condition that it creates or replaces).
  const { row, created } = await tickets.putJiraIntegration(
    c.var.db,
    box,
    tenant,
    c.req.valid("json"),
    undefined,
    (will) => [auditInBatch(c, 201, will.create), auditInBatch(c, 200, will.replace)],
  );
  auditedInBatch(c, created ? 201 : 200);
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
  // One round trip: the access check, the delete (conditioned on it) and its audit row (written if it deleted).
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const remove = tickets.deleteJiraIntegrationStatement(c.var.db, tenant, check.allowed);
  const [, gone] = await writeInBatch(c, check, [remove, auditInBatch(c, 200)]);
  tickets.jiraIntegrationDeleted(gone);
  auditedInBatch(c, 200);
  return c.json({ message: "Jira integration removed" }, 200);
};
