import { z } from "@hono/zod-openapi";
import { onAsset } from "../access";
import { authedRoute, CONFLICT_RESPONSE, jsonResponse, problem, QUEUE_UNAVAILABLE_RESPONSE } from "../openapi";
import { PageQuery } from "../pagination";
import { IntId, TenantId } from "../params";
import { ScanAcceptedSchema, ScanJobSchema, ScanRequestBody } from "./scans.schemas";

const tags = ["Scans"];
const tenant = TenantId.openapi({ param: { name: "tenant", in: "path" } });
const assetParams = z.object({ tenant, assetId: IntId("assetId") });
const jobId = z
  .string()
  .min(1)
  .max(64)
  .openapi({ param: { name: "job_id", in: "path" } });
const base = "/api/backend/{tenant}/configuration/assets/{assetId}/scans";

export const triggerScan = authedRoute({
  operationId: "triggerScan",
  access: onAsset("PROJECT_EDITOR", { read: "head", inBatch: true }),
  method: "post",
  path: base,
  tags,
  summary: "Trigger a scan of an asset (PROJECT_EDITOR); replaces the deprecated batch_data uploads",
  description:
    "Returns at once with the job id; the scan runs from the scan-jobs queue. The body is optional. " +
    "An UPLOAD asset is scanned by its uploads only: triggering it is a 409.",
  request: {
    params: assetParams,
    body: { required: false, content: { "application/json": { schema: ScanRequestBody } } },
  },
  responses: {
    202: jsonResponse(ScanAcceptedSchema, "Queued"),
    409: problem("The asset is an UPLOAD asset: upload a batch to POST /v2/{tenant}/sources/{source_id}/batch_data"),
    ...QUEUE_UNAVAILABLE_RESPONSE,
  },
});

export const listScans = authedRoute({
  operationId: "listScans",
  access: onAsset("PROJECT_VIEWER", { read: "head" }),
  method: "get",
  path: base,
  tags,
  summary: "List an asset's scan jobs, newest first (PROJECT_VIEWER)",
  request: { params: assetParams, query: PageQuery },
  responses: { 200: jsonResponse(z.array(ScanJobSchema), "Jobs") },
});

export const getScan = authedRoute({
  operationId: "getScan",
  access: onAsset("PROJECT_VIEWER", { read: "head" }),
  method: "get",
  path: `${base}/{job_id}`,
  tags,
  summary: "A scan job: status, progress in rows and bytes, timings, error (PROJECT_VIEWER)",
  request: { params: assetParams.extend({ job_id: jobId }) },
  responses: { 200: jsonResponse(ScanJobSchema, "The job") },
});

export const cancelScan = authedRoute({
  operationId: "cancelScan",
  access: onAsset("PROJECT_EDITOR", { inBatch: true }),
  method: "post",
  path: `${base}/{job_id}/cancel`,
  tags,
  summary: "Cancel a queued scan, or a running full scan and its provider run (PROJECT_EDITOR)",
  description:
    "A full scan's run is cancelled at its provider (Databricks runs/cancel, EMR TerminateJobFlows, Dataproc " +
    "operations.cancel) and the job ends CANCELLED. A light scan already running in the Worker, or an ended scan, is a 409.",
  request: { params: assetParams.extend({ job_id: jobId }) },
  responses: { 200: jsonResponse(ScanJobSchema, "The cancelled job"), ...CONFLICT_RESPONSE },
});
