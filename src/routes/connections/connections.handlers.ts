import type { RouteHandler } from "@hono/zod-openapi";
import type { SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import type { ConnectionDefinition } from "../../catalog/connections";
import * as connections from "../../catalog/connections";
import { secretBox } from "../../lib/crypto";
import { outboundPolicy } from "../../lib/outbound";
import { type InBatchCheck, writeChecked } from "../access";
import { afterKey, listed } from "../pagination";
import type * as routes from "./connections.routes";
import { connectionView } from "./connections.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/**
 * One round trip: the access check, the INSERT (conditioned on the same access; the name's unique
 * index answers a clash, 409) and its audit row are one batch.
 */
async function created<R extends BatchItem<"sqlite">, A>(
  c: Context<AppEnv>,
  tenant: string,
  projectId: number | null,
  input: ConnectionDefinition,
  check: InBatchCheck<R, A> & { allowed: SQL | undefined },
) {
  const create = await connections.createConnectionStatement(
    c.var.db,
    secretBox(c.env.ENCRYPTION_KEYS),
    tenant,
    projectId,
    input,
    actorName(c.var.principal),
    outboundPolicy(c.env),
    check.allowed,
  );
  const { results } = await writeChecked(c, check, [create.insert], { status: 201 }, create.claim);
  return connectionView(connections.connectionCreated(results[0]));
}

export const createProjectConnection: Handler<"createProjectConnection"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  return c.json(await created(c, tenant, projectId, c.req.valid("json"), check), 201);
};

export const createGlobalConnection: Handler<"createGlobalConnection"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  return c.json(await created(c, tenant, null, c.req.valid("json"), check), 201);
};

export const updateProjectConnection: Handler<"updateProjectConnection"> = async (c) => {
  const { tenant, projectId, connectionId } = c.req.valid("param");
  await c.var.access.project(tenant, projectId, "PROJECT_EDITOR");
  const row = await connections.getConnection(c.var.db, tenant, { projectId }, connectionId);
  // A GLOBAL connection seen from a project belongs to the tenant: only a tenant admin changes it.
  if (row.projectId === null) await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const updated = await connections.updateConnection(
    c.var.db,
    secretBox(c.env.ENCRYPTION_KEYS),
    row,
    c.req.valid("json"),
    outboundPolicy(c.env),
  );
  return c.json(connectionView(updated), 200);
};

export const updateConnection: Handler<"updateConnection"> = async (c) => {
  const { tenant, connectionId } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const row = await connections.getConnection(c.var.db, tenant, { projectIds: undefined }, connectionId);
  const updated = await connections.updateConnection(
    c.var.db,
    secretBox(c.env.ENCRYPTION_KEYS),
    row,
    c.req.valid("json"),
    outboundPolicy(c.env),
  );
  return c.json(connectionView(updated), 200);
};

export const listProjectConnections: Handler<"listProjectConnections"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  await c.var.access.project(tenant, projectId, "PROJECT_VIEWER");
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => connections.listConnections(c.var.db, tenant, { projectId }, limit, afterKey(cursor, "number")),
    (r) => [r.id],
  );
  return c.json(rows.map(connectionView), 200);
};

export const listConnections: Handler<"listConnections"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const projectIds = await c.var.access.readableProjectIds(tenant);
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => connections.listConnections(c.var.db, tenant, { projectIds }, limit, afterKey(cursor, "number")),
    (r) => [r.id],
  );
  return c.json(rows.map(connectionView), 200);
};

export const getProjectConnection: Handler<"getProjectConnection"> = async (c) => {
  const { tenant, projectId, connectionId } = c.req.valid("param");
  await c.var.access.project(tenant, projectId, "PROJECT_VIEWER");
  const row = await connections.getConnection(c.var.db, tenant, { projectId }, connectionId);
  return c.json(connectionView(row), 200);
};

export const getConnection: Handler<"getConnection"> = async (c) => {
  const { tenant, connectionId } = c.req.valid("param");
  const projectIds = await c.var.access.readableProjectIds(tenant);
  const row = await connections.getConnection(c.var.db, tenant, { projectIds }, connectionId);
  return c.json(connectionView(row), 200);
};
