import { inTenant, inTenantInBatch } from "../access";
import { authedRoute, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { TenantParams } from "../params";
import { PutSparkJobConfigBody, SparkJobConfigSchema } from "./spark-job-config.schemas";

const tags = ["Spark job configuration"];
const path = "/configuration/tenants/{tenant}/spark-job-config";

export const getSparkJobConfig = authedRoute({
  operationId: "getSparkJobConfig",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path,
  tags,
  summary: "Get the tenant's Spark job configuration (TENANT_ADMIN); {} when none is saved",
  request: { params: TenantParams },
  responses: { 200: jsonResponse(SparkJobConfigSchema, "The configuration") },
});

export const putSparkJobConfig = authedRoute({
  operationId: "putSparkJobConfig",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "put",
  path,
  tags,
  summary: "Create or update the Spark job configuration (TENANT_ADMIN), block by block",
  description:
    "Each block is stored independently: an omitted block keeps its values, a block sent as null is cleared, " +
    "a block sent replaces the whole stored block.",
  request: { params: TenantParams, body: jsonBody(PutSparkJobConfigBody) },
  responses: { 200: jsonResponse(SparkJobConfigSchema, "The resulting configuration") },
});

export const deleteSparkJobConfig = authedRoute({
  operationId: "deleteSparkJobConfig",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "delete",
  path,
  tags,
  summary: "Permanently remove the Spark job configuration (TENANT_ADMIN)",
  request: { params: TenantParams },
  responses: { 200: jsonResponse(MessageSchema, "Removed (also when none was saved)") },
});
