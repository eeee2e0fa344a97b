import { z } from "@hono/zod-openapi";
import { inTenant, inTenantInBatch, onIncident } from "../access";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse } from "../openapi";
import { PageQuery } from "../pagination";
import { IntId, TenantParams } from "../params";
import {
  BackfillAcceptedSchema,
  BackfillJobSchema,
  DistributionSchema,
  IncidentDetailSchema,
  IncidentFilterQuery,
  IncidentListQuery,
  IncidentSchema,
  SummarySchema,
  UpdateIncidentBody,
} from "./incidents.schemas";

const tags = ["Incidents"];
const base = "/api/backend/{tenant}/incidents";
const incidentParams = TenantParams.extend({ incidentId: IntId("incidentId") });

export const listIncidents = authedRoute({
  operationId: "listIncidents",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: base,
  tags,
  summary: "List incidents, newest first, in the projects the caller can read (any tenant member)",
  description:
    "Filters combine with AND; lists are comma-separated. from_time/to_time select incidents opened in " +
    "[from_time, to_time). Ordered by opened_at then id, descending; paged with limit and cursor.",
  request: { params: TenantParams, query: IncidentListQuery.extend(PageQuery.shape) },
  responses: { 200: jsonResponse(z.array(IncidentSchema), "Incidents, newest first") },
});

export const incidentDistribution = authedRoute({
  operationId: "incidentDistribution",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: `${base}/distribution`,
  tags,
  summary: "Incidents opened per UTC day, by severity and by impact (list filters; default: last 30 days)",
  request: { params: TenantParams, query: IncidentFilterQuery },
  responses: { 200: jsonResponse(DistributionSchema, "Every day of the range, zero-filled") },
});

export const incidentSummary = authedRoute({
  operationId: "incidentSummary",
  access: inTenant("TENANT_MEMBER"),
  method: "get",
  path: `${base}/summary`,
  tags,
  summary: "Totals, mean time to resolve (this range and the one before) and counts per tag",
  description: "Over the incidents opened in the range (default: the last 30 days) that match the list filters.",
  request: { params: TenantParams, query: IncidentFilterQuery },
  responses: { 200: jsonResponse(SummarySchema, "The summary") },
});

export const startBackfill = authedRoute({
  operationId: "startBackfill",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "post",
  path: `${base}/historical`,
  tags,
  summary: "Rebuild the tenant's incidents from the alerts of the last 30 days (TENANT_ADMIN)",
  description: "Idempotent. Answers at once; follow the job at GET …/incidents/historical/{jobId}.",
  request: { params: TenantParams },
  responses: { 202: jsonResponse(BackfillAcceptedSchema, "Started") },
});

export const getBackfill = authedRoute({
  operationId: "getBackfill",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: `${base}/historical/{jobId}`,
  tags,
  summary: "Progress of an incident backfill (TENANT_ADMIN)",
  request: {
    params: TenantParams.extend({
      jobId: z
        .string()
        .max(64)
        .openapi({ param: { name: "jobId", in: "path" } }),
    }),
  },
  responses: { 200: jsonResponse(BackfillJobSchema, "The job") },
});

export const getIncident = authedRoute({
  operationId: "getIncident",
  access: onIncident("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/{incidentId}`,
  tags,
  summary: "An incident with the metrics of its alerts and its history (PROJECT_VIEWER)",
  request: { params: incidentParams },
  responses: { 200: jsonResponse(IncidentDetailSchema, "The incident") },
});

export const updateIncident = authedRoute({
  operationId: "updateIncident",
  access: onIncident("PROJECT_EDITOR"),
  method: "patch",
  path: `${base}/{incidentId}`,
  tags,
  summary: "Close or reopen an incident by hand (PROJECT_EDITOR)",
  description:
    "Closing needs a reason (FIXED, EXPECTED, FALSE_POSITIVE, NO_ACTION_NEEDED); EXPECTED adopts the level, " +
    "FALSE_POSITIVE and NO_ACTION_NEEDED return the incident's points to the baseline as measured, and all three " +
    "answer the condition: it alerts again only when it goes clearly further. Reopening a closed incident is a 409 while " +
    "another incident of the same asset, policy and attribute is open.",
  request: { params: incidentParams, body: jsonBody(UpdateIncidentBody) },
  responses: { 200: jsonResponse(IncidentDetailSchema, "The updated incident"), ...CONFLICT_RESPONSE },
});
