import { z } from "@hono/zod-openapi";
import { ANY_USER, inTenant } from "../access";
import { authedRoute, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { PageQuery } from "../pagination";
import { TenantId } from "../params";
import { ApiKeyListSchema, ApiKeySchema, CreateApiKeyBody, CreatedApiKeySchema, KeyIdParam } from "./api-keys.schemas";

const tags = ["Auth"];

const userKeyParams = z.object({ keyId: KeyIdParam });

export const listUserKeys = authedRoute({
  operationId: "listUserKeys",
  access: ANY_USER,
  method: "get",
  path: "/auth/api_keys",
  tags,
  summary: "List the caller's own API keys",
  request: { query: PageQuery },
  responses: { 200: jsonResponse(ApiKeyListSchema, "The caller's keys (never their secrets)") },
});

export const createUserKey = authedRoute({
  operationId: "createUserKey",
  access: ANY_USER,
  method: "post",
  path: "/auth/api_keys",
  tags,
  summary: "Create an API key acting as the caller",
  request: { body: jsonBody(CreateApiKeyBody) },
  responses: { 201: jsonResponse(CreatedApiKeySchema, "The key; its secret is shown only here") },
});

export const getUserKey = authedRoute({
  operationId: "getUserKey",
  access: ANY_USER,
  method: "get",
  path: "/auth/api_keys/{keyId}",
  tags,
  summary: "Get one of the caller's API keys",
  request: { params: userKeyParams },
  responses: { 200: jsonResponse(ApiKeySchema, "The key") },
});

export const deleteUserKey = authedRoute({
  operationId: "deleteUserKey",
  access: ANY_USER,
  method: "delete",
  path: "/auth/api_keys/{keyId}",
  tags,
  summary: "Revoke one of the caller's API keys",
  request: { params: userKeyParams },
  responses: { 200: jsonResponse(MessageSchema, "Revoked") },
});

const tenantParams = z.object({ tenant: TenantId.openapi({ param: { name: "tenant", in: "path" } }) });
const tenantKeyParams = tenantParams.extend({ keyId: KeyIdParam });
const deprecatedNote = "Deprecated: use the user-scoped keys under /auth/api_keys.";

export const listTenantKeys = authedRoute({
  operationId: "listTenantKeys",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: "/auth/{tenant}/apiKeys",
  tags,
  deprecated: true,
  summary: "List tenant-scoped API keys (tenant admin)",
  description: deprecatedNote,
  request: { params: tenantParams, query: PageQuery },
  responses: { 200: jsonResponse(ApiKeyListSchema, "The tenant's keys (never their secrets)") },
});

export const createTenantKey = authedRoute({
  operationId: "createTenantKey",
  access: inTenant("TENANT_ADMIN"),
  method: "post",
  path: "/auth/{tenant}/apiKeys",
  tags,
  deprecated: true,
  summary: "Create a tenant-scoped API key with tenant-admin rights (tenant admin)",
  description: deprecatedNote,
  request: { params: tenantParams, body: jsonBody(CreateApiKeyBody) },
  responses: { 201: jsonResponse(CreatedApiKeySchema, "The key; its secret is shown only here") },
});

export const getTenantKey = authedRoute({
  operationId: "getTenantKey",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: "/auth/{tenant}/apiKeys/{keyId}",
  tags,
  deprecated: true,
  summary: "Get a tenant-scoped API key (tenant admin)",
  description: deprecatedNote,
  request: { params: tenantKeyParams },
  responses: { 200: jsonResponse(ApiKeySchema, "The key") },
});

export const deleteTenantKey = authedRoute({
  operationId: "deleteTenantKey",
  access: inTenant("TENANT_ADMIN"),
  method: "delete",
  path: "/auth/{tenant}/apiKeys/{keyId}",
  tags,
  deprecated: true,
  summary: "Revoke a tenant-scoped API key (tenant admin)",
  description: deprecatedNote,
  request: { params: tenantKeyParams },
  responses: { 200: jsonResponse(MessageSchema, "Revoked") },
});
