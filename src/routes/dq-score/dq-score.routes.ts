import { z } from "@hono/zod-openapi";
import { onAsset } from "../access";
import { authedRoute, jsonBody, jsonResponse } from "../openapi";
import { PageQuery } from "../pagination";
import { IntId, TenantParams } from "../params";
import { DqScoreConfigResponse, PutDqScoreConfigBody } from "./dq-score.schemas";

const tags = ["DQ score"];
const path = "/api/backend/{tenant}/configuration/assets/{assetId}/dq_score";
const params = TenantParams.extend({ assetId: IntId("assetId") });

export const getDqScoreConfig = authedRoute({
  operationId: "getDqScoreConfig",
  access: onAsset("PROJECT_VIEWER"),
  method: "get",
  path,
  tags,
  summary: "Get an asset's DQ score configuration (PROJECT_VIEWER); defaults when none is set",
  request: { params },
  responses: { 200: jsonResponse(DqScoreConfigResponse, "The effective configuration") },
});

export const putDqScoreConfig = authedRoute({
  operationId: "putDqScoreConfig",
  access: onAsset("PROJECT_EDITOR", { inBatch: true }),
  method: "put",
  path,
  tags,
  summary: "Change an asset's DQ score configuration (PROJECT_EDITOR); only the members sent change",
  request: { params, body: jsonBody(PutDqScoreConfigBody) },
  responses: { 200: jsonResponse(DqScoreConfigResponse, "The resulting configuration, weights normalised") },
});

export const deleteDqScoreConfig = authedRoute({
  operationId: "deleteDqScoreConfig",
  access: onAsset("PROJECT_EDITOR", { inBatch: true }),
  method: "delete",
  path,
  tags,
  summary: "Revert an asset's DQ score configuration to the defaults (PROJECT_EDITOR)",
  request: { params },
  responses: { 200: jsonResponse(DqScoreConfigResponse, "The default configuration, now in effect") },
});

const historyTags = ["Policies and DQ score"];

export const dqScoreHistory = authedRoute({
  operationId: "dqScoreHistory",
  access: onAsset("PROJECT_VIEWER"),
  method: "get",
  path: `${path}/history`,
  tags: historyTags,
  summary: "The asset's DQ score per scan, newest first (PROJECT_VIEWER)",
  request: { params, query: PageQuery },
  responses: {
    200: jsonResponse(
      z.array(
        z
          .object({
            job_id: z.string(),
            scored_at: z.string(),
            completeness: z.number(),
            accuracy: z.number(),
            consistency: z.number(),
            timeliness: z.number(),
            overall: z.number(),
          })
          .openapi("DqScore"),
      ),
      "Scores, 0-100",
    ),
  },
});
