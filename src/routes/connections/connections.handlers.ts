import type { RouteHandler } from "@hono/zod-openapi";
import type { SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import type { TenantAccess } from "../../auth/access";
import { actorName } from "../../auth/principal";
import type { ConnectionDefinition } from "../../catalog/connections";
import * as connections from "../../catalog/connections";
import type { ConnectionRow } from "../../db/schema";
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
 * A whole replacement (type, payload and credential sent) is one round trip: the access check,
 * the reads of the stored connection, its namesakes and its assets, the UPDATE (conditioned on
 * the same access and on every check of the change: connections.replaceConnectionStatements) and
 * its audit row are one batch, the answer read from what the batch saw. A partial change is two:
 * what it may be depends on what is stored (a payload kept for a new type is parsed, a kept
 * credential checked against a new address in the Worker), so the check and the reads come first,
 * then the UPDATE and its audit row.
 */
async function updated<R extends BatchItem<"sqlite">, A extends TenantAccess>(
  c: Context<AppEnv>,
  check: InBatchCheck<R, A> & { allowed: SQL | undefined },
  visibility: connections.ConnectionVisibility,
  connectionId: number,
  changes: connections.ConnectionChanges,
  /** SQL: the caller may change a GLOBAL connection (a tenant admin); undefined when the check says so already. */
  global: SQL | undefined,
) {
  const { db } = c.var;
  const tenant = c.req.param("tenant")!;
  const box = secretBox(c.env.ENCRYPTION_KEYS);
  const policy = outboundPolicy(c.env);
  const changeable = (role: string, row: ConnectionRow) => {
    // A GLOBAL connection seen from a project belongs to the tenant: only a tenant admin changes it.
    if (row.projectId === null && role !== "TENANT_ADMIN") throw new ForbiddenError("This needs the TENANT_ADMIN role");
  };
  if (connections.replacesWhole(changes)) {
    const replace = await connections.replaceConnectionStatements(
      db,
      box,
      tenant,
      visibility,
      connectionId,
      changes,
      policy,
      check.allowed,
      global,
    );
    const [access, rows, namesakes, users, written] = await replace.claim(
      db.batch([
        check.read,
        replace.connection,
        replace.namesakes,
        replace.usedBy,
        replace.write,
        auditInBatch(c, 200),
      ] as unknown as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]),
    );
    const { role } = settleInBatch(c, () => check.settle(access as Awaited<R>));
    const row = connections.connectionFound(rows as ConnectionRow[]);
    changeable(role, row);
    const replaced = connections.connectionReplaced(
      row,
      changes,
      policy,
      namesakes as unknown[],
      users as { id: number }[],
      written as ConnectionRow[],
    );
    auditedInBatch(c, 200);
    return connectionView(replaced);
  }
  const [access, rows, namesakes] = await db.batch([
    check.read,
    connections.connectionQuery(db, tenant, visibility, connectionId),
    connections.namesakesQuery(db, tenant, connectionId, changes.name ?? ""),
  ]);
  const { role } = settleInBatch(c, () => check.settle(access as Awaited<R>));
  const row = connections.connectionFound(rows);
  changeable(role, row);
  const audit = auditInBatch(c, 200);
  const written = await connections.updateConnection(db, box, row, namesakes, changes, policy, [audit]);
  auditedInBatch(c, 200);
  return connectionView(written);
}

export const updateProjectConnection: Handler<"updateProjectConnection"> = async (c) => {
  const { tenant, projectId, connectionId } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  const global = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN").allowed;
  return c.json(await updated(c, check, { projectId }, connectionId, c.req.valid("json"), global), 200);
};

export const updateConnection: Handler<"updateConnection"> = async (c) => {
  const { tenant, connectionId } = c.req.valid("param");
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const visibility = { projectIds: undefined };
  return c.json(await updated(c, check, visibility, connectionId, c.req.valid("json"), undefined), 200);
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
