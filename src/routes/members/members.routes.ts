import { z } from "@hono/zod-openapi";
import { inProject, inProjectInBatch, inTenant, inTenantInBatch } from "../access";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { PageQuery } from "../pagination";
import { ProjectParams, TenantParams } from "../params";
import {
  AddProjectMemberBody,
  ChangeProjectMemberBody,
  EmailParam,
  ProjectMemberSchema,
  PutTenantMemberBody,
  TenantMemberSchema,
} from "./members.schemas";

const tags = ["Projects"];
const base = "/api/backend/{tenant}/configuration";

const memberParams = ProjectParams.extend({ email: EmailParam });

export const listProjectMembers = authedRoute({
  operationId: "listProjectMembers",
  access: inProject("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/projects/{projectId}/members`,
  tags,
  summary: "List a project's members (PROJECT_VIEWER)",
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(z.array(ProjectMemberSchema), "Members, by e-mail") },
});

export const addProjectMember = authedRoute({
  operationId: "addProjectMember",
  access: inProjectInBatch("PROJECT_ADMIN"),
  method: "post",
  path: `${base}/projects/{projectId}/members`,
  tags,
  summary: "Add a member to a project (PROJECT_ADMIN); the user joins the tenant as TENANT_MEMBER if new",
  request: { params: ProjectParams, body: jsonBody(AddProjectMemberBody) },
  responses: { 201: jsonResponse(ProjectMemberSchema, "Added"), ...CONFLICT_RESPONSE },
});

export const changeProjectMember = authedRoute({
  operationId: "changeProjectMember",
  access: inProjectInBatch("PROJECT_ADMIN"),
  method: "put",
  path: `${base}/projects/{projectId}/members/{email}`,
  tags,
  summary: "Change a member's project role (PROJECT_ADMIN)",
  request: { params: memberParams, body: jsonBody(ChangeProjectMemberBody) },
  responses: { 200: jsonResponse(ProjectMemberSchema, "Changed") },
});

export const removeProjectMember = authedRoute({
  operationId: "removeProjectMember",
  access: inProjectInBatch("PROJECT_ADMIN"),
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
  operationId: "listTenantMembers",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: `${base}/members`,
  tags: memberTags,
  summary: "List the tenant's users and their tenant roles (TENANT_ADMIN)",
  request: { params: TenantParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(TenantMemberSchema), "Members, by e-mail") },
});

export const putTenantMember = authedRoute({
  operationId: "putTenantMember",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "put",
  path: `${base}/members/{email}`,
  tags: memberTags,
  summary: "Add a user to the tenant or change their tenant role (TENANT_ADMIN)",
  request: { params: tenantMemberParams, body: jsonBody(PutTenantMemberBody) },
  responses: {
    200: jsonResponse(TenantMemberSchema, "Changed"),
    201: jsonResponse(TenantMemberSchema, "Added"),
    // Only when concurrent removals keep undoing the PUT.
    ...CONFLICT_RESPONSE,
  },
});

export const removeTenantMember = authedRoute({
  operationId: "removeTenantMember",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "delete",
  path: `${base}/members/{email}`,
  tags: memberTags,
  summary: "Remove a user from the tenant and all its projects (TENANT_ADMIN)",
  request: { params: tenantMemberParams },
  responses: { 200: jsonResponse(MessageSchema, "Removed") },
});
