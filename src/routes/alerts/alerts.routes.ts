import { z } from "@hono/zod-openapi";
import { inTenant, onAsset } from "../access";
import { authedRoute, jsonBody, jsonResponse } from "../openapi";
import { IntId, TenantId, TenantParams } from "../params";
import { AlertSchema, AlertsByFiltersBody } from "./alerts.schemas";

const scanTags = ["Scans"];
const incidentTags = ["Incidents"];
const tenant = TenantId.openapi({ param: { name: "tenant", in: "path" } });

export const scanAlerts = authedRoute({
  operationId: "scanAlerts",
  access: onAsset("PROJECT_VIEWER", { param: "sourceID", inBatch: true }),
  method: "post",
  path: "/api/backend/{tenant}/configuration/sources/{sourceID}/alerts",
  tags: scanTags,
  summary: "The alerts a scan job raised for an asset (PROJECT_VIEWER)",
  description: "An empty array while the job has not finished or when the data had no problem.",
  request: {
    params: z.object({ tenant, sourceID: IntId("sourceID") }),
    query: z.object({ job_id: z.string().min(1).max(64).openapi({ description: "The job id of the scan" }) }),
  },
  responses: { 200: jsonResponse(z.array(AlertSchema), "Alerts (spec 2.6 fields, then the explanation)") },
});

export const alertsByFilters = authedRoute({
  operationId: "alertsByFilters",
  access: inTenant("TENANT_MEMBER"),
  method: "post",
  path: "/api/backend/{tenant}/configuration/alerts/by_filters",
  tags: incidentTags,
  summary: "The alerts of an asset with the given ids, e.g. an incident's alert_refs (PROJECT_VIEWER)",
  description: "Ids that are not alerts of the asset are left out. At most 1000 ids.",
  request: { params: TenantParams, body: jsonBody(AlertsByFiltersBody) },
  responses: { 200: jsonResponse(z.array(AlertSchema), "Alerts, by id (spec 2.6 fields, then the explanation)") },
});
