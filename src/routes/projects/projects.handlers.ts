import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import * as projects from "../../tenancy/projects";
import { afterKey, listed } from "../pagination";
import type * as routes from "./projects.routes";
import { projectView } from "./projects.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const createProject: Handler<"createProject"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { principal } = await c.var.access.tenant(tenant);
  const adminEmail = principal.kind === "user" ? principal.email : undefined;
  const row = await projects.createProject(c.var.db, tenant, c.req.valid("json"), actorName(principal), adminEmail);
  return c.json(projectView(row), 201);
};

export const listProjects: Handler<"listProjects"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const ids = await c.var.access.readableProjectIds(tenant);
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => projects.listProjects(c.var.db, tenant, ids, limit, afterKey(cursor, "number")),
    (r) => [r.id],
  );
  return c.json(rows.map(projectView), 200);
};

export const getProject: Handler<"getProject"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const { project } = await c.var.access.project(tenant, projectId, "PROJECT_VIEWER");
  return c.json(projectView(project), 200);
};

export const updateProject: Handler<"updateProject"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const { project } = await c.var.access.project(tenant, projectId, "PROJECT_ADMIN");
  const row = await projects.updateProject(c.var.db, project, c.req.valid("json"));
  return c.json(projectView(row), 200);
};

export const deleteProject: Handler<"deleteProject"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const { project } = await c.var.access.project(tenant, projectId, "PROJECT_ADMIN");
  await projects.deleteProject(c.var.db, project);
  return c.json({ message: `Project ${projectId} deleted` }, 200);
};
