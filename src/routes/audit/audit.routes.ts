import { z } from "@hono/zod-openapi";
import { inTenant } from "../access";
import { authedRoute, jsonResponse } from "../openapi";
import { TenantId } from "../params";
import { AuditEventSchema, AuditQuery } from "./audit.schemas";

export const listAuditEvents = authedRoute({
  operationId: "listAuditEvents",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: "/api/backend/{tenant}/audit",
  tags: ["Audit"],
  summary: "The tenant's audit log: every write, newest first (TENANT_ADMIN)",
  description:
    "One entry per POST, PUT, PATCH or DELETE under the tenant by an authenticated caller, refused ones " +
    "included: who, with which credential, what, when and how it ended. Never bodies or secrets. The data " +
    "plane's requests a pipeline makes every scan (uploads, scan triggers, a job's alerts) are counted per UTC " +
    "day, method, path, actor, credential and status: one entry with its count, first (`at`) and last " +
    "(`last_at`) time and last request id. " +
    "Kept for the tenant's data_ttl. Paged by `limit` and the `Link` header's cursor.",
  request: {
    params: z.object({ tenant: TenantId.openapi({ param: { name: "tenant", in: "path" } }) }),
    query: AuditQuery,
  },
  responses: { 200: jsonResponse(z.array(AuditEventSchema), "Audit events") },
});
