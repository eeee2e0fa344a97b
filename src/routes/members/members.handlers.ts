import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import * as projects from "../../tenancy/projects";
import { writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { afterKey, listed } from "../pagination";
import type * as routes from "./members.routes";
import { memberView } from "./members.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const listProjectMembers: Handler<"listProjectMembers"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const { project } = await c.var.access.project(tenant, projectId, "PROJECT_VIEWER");
  const rows = await projects.listProjectMembers(c.var.db, project);
  return c.json(rows.map(memberView), 200);
};

/**
 * One round trip: the access check, the writes (conditioned on the same access) and the audit row
 * are one batch (Access.projectInBatch; the route's grant is checked here, not before).
 */
export const addProjectMember: Handler<"addProjectMember"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const { email, role } = c.req.valid("json");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_ADMIN");
  const add = projects.addProjectMemberStatements(
    c.var.db,
    { tenantId: tenant, id: projectId },
    email,
    role,
    check.allowed,
  );
  await writeInBatch(c, check, [...add.statements, auditInBatch(c, 201)], (batch) =>
    projects.addProjectMemberConflicts(batch, tenant, email),
  );
  auditedInBatch(c, 201);
  return c.json(memberView(add.row), 201);
};

/** One round trip, as addProjectMember. */
export const changeProjectMember: Handler<"changeProjectMember"> = async (c) => {
  const { tenant, projectId, email } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_ADMIN");
  const project = { tenantId: tenant, id: projectId };
  const change = projects.changeProjectMemberStatement(
    c.var.db,
    project,
    email,
    c.req.valid("json").role,
    check.allowed,
  );
  const [, rows] = await writeInBatch(c, check, [change, auditInBatch(c, 200)]);
  const row = projects.projectMemberChanged(tenant, rows);
  auditedInBatch(c, 200);
  return c.json(memberView(row), 200);
};

/** One round trip, as addProjectMember. */
export const removeProjectMember: Handler<"removeProjectMember"> = async (c) => {
  const { tenant, projectId, email } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_ADMIN");
  const remove = projects.removeProjectMemberStatement(
    c.var.db,
    { tenantId: tenant, id: projectId },
    email,
    check.allowed,
  );
  const [, gone] = await writeInBatch(c, check, [remove, auditInBatch(c, 200)]);
  projects.projectMemberChanged(tenant, gone);
  auditedInBatch(c, 200);
  return c.json({ message: `${email} removed from project ${projectId}` }, 200);
};

export const listTenantMembers: Handler<"listTenantMembers"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => projects.listTenantMembers(c.var.db, tenant, limit, afterKey(cursor, "string")),
    (r) => [r.userEmail],
  );
  return c.json(rows.map(memberView), 200);
};

/**
 * One round trip: the access check (Access.tenantInBatch), the update or insert (conditioned on the
 * same access), each followed by its audit row with the status it answers.
 */
export const putTenantMember: Handler<"putTenantMember"> = async (c) => {
  const { tenant, email } = c.req.valid("param");
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const put = projects.putTenantMemberStatements(c.var.db, tenant, email, c.req.valid("json").role, check.allowed);
  const [, updated, , inserted] = await writeInBatch(c, check, [
    put.update,
    auditInBatch(c, 200),
    put.insert,
    auditInBatch(c, 201),
  ]);
  const { row, created } = projects.tenantMemberPut(tenant, updated, inserted);
  auditedInBatch(c, created ? 201 : 200);
  return created ? c.json(memberView(row), 201) : c.json(memberView(row), 200);
};

/** One round trip, as putTenantMember: the user's project memberships go with it. */
export const removeTenantMember: Handler<"removeTenantMember"> = async (c) => {
  const { tenant, email } = c.req.valid("param");
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const remove = projects.removeTenantMemberStatements(c.var.db, tenant, email, check.allowed);
  const [, , gone] = await writeInBatch(c, check, [...remove, auditInBatch(c, 200)]);
  projects.tenantMemberRemoved(tenant, gone);
  auditedInBatch(c, 200);
  return c.json({ message: `${email} removed from tenant ${tenant}` }, 200);
};
