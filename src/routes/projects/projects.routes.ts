import { z } from "@hono/zod-openapi";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { PageQuery } from "../pagination";
import { ProjectParams, TenantParams } from "../params";
import {
  AddProjectMemberBody,
  ChangeProjectMemberBody,
  CreateProjectBody,
  EmailParam,
  ProjectMemberSchema,
  ProjectSchema,
  PutTenantMemberBody,
  TenantMemberSchema,
  UpdateProjectBody,
} from "./projects.schemas";

const tags = ["Projects"];
const base = "/api/backend/{tenant}/configuration";

export const createProject = authedRoute({
  method: "post",
  path: `${base}/projects`,
  tags,
  summary: "Create a project (any tenant member; a creating user becomes its PROJECT_ADMIN)",
  request: { params: TenantParams, body: jsonBody(CreateProjectBody) },
  responses: { 201: jsonResponse(ProjectSchema, "Created"), ...CONFLICT_RESPONSE },
});

export const listProjects = authedRoute({
  method: "get",
  path: `${base}/projects`,
  tags,
  summary: "List the projects the caller can read",
  request: { params: TenantParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(ProjectSchema), "Projects, by id") },
});

export const getProject = authedRoute({
  method: "get",
  path: `${base}/projects/{projectId}`,
  tags,
  summary: "Get a project (PROJECT_VIEWER)",
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(ProjectSchema, "The project") },
});

export const updateProject = authedRoute({
  method: "put",
  path: `${base}/projects/{projectId}`,
  tags,
  summary: "Update a project's name or description (PROJECT_ADMIN); only the fields sent change",
  request: { params: ProjectParams, body: jsonBody(UpdateProjectBody) },
  responses: { 200: jsonResponse(ProjectSchema, "Updated"), ...CONFLICT_RESPONSE },
});

export const deleteProject = authedRoute({
  method: "delete",
  path: `${base}/projects/{projectId}`,
  tags,
  summary: "Delete a project and its memberships (PROJECT_ADMIN)",
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(MessageSchema, "Deleted"), ...CONFLICT_RESPONSE },
});

const memberParams = ProjectParams.extend({ email: EmailParam });

export const listProjectMembers = authedRoute({
  method: "get",
  path: `${base}/projects/{projectId}/members`,
  tags,
  summary: "List a project's members (PROJECT_VIEWER)",
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(z.array(ProjectMemberSchema), "Members, by e-mail") },
});

export const addProjectMember = authedRoute({
  method: "post",
  path: `${base}/projects/{projectId}/members`,
  tags,
  summary: "Add a member to a project (PROJECT_ADMIN); the user joins the tenant as TENANT_MEMBER if new",
  request: { params: ProjectParams, body: jsonBody(AddProjectMemberBody) },
  responses: { 201: jsonResponse(ProjectMemberSchema, "Added"), ...CONFLICT_RESPONSE },
});

export const changeProjectMember = authedRoute({
  method: "put",
  path: `${base}/projects/{projectId}/members/{email}`,
  tags,
  summary: "Change a member's project role (PROJECT_ADMIN)",
  request: { params: memberParams, body: jsonBody(ChangeProjectMemberBody) },
  responses: { 200: jsonResponse(ProjectMemberSchema, "Changed") },
});

export const removeProjectMember = authedRoute({
  method: "delete",
  path: `${base}/projects/{projectId}/members/{email}`,
  tags,
  summary: "Remove a member from a project (PROJECT_ADMIN)",
  request: { params: memberParams },
  responses: { 200: jsonResponse(MessageSchema, "Removed") },
});

const tenantMemberParams = TenantParams.extend({ email: EmailParam });
const memberTags = ["Tenant members"];

export const listTenantMembers = authedRoute({
  method: "get",
  path: `${base}/members`,
  tags: memberTags,
  summary: "List the tenant's users and their tenant roles (TENANT_ADMIN)",
  request: { params: TenantParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(TenantMemberSchema), "Members, by e-mail") },
});

export const putTenantMember = authedRoute({
  method: "put",
  path: `${base}/members/{email}`,
  tags: memberTags,
  summary: "Add a user to the tenant or change their tenant role (TENANT_ADMIN)",
  request: { params: tenantMemberParams, body: jsonBody(PutTenantMemberBody) },
  responses: { 200: jsonResponse(TenantMemberSchema, "Changed"), 201: jsonResponse(TenantMemberSchema, "Added") },
});

export const removeTenantMember = authedRoute({
  method: "delete",
  path: `${base}/members/{email}`,
  tags: memberTags,
  summary: "Remove a user from the tenant and all its projects (TENANT_ADMIN)",
  request: { params: tenantMemberParams },
  responses: { 200: jsonResponse(MessageSchema, "Removed") },
});
