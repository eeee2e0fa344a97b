import type { RouteHandler } from "@hono/zod-openapi";
import type { SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import type { TenantAccess } from "../../auth/access";
import { actorName } from "../../auth/principal";
import type { ConnectionDefinition } from "../../catalog/connections";
import * as connections from "../../catalog/connections";
import { secretBox } from "../../lib/crypto";
import { ForbiddenError } from "../../lib/errors";
import { outboundPolicy } from "../../lib/outbound";
import { type InBatchCheck, settleInBatch, writeChecked } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
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

/**
 * Two round trips: the access check, the connection and any namesake of the name sent are read in
 * one batch; the change is checked against the stored connection (its type, payload, credential
 * type and address) and a new credential sealed in the Worker, then the UPDATE and its audit row
 * are one batch. The read must come first: what the change may be depends on what is stored.
 */
async function updated<R extends BatchItem<"sqlite">, A extends TenantAccess>(
  c: Context<AppEnv>,
  check: InBatchCheck<R, A>,
  visibility: connections.ConnectionVisibility,
  connectionId: number,
  changes: connections.ConnectionChanges,
) {
  const { db } = c.var;
  const tenant = c.req.param("tenant")!;
  const [access, rows, namesakes] = await db.batch([
    check.read,
    connections.connectionQuery(db, tenant, visibility, connectionId),
    connections.namesakesQuery(db, tenant, connectionId, changes.name ?? ""),
  ]);
  const { role } = settleInBatch(c, () => check.settle(access as Awaited<R>));
  const row = connections.connectionFound(rows);
  // A GLOBAL connection seen from a project belongs to the tenant: only a tenant admin changes it.
  if (row.projectId === null && role !== "TENANT_ADMIN") throw new ForbiddenError("This needs the TENANT_ADMIN role");
  const box = secretBox(c.env.ENCRYPTION_KEYS);
  const audit = auditInBatch(c, 200);
  const written = await connections.updateConnection(db, box, row, namesakes, changes, outboundPolicy(c.env), [audit]);
  auditedInBatch(c, 200);
  return connectionView(written);
}

export const updateProjectConnection: Handler<"updateProjectConnection"> = async (c) => {
  const { tenant, projectId, connectionId } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  return c.json(await updated(c, check, { projectId }, connectionId, c.req.valid("json")), 200);
};

export const updateConnection: Handler<"updateConnection"> = async (c) => {
  const { tenant, connectionId } = c.req.valid("param");
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  return c.json(await updated(c, check, { projectIds: undefined }, connectionId, c.req.valid("json")), 200);
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
