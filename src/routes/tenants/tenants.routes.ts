import { z } from "@hono/zod-openapi";
import { PLATFORM_ADMIN } from "../access";
import { authedRoute, jsonBody, jsonResponse } from "../openapi";
import { PageQuery } from "../pagination";
import { TenantId } from "../params";
import { TenantInput, TenantSchema } from "./tenants.schemas";

const tags = ["Tenant configuration"];
const params = z.object({ tenantId: TenantId.openapi({ param: { name: "tenantId", in: "path" } }) });

export const listTenants = authedRoute({
  operationId: "listTenants",
  access: PLATFORM_ADMIN,
  method: "get",
  path: "/backend/private/configuration/tenants",
  tags,
  summary: "List tenant configurations (platform administrator)",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(z.array(TenantSchema), "Tenant configurations") },
});

export const getTenant = authedRoute({
  operationId: "getTenant",
  access: PLATFORM_ADMIN,
  method: "get",
  path: "/backend/private/configuration/tenants/{tenantId}",
  tags,
  summary: "Get a tenant configuration (platform administrator)",
  request: { params },
  responses: { 200: jsonResponse(TenantSchema, "The tenant configuration") },
});

export const putTenant = authedRoute({
  operationId: "putTenant",
  access: PLATFORM_ADMIN,
  method: "put",
  path: "/backend/private/configuration/tenants/{tenantId}",
  tags,
  summary: "Create or replace a tenant configuration (platform administrator)",
  description:
    "Creates the tenant when it does not exist (201), replaces its whole configuration otherwise (200). " +
    "`storage.payload.credentials` and `storage.payload.security.sas_key` are encrypted at rest and never returned.",
  request: { params, body: jsonBody(TenantInput) },
  responses: {
    200: jsonResponse(TenantSchema, "Replaced"),
    201: jsonResponse(TenantSchema, "Created"),
  },
});
