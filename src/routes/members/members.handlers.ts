import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import * as projects from "../../tenancy/projects";
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

export const addProjectMember: Handler<"addProjectMember"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const { project } = await c.var.access.project(tenant, projectId, "PROJECT_ADMIN");
  const { email, role } = c.req.valid("json");
  const row = await projects.addProjectMember(c.var.db, project, email, role);
  return c.json(memberView(row), 201);
};

export const changeProjectMember: Handler<"changeProjectMember"> = async (c) => {
  const { tenant, projectId, email } = c.req.valid("param");
  const { project } = await c.var.access.project(tenant, projectId, "PROJECT_ADMIN");
  const row = await projects.changeProjectMember(c.var.db, project, email, c.req.valid("json").role);
  return c.json(memberView(row), 200);
};

export const removeProjectMember: Handler<"removeProjectMember"> = async (c) => {
  const { tenant, projectId, email } = c.req.valid("param");
  const { project } = await c.var.access.project(tenant, projectId, "PROJECT_ADMIN");
  await projects.removeProjectMember(c.var.db, project, email);
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

export const putTenantMember: Handler<"putTenantMember"> = async (c) => {
  const { tenant, email } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const { row, created } = await projects.putTenantMember(c.var.db, tenant, email, c.req.valid("json").role);
  return created ? c.json(memberView(row), 201) : c.json(memberView(row), 200);
};

export const removeTenantMember: Handler<"removeTenantMember"> = async (c) => {
  const { tenant, email } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  await projects.removeTenantMember(c.var.db, tenant, email);
  return c.json({ message: `${email} removed from tenant ${tenant}` }, 200);
};
