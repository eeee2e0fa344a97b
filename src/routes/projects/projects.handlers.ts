import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import { NotFoundError } from "../../lib/errors";
import * as projects from "../../tenancy/projects";
import { settleInBatch, writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { afterKey, listed } from "../pagination";
import type * as routes from "./projects.routes";
import { projectView } from "./projects.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/**
 * One round trip: the access check (Access.tenantInBatch), the project and its creator's
 * membership (conditioned on the same access) and the audit row are one batch.
 */
export const createProject: Handler<"createProject"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const input = c.req.valid("json");
  const principal = c.var.principal;
  const adminEmail = principal.kind === "user" ? principal.email : undefined;
  const check = c.var.access.tenantInBatch(tenant, "TENANT_MEMBER");
  const create = projects.createProjectStatements(
    c.var.db,
    tenant,
    input,
    actorName(principal),
    adminEmail,
    check.allowed,
  );
  const audit = auditInBatch(c, 201);
  const [, rows] = await writeInBatch(
    c,
    check,
    [create.insert, audit, ...(create.member ? [create.member] : [])],
    (batch) => projects.createProjectConflicts(batch, input),
  );
  const row = projects.projectCreated(tenant, rows);
  auditedInBatch(c, 201);
  return c.json(projectView(row), 201);
};

export const listProjects: Handler<"listProjects"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const ids = await c.get("access").readableProjectIds(tenant);
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => projects.listProjects(c.get("db"), tenant, ids, limit, afterKey(cursor, "number")),
    (r) => [r.id],
  );
  return c.json(rows.map(projectView), 200);
};

export const getProject: Handler<"getProject"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const { project } = await c.var.access.project(tenant, projectId, "PROJECT_VIEWER");
  return c.json(projectView(project), 200);
};

/**
 * One round trip: the access check, the update (conditioned on the same access) and its audit row
 * are one batch (Access.projectInBatch; the route's grant is checked here, not before).
 */
export const updateProject: Handler<"updateProject"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const changes = c.req.valid("json");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_ADMIN");
  const update = projects.updateProjectStatement(c.var.db, tenant, projectId, changes, check.allowed);
  const audit = auditInBatch(c, 200);
  const [access, updated] = await projects.updateProjectConflicts(c.var.db.batch([check.read, update, audit]), changes);
  settleInBatch(c, () => check.settle(access));
  // The check passed on the state the update saw, so the update matched the project.
  const row = updated[0];
  if (!row) throw new NotFoundError("Project");
  auditedInBatch(c, 200);
  return c.json(projectView(row), 200);
};

/**
 * One round trip: the access check, the delete (conditioned on the same access) and its audit row
 * are one batch, as updateProject. The check passed on the state the delete saw, so a delete that
 * removed nothing was refused by the project's assets or source groups (409).
 */
export const deleteProject: Handler<"deleteProject"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_ADMIN");
  const remove = projects.deleteProjectStatement(c.var.db, tenant, projectId, check.allowed);
  const [access, gone] = await c.var.db.batch([check.read, remove, auditInBatch(c, 200)]);
  settleInBatch(c, () => check.settle(access));
  projects.projectDeleted(tenant, gone);
  auditedInBatch(c, 200);
  return c.json({ message: `Project ${projectId} deleted` }, 200);
};
