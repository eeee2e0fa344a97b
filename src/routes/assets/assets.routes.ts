import { z } from "@hono/zod-openapi";
import { inProjectInBatch, inTenant, onAsset } from "../access";
import { authedRoute, jsonBody, jsonResponse, MessageSchema, problem } from "../openapi";
import { IntId, MoveParams, ProjectParams, TenantParams } from "../params";
import {
  AssetAttributeSchema,
  AssetExtrasQuery,
  AssetListQuery,
  AssetParams,
  AssetSchema,
  CreateAssetBody,
  LineageBody,
  MoveAssetsBody,
  MovedAssetsSchema,
  UpdateAssetBody,
} from "./assets.schemas";

const tags = ["Assets"];
const base = "/api/backend/{tenant}/configuration";
const validation =
  "400 lists every problem with its field: the payload must fit the type; the connection must be visible from " +
  "the project (its own or a GLOBAL one; otherwise `body.connection_id`: no such connection in this project) and " +
  "of the asset's type.";

export const createAsset = authedRoute({
  operationId: "createAsset",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "post",
  path: `${base}/projects/{projectId}/assets`,
  tags,
  summary: "Create an asset (PROJECT_EDITOR)",
  description: `An asset is one monitored table or file, read through a connection. ${validation} db_type is copied from the connection.`,
  request: { params: ProjectParams, body: jsonBody(CreateAssetBody) },
  responses: { 201: jsonResponse(AssetSchema, "Created") },
});

export const updateAsset = authedRoute({
  operationId: "updateAsset",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "put",
  path: `${base}/projects/{projectId}/assets/{assetId}`,
  tags,
  summary: "Update an asset (PROJECT_EDITOR); only the fields sent change",
  description: `A new type needs a payload valid for it (and a connection of that type). ${validation}`,
  request: { params: AssetParams, body: jsonBody(UpdateAssetBody) },
  responses: { 200: jsonResponse(AssetSchema, "Updated") },
});

export const listAllAssets = authedRoute({
  operationId: "listAllAssets",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: `${base}/assets`,
  tags,
  summary: "List the assets of every project the caller can read",
  request: { params: TenantParams, query: AssetListQuery },
  responses: { 200: jsonResponse(z.array(AssetSchema), "Assets, by id") },
});

export const listProjectAssets = authedRoute({
  operationId: "listProjectAssets",
  access: inProjectInBatch("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/projects/{projectId}/assets`,
  tags,
  summary: "List a project's assets (PROJECT_VIEWER)",
  request: { params: ProjectParams, query: AssetListQuery },
  responses: { 200: jsonResponse(z.array(AssetSchema), "Assets, by id") },
});

export const getAsset = authedRoute({
  operationId: "getAsset",
  access: onAsset("PROJECT_VIEWER", { read: "connectionType" }),
  method: "get",
  path: `${base}/projects/{projectId}/assets/{assetId}`,
  tags,
  summary: "Get an asset (PROJECT_VIEWER)",
  request: { params: AssetParams, query: AssetExtrasQuery },
  responses: { 200: jsonResponse(AssetSchema, "The asset") },
});

export const deleteAsset = authedRoute({
  operationId: "deleteAsset",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "delete",
  path: `${base}/projects/{projectId}/assets/{assetId}`,
  tags,
  summary: "Delete an asset with its lineage edges and DQ score configuration (PROJECT_EDITOR)",
  request: { params: AssetParams },
  responses: { 200: jsonResponse(MessageSchema, "Deleted") },
});

export const setAssetLineage = authedRoute({
  operationId: "setAssetLineage",
  access: inProjectInBatch("PROJECT_EDITOR"),
  method: "put",
  path: `${base}/projects/{projectId}/assets/{assetId}/lineage`,
  tags,
  summary: "Replace an asset's lineage (PROJECT_EDITOR)",
  description:
    "parents (assets feeding this one) and children (assets it feeds) are asset ids (strings) of the tenant in " +
    "projects the caller can read. Each list sent replaces that side's edges; a list left out keeps its side. " +
    "No self-edge, no asset both parent and child. Returns the asset with parents and children.",
  request: { params: AssetParams, body: jsonBody(LineageBody) },
  responses: { 200: jsonResponse(AssetSchema, "The asset with its lineage") },
});

export const moveAssets = authedRoute({
  operationId: "moveAssets",
  access: inProjectInBatch("PROJECT_EDITOR", "targetProjectId"),
  method: "post",
  path: `${base}/projects/{targetProjectId}/assets/move`,
  tags,
  summary: "Move assets to another project (PROJECT_EDITOR in both projects)",
  description:
    "All or nothing. Every id must be an asset of the source project (404 otherwise). Without " +
    "target_connection_id, assets keep their connections, which must be GLOBAL (an asset on a PROJECT connection " +
    "makes it required, 400). A target connection must be visible from the target project and of the type of " +
    "every moved asset (400). A moved asset leaves its source group. Returns the ids moved.",
  request: { params: MoveParams, body: jsonBody(MoveAssetsBody) },
  responses: { 200: jsonResponse(MovedAssetsSchema, "Moved") },
});

export const loadSchema = authedRoute({
  operationId: "loadSchema",
  access: onAsset("PROJECT_EDITOR", { inBatch: true }),
  method: "post",
  path: "/api/data/{tenant}/assets/{assetId}/schema",
  tags: ["Assets"],
  summary: "Load an asset's schema from its source (PROJECT_EDITOR)",
  description:
    "Reads the attributes (name, type, nullable) from the source — a file's header or footer, or the " +
    "database's information schema; an UPLOAD asset's last uploaded batch — and stores them on the asset " +
    "(up to 2000), shown with with_attributes=true.",
  request: { params: TenantParams.extend({ assetId: IntId("assetId") }) },
  responses: {
    200: jsonResponse(
      z
        .object({
          asset_id: z.string(),
          attributes: z.array(AssetAttributeSchema),
          loaded_at: z.string(),
        })
        .openapi("AssetSchema"),
      "The attributes, as stored",
    ),
    409: problem("An UPLOAD asset with no uploaded batch yet"),
    422: problem(
      "The source refused or failed: bad credentials, missing object or table, unreachable host; an UPLOAD asset's last batch is gone",
    ),
  },
});
