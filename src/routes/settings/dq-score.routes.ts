import { authedRoute, jsonBody, jsonResponse } from "../openapi";
import { IntId, TenantParams } from "../params";
import { DqScoreConfigResponse, PutDqScoreConfigBody } from "./dq-score.schemas";

const tags = ["DQ score"];
const path = "/api/backend/{tenant}/configuration/assets/{assetId}/dq_score";
const params = TenantParams.extend({ assetId: IntId("assetId") });

export const getDqScoreConfig = authedRoute({
  method: "get",
  path,
  tags,
  summary: "Get an asset's DQ score configuration (PROJECT_VIEWER); defaults when none is set",
  request: { params },
  responses: { 200: jsonResponse(DqScoreConfigResponse, "The effective configuration") },
});

export const putDqScoreConfig = authedRoute({
  method: "put",
  path,
  tags,
  summary: "Change an asset's DQ score configuration (PROJECT_EDITOR); only the members sent change",
  request: { params, body: jsonBody(PutDqScoreConfigBody) },
  responses: { 200: jsonResponse(DqScoreConfigResponse, "The resulting configuration, weights normalised") },
});

export const deleteDqScoreConfig = authedRoute({
  method: "delete",
  path,
  tags,
  summary: "Revert an asset's DQ score configuration to the defaults (PROJECT_EDITOR)",
  request: { params },
  responses: { 200: jsonResponse(DqScoreConfigResponse, "The default configuration, now in effect") },
});
