import { z } from "@hono/zod-openapi";
import { inTenantInBatch, onAsset } from "../access";
import { authedRoute, jsonResponse, problem, QUEUE_UNAVAILABLE_RESPONSE } from "../openapi";
import { IntId, TenantId } from "../params";
import { ScanAcceptedSchema, ScanRequestBody, ScanRequestFields } from "../scans/scans.schemas";

const tags = ["Data upload"];
const tenant = TenantId.openapi({ param: { name: "tenant", in: "path" } });
const successor = "POST /api/backend/{tenant}/configuration/assets/{assetId}/scans";

const uploadBody = {
  required: true,
  description:
    "JSON: where the data is (`location`…; unset fields come from the asset). Or the data itself as " +
    "`text/csv` or `application/x-ndjson` (Content-Length required; at most the tenant's free_upload_limit), " +
    "as it is or with `Content-Encoding: gzip` (inflated on the way in; the limit counts inflated bytes). " +
    "An UPLOAD asset takes only data (JSON is a 409).",
  content: {
    "application/json": { schema: ScanRequestBody },
    "text/csv": {
      schema: z.string().openapi({ format: "binary" }),
      example: "order_id,email,amount,updated_at\n1001,ada@example.com,42.50,2026-03-01T09:30:00Z\n",
    },
    "application/x-ndjson": {
      schema: z.string().openapi({ format: "binary" }),
      example: '{"order_id":1001,"email":"ada@example.com","amount":42.5}\n',
    },
  },
} as const;

const uploadQuery = z.object({
  delimiter: z.string().length(1).optional().openapi({ description: "CSV separator of an uploaded text/csv body" }),
});

const uploadResponses = {
  202: jsonResponse(ScanAcceptedSchema, "Queued"),
  411: problem("A data upload without Content-Length"),
  413: problem("The upload (inflated, when gzip) is over the tenant's free_upload_limit, or a JSON body over 1 MiB"),
  409: problem("A JSON scan request for an UPLOAD asset, whose data arrives only by upload"),
  415: problem("A Content-Type other than JSON, CSV or NDJSON, or a Content-Encoding other than gzip"),
  ...QUEUE_UNAVAILABLE_RESPONSE,
};

export const uploadBatch = authedRoute({
  operationId: "uploadBatch",
  access: onAsset("PROJECT_EDITOR", { param: "source_id", read: "head", inBatch: true }),
  method: "post",
  path: "/v2/{tenant}/sources/{source_id}/batch_data",
  tags,
  summary: "Upload data or point at it, and scan it (PROJECT_EDITOR)",
  request: { params: z.object({ tenant, source_id: IntId("source_id") }), query: uploadQuery, body: uploadBody },
  responses: uploadResponses,
});

const withSource = z.object({ tenant, source: IntId("source") });
const tenantOnly = z.object({ tenant });
const deprecation = {
  method: "post",
  tags,
  deprecated: true,
  summary: `Deprecated upload (use ${successor})`,
  responses: uploadResponses,
} as const;

/** A deprecated upload path naming the asset in the path. */
const deprecatedWithSource = <P extends string>(operationId: string, path: P) =>
  authedRoute({
    ...deprecation,
    operationId,
    path,
    access: onAsset("PROJECT_EDITOR", { param: "source", read: "head", inBatch: true }),
    description: `Deprecated: use ${successor}.`,
    request: { params: withSource, query: uploadQuery, body: uploadBody },
  });

const sourceId = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** A deprecated upload path without the asset: it comes as source_id, in the query or a JSON body. */
const deprecatedTenantOnly = <P extends string>(operationId: string, path: P) =>
  authedRoute({
    ...deprecation,
    operationId,
    path,
    // The asset is named by the input itself: the handler checks its project's role (and so the
    // caller's standing in the tenant) in the batch that queues the job, or beside its read.
    access: inTenantInBatch("TENANT_MEMBER"),
    description:
      `Deprecated: use ${successor}. The asset is named by source_id: the query parameter, or (JSON ` +
      "requests) a body field; when both are sent they must agree.",
    request: {
      params: tenantOnly,
      query: uploadQuery.extend({ source_id: sourceId.optional() }),
      body: {
        ...uploadBody,
        content: {
          ...uploadBody.content,
          "application/json": {
            // One flat object: extending the registered ScanRequest would give allOf with
            // additionalProperties false, a schema no body satisfies.
            schema: z.strictObject({ ...ScanRequestFields, source_id: sourceId.optional() }),
            example: { source_id: 12, format: "csv" },
          },
        },
      },
    },
  });

export const uploadDeprecatedSource = deprecatedWithSource(
  "uploadDeprecatedSource",
  "/api/data/{tenant}/sources/{source}/batch_data",
);
export const uploadDeprecatedV2Source = deprecatedWithSource(
  "uploadDeprecatedV2Source",
  "/api/data/v2/{tenant}/sources/{source}/batch_data",
);
export const uploadDeprecatedTenant = deprecatedTenantOnly("uploadDeprecatedTenant", "/api/data/{tenant}/batch_data");
export const uploadDeprecatedV2Tenant = deprecatedTenantOnly(
  "uploadDeprecatedV2Tenant",
  "/api/data/v2/{tenant}/batch_data",
);
