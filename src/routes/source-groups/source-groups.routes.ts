import { z } from "@hono/zod-openapi";
import { LIGHT_SCAN_TYPES, typeList } from "../../connections";
import { inProject, inProjectInBatch, inTenant } from "../access";
import { authedRoute, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { PageQuery } from "../pagination";
import { MoveParams, ProjectParams, TenantParams } from "../params";
import {
  CreatedSourceGroupSchema,
  CreateSourceGroupBody,
  GroupParams,
  MovedSourceGroupsSchema,
  MoveSourceGroupsBody,
  SourceGroupSchema,
  UpdatedSourceGroupSchema,
  UpdateSourceGroupBody,
} from "./source-groups.schemas";

const tags = ["Source groups (deprecated)"];
const base = "/api/backend/v2/{tenant}/configuration";
const deprecated = "Deprecated: manage assets one by one under /api/backend/{tenant}/configuration/…/assets.";
const validation =
  "400 lists every problem with its field: the payload must fit the type; the connection must be visible from " +
  `the project and of the group's type; only_light_scan only for ${typeList(LIGHT_SCAN_TYPES)}.`;

export const createSourceGroup = authedRoute({
  operationId: "createSourceGroup",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "post",
  path: `${base}/projects/{projectId}/source_groups`,
  tags,
  deprecated: true,
  summary: "Create a source group and its assets (PROJECT_EDITOR)",
  description:
    `${deprecated} Creates one asset per entry (type and connection of the group, payload of the group plus ` +
    `{table: table_or_file_name}) and a QUEUED ANALYZE scan job for each. ${validation}`,
  request: { params: ProjectParams, body: jsonBody(CreateSourceGroupBody) },
  responses: { 201: jsonResponse(CreatedSourceGroupSchema, "Created") },
});

export const updateSourceGroup = authedRoute({
  operationId: "updateSourceGroup",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "put",
  path: `${base}/projects/{projectId}/source_groups/{sourceGroupId}`,
  tags,
  deprecated: true,
  summary: "Update a source group, add and delete its assets (PROJECT_EDITOR)",
  description:
    `${deprecated} Only the fields sent change; a new type, payload, options or connection is carried to every ` +
    `asset of the group (each keeps its table). A new type needs a payload for it. assets_to_delete are ids of ` +
    `assets of this group (400 otherwise). All in one batch. ${validation}`,
  request: { params: GroupParams, body: jsonBody(UpdateSourceGroupBody) },
  responses: { 200: jsonResponse(UpdatedSourceGroupSchema, "Updated; the assets added with their ANALYZE jobs") },
});

export const moveSourceGroups = authedRoute({
  operationId: "moveSourceGroups",
  access: inProjectInBatch("PROJECT_EDITOR", "targetProjectId"),
  method: "post",
  path: `${base}/projects/{targetProjectId}/source_groups/move`,
  tags,
  deprecated: true,
  summary: "Move source groups and their assets to another project (PROJECT_EDITOR in both projects)",
  description:
    `${deprecated} All or nothing, with the rules of asset moves: unknown group ids are a 404; without ` +
    "target_connection_id, every connection used must be GLOBAL (400 otherwise); a target connection must be " +
    "visible from the target project and of the type of every group and asset moved (400).",
  request: { params: MoveParams, body: jsonBody(MoveSourceGroupsBody) },
  responses: { 200: jsonResponse(MovedSourceGroupsSchema, "Moved") },
});

export const listProjectSourceGroups = authedRoute({
  operationId: "listProjectSourceGroups",
  access: inProject("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/projects/{projectId}/source_groups`,
  tags,
  deprecated: true,
  summary: "List a project's source groups (PROJECT_VIEWER)",
  description: deprecated,
  request: { params: ProjectParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(SourceGroupSchema), "Source groups, by id") },
});

export const listAllSourceGroups = authedRoute({
  operationId: "listAllSourceGroups",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: `${base}/source_groups`,
  tags,
  deprecated: true,
  summary: "List the source groups of every project the caller can read",
  description: deprecated,
  request: { params: TenantParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(SourceGroupSchema), "Source groups, by id") },
});

export const deleteSourceGroup = authedRoute({
  operationId: "deleteSourceGroup",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "delete",
  path: `${base}/projects/{projectId}/source_groups/{sourceGroupId}`,
  tags,
  deprecated: true,
  summary: "Delete a source group and all its assets (PROJECT_EDITOR)",
  description: deprecated,
  request: { params: GroupParams },
  responses: { 200: jsonResponse(MessageSchema, "Deleted") },
});

export const listSourceGroupAssetNames = authedRoute({
  operationId: "listSourceGroupAssetNames",
  access: inProjectInBatch("PROJECT_VIEWER"),
  method: "post",
  path: `${base}/projects/{projectId}/source_groups/{sourceGroupId}/list`,
  tags,
  deprecated: true,
  summary: "Names of a source group's assets (PROJECT_VIEWER)",
  description: `${deprecated} No body. Names in asset id order.`,
  request: { params: GroupParams },
  responses: { 200: jsonResponse(z.array(z.string()), "Asset names") },
});
