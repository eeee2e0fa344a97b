import { z } from "@hono/zod-openapi";
import { inProject, inProjectInBatch, inTenant, inTenantInBatch } from "../access";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { PageQuery } from "../pagination";
import { ProjectParams, TenantParams } from "../params";
import { CreateProjectBody, ProjectSchema, UpdateProjectBody } from "./projects.schemas";

const tags = ["Projects"];
const base = "/api/backend/{tenant}/configuration";

export const createProject = authedRoute({
  operationId: "createProject",
  access: inTenantInBatch("TENANT_MEMBER"),
  method: "post",
  path: `${base}/projects`,
  tags,
  summary: "Create a project (any tenant member; a creating user becomes its PROJECT_ADMIN)",
  request: { params: TenantParams, body: jsonBody(CreateProjectBody) },
  responses: { 201: jsonResponse(ProjectSchema, "Created"), ...CONFLICT_RESPONSE },
});

export const listProjects = authedRoute({
  operationId: "listProjects",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: `${base}/projects`,
  tags,
  summary: "List the projects the caller can read",
  request: { params: TenantParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(ProjectSchema), "Projects, by id") },
});

export const getProject = authedRoute({
  operationId: "getProject",
  access: inProject("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/projects/{projectId}`,
  tags,
  summary: "Get a project (PROJECT_VIEWER)",
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(ProjectSchema, "The project") },
});

export const updateProject = authedRoute({
  operationId: "updateProject",
  access: inProjectInBatch("PROJECT_ADMIN"),
  method: "put",
  path: `${base}/projects/{projectId}`,
  tags,
  summary: "Update a project's name or description (PROJECT_ADMIN); only the fields sent change",
  request: { params: ProjectParams, body: jsonBody(UpdateProjectBody) },
  responses: { 200: jsonResponse(ProjectSchema, "Updated"), ...CONFLICT_RESPONSE },
});

export const deleteProject = authedRoute({
  operationId: "deleteProject",
  access: inProjectInBatch("PROJECT_ADMIN"),
  method: "delete",
  path: `${base}/projects/{projectId}`,
  tags,
  summary: "Delete a project and its memberships (PROJECT_ADMIN)",
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(MessageSchema, "Deleted"), ...CONFLICT_RESPONSE },
});
