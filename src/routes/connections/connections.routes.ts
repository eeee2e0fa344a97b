import { z } from "@hono/zod-openapi";
import { inProject, inProjectInBatch, inTenant, inTenantInBatch } from "../access";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse } from "../openapi";
import { PageQuery } from "../pagination";
import { ProjectParams, TenantParams } from "../params";
import {
  ConnectionSchema,
  CreateConnectionBody,
  ProjectConnectionParams,
  TenantConnectionParams,
  UpdateConnectionBody,
} from "./connections.schemas";

const tags = ["Connections"];
const base = "/api/backend/{tenant}/configuration";
const credentialNote =
  "The credential is encrypted at rest and never returned. An UPLOAD connection (data that arrives only through " +
  "POST /v2/{tenant}/sources/{source_id}/batch_data) needs only a name and type: no payload, no credential.";

export const createProjectConnection = authedRoute({
  operationId: "createProjectConnection",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "post",
  path: `${base}/projects/{projectId}/connections`,
  tags,
  summary: "Create a PROJECT-scoped connection (PROJECT_EDITOR)",
  description: `The credential type must fit the connection type (see ConnectionCredential). ${credentialNote}`,
  request: { params: ProjectParams, body: jsonBody(CreateConnectionBody) },
  responses: { 201: jsonResponse(ConnectionSchema, "Created"), ...CONFLICT_RESPONSE },
});

export const createGlobalConnection = authedRoute({
  operationId: "createGlobalConnection",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "post",
  path: `${base}/connections`,
  tags,
  summary: "Create a GLOBAL connection, usable in every project of the tenant (TENANT_ADMIN)",
  description: `The credential type must fit the connection type (see ConnectionCredential). ${credentialNote}`,
  request: { params: TenantParams, body: jsonBody(CreateConnectionBody) },
  responses: { 201: jsonResponse(ConnectionSchema, "Created"), ...CONFLICT_RESPONSE },
});

export const updateProjectConnection = authedRoute({
  operationId: "updateProjectConnection",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "put",
  path: `${base}/projects/{projectId}/connections/{connectionId}`,
  tags,
  summary: "Update a connection visible in the project (PROJECT_EDITOR; TENANT_ADMIN for a GLOBAL one)",
  description:
    "Only the fields sent change; payload and credential are replaced whole. A type change needs a payload and " +
    `a credential valid for the new type. ${credentialNote}`,
  request: { params: ProjectConnectionParams, body: jsonBody(UpdateConnectionBody) },
  responses: { 200: jsonResponse(ConnectionSchema, "Updated"), ...CONFLICT_RESPONSE },
});

export const updateConnection = authedRoute({
  operationId: "updateConnection",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "put",
  path: `${base}/connections/{connectionId}`,
  tags,
  summary: "Update any connection of the tenant, GLOBAL or PROJECT (TENANT_ADMIN)",
  description:
    "Only the fields sent change; payload and credential are replaced whole. A type change needs a payload and " +
    `a credential valid for the new type. ${credentialNote}`,
  request: { params: TenantConnectionParams, body: jsonBody(UpdateConnectionBody) },
  responses: { 200: jsonResponse(ConnectionSchema, "Updated"), ...CONFLICT_RESPONSE },
});

export const listProjectConnections = authedRoute({
  operationId: "listProjectConnections",
  access: inProject("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/projects/{projectId}/connections`,
  tags,
  summary: "List the connections usable in a project: its own and the tenant's GLOBAL ones (PROJECT_VIEWER)",
  request: { params: ProjectParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(ConnectionSchema), "Connections, by id") },
});

export const listConnections = authedRoute({
  operationId: "listConnections",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: `${base}/connections`,
  tags,
  summary: "List the tenant's connections the caller can read (any tenant member)",
  description:
    "The GLOBAL connections plus those of every project the caller can read: all projects for tenant admins, " +
    "the caller's project memberships for other users.",
  request: { params: TenantParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(ConnectionSchema), "Connections, by id") },
});

export const getProjectConnection = authedRoute({
  operationId: "getProjectConnection",
  access: inProject("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/projects/{projectId}/connections/{connectionId}`,
  tags,
  summary: "Get a connection usable in the project: its own or a GLOBAL one (PROJECT_VIEWER)",
  description: "Another project's connection is a 404 here.",
  request: { params: ProjectConnectionParams },
  responses: { 200: jsonResponse(ConnectionSchema, "The connection") },
});

export const getConnection = authedRoute({
  operationId: "getConnection",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: `${base}/connections/{connectionId}`,
  tags,
  summary: "Get a GLOBAL connection, or one of a project the caller can read (any tenant member)",
  request: { params: TenantConnectionParams },
  responses: { 200: jsonResponse(ConnectionSchema, "The connection") },
});
