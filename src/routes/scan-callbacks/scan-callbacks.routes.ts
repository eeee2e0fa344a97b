import { z } from "@hono/zod-openapi";
import { ERROR_RESPONSES, jsonResponse, MessageSchema, problem, publicRoute } from "../openapi";

const jobId = z
  .string()
  .min(1)
  .max(64)
  .openapi({ param: { name: "job_id", in: "path" } });

/**
 * The Spark driver's callback. It carries no API key: the job's own HMAC secret signs it, and the
 * body is read as sent (the signature covers its exact bytes), then checked against the result shape.
 */
export const postScanCallback = publicRoute({
  operationId: "postScanCallback",
  method: "post",
  path: "/api/callbacks/scans/{job_id}",
  tags: ["Scans"],
  security: [{}] as Record<string, string[]>[],
  summary: "The result of a full scan, posted once by the Spark driver (signed with the job's secret)",
  description:
    "Headers: `X-DQ-Timestamp` (unix seconds, within 5 minutes of now) and `X-DQ-Signature: v1=<hex " +
    'HMAC-SHA256 of "{timestamp}.{body}">` keyed with the job\'s secret. Body (at most 96 KiB): ' +
    '`{"status":"SUCCEEDED","profile":{…}}`, `{"status":"SUCCEEDED","profile_ref":{"bytes":n}}` (the profile ' +
    'written to the tenant\'s storage at spark-results/{tenant}/{job_id}/profile.json), or `{"status":"FAILED","error":"…"}`. ' +
    "Accepted once, before the job's deadline; it is applied through the scan-results queue.",
  request: { params: z.object({ job_id: jobId }) },
  responses: {
    202: jsonResponse(MessageSchema, "Accepted; the result is applied from the scan-results queue"),
    400: ERROR_RESPONSES[400],
    401: problem("Missing, stale or invalid signature (or no such job)"),
    409: problem("The callback was already used, the job has ended, or its deadline passed"),
    413: problem("The body is over 96 KiB: send the profile by reference"),
  },
});
