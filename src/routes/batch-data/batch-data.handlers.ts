import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { queueUpload, UPLOAD_FORMATS } from "../../jobs/scan-requests";
import { uploadTarget } from "../../jobs/upload-storage";
import { NotFoundError } from "../../lib/errors";
import { getTenant } from "../../tenancy/tenants";
import { settleCheck } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { deprecationHeaders } from "../openapi";
import { ApiError } from "../problems";
import { queueChecked } from "../scans/scans.queue";
import type { ScanRequestBody } from "../scans/scans.schemas";
import type * as routes from "./batch-data.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/**
 * The Content-Encoding of a data upload: none, or gzip (inflated on the way in, the limit counting
 * inflated bytes). Anything else is a 415: stored undecoded, it would be profiled as binary.
 */
function uploadEncoding(header: string | undefined): "identity" | "gzip" {
  const encoding = (header ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return "identity";
  if (encoding === "gzip" || encoding === "x-gzip") return "gzip";
  throw new ApiError(415, "unsupported_media_type", "Send the data as it is, or with Content-Encoding: gzip");
}

/**
 * One upload, whatever its path: a JSON scan request, or the data itself (CSV / NDJSON)
 * streamed into the tenant's bucket, or ours. Returns the queued job's id.
 */
async function upload(
  c: Context<AppEnv>,
  tenant: string,
  assetId: number,
  delimiter: string | undefined,
  json: () => ScanRequestBody,
): Promise<string> {
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "application/json") {
    return (await queueChecked(c, tenant, assetId, { ...json(), ...(delimiter ? { delimiter } : {}) }, "upload")).id;
  }
  // The caller's access and the tenant's storage settings as they are now, read side by side.
  const tenantRead = getTenant(c.var.db, tenant);
  tenantRead.catch(() => {});
  const { asset } = await settleCheck(c, c.var.access.assetHead(tenant, assetId, "PROJECT_EDITOR"));
  const tenantRow = await tenantRead;
  if (!UPLOAD_FORMATS[type]) {
    throw new ApiError(415, "unsupported_media_type", "Send application/json, text/csv or application/x-ndjson");
  }
  const encoding = uploadEncoding(c.req.header("content-encoding"));
  // A fixed length lets the bucket store the stream without buffering, and the limit be checked first.
  const length = c.req.header("content-length");
  const bytes = Number(length);
  if (length === undefined || !Number.isSafeInteger(bytes) || bytes < 0) {
    throw new ApiError(411, "length_required", "Uploads need a Content-Length header (e.g. curl --data-binary @file)");
  }
  if (!tenantRow) throw new NotFoundError("Tenant");
  const job = await queueUpload(
    c.var.db,
    c.env,
    await uploadTarget(c.env, tenantRow),
    asset,
    {
      body: c.req.raw.body,
      contentType: type,
      bytes,
      limit: tenantRow.freeUploadLimit,
      ...(encoding === "gzip" ? { encoding } : {}),
    },
    delimiter,
    [auditInBatch(c, 202)],
  );
  auditedInBatch(c, 202);
  return job.id;
}

const accepted = (assetId: number, jobId: string) => ({
  message: `Data of asset ${assetId} queued for scanning`,
  job_id: jobId,
});

function deprecate(c: Context<AppEnv>, tenant: string, assetId: number) {
  const headers = deprecationHeaders(`/api/backend/${tenant}/configuration/assets/${assetId}/scans`);
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
}

export const uploadBatch: Handler<"uploadBatch"> = async (c) => {
  const { tenant, source_id } = c.req.valid("param");
  const jobId = await upload(
    c,
    tenant,
    source_id,
    c.req.valid("query").delimiter,
    () => c.req.valid("json") as ScanRequestBody,
  );
  return c.json(accepted(source_id, jobId), 202);
};

const deprecatedWithSource: Handler<"uploadDeprecatedSource"> = async (c) => {
  const { tenant, source } = c.req.valid("param");
  const jobId = await upload(
    c,
    tenant,
    source,
    c.req.valid("query").delimiter,
    () => c.req.valid("json") as ScanRequestBody,
  );
  deprecate(c, tenant, source);
  return c.json(accepted(source, jobId), 202);
};

/** The asset of a tenant-only upload: source_id from the query, or from a JSON body; both must agree. */
function tenantOnlySource(query: number | undefined, body: number | undefined): number {
  if (query !== undefined && body !== undefined && query !== body) {
    throw ApiError.badRequest("source_id differs between the query and the body", [
      { path: "body.source_id", message: "must equal the query's source_id" },
    ]);
  }
  const id = query ?? body;
  if (id === undefined) {
    throw ApiError.badRequest("Name the asset with source_id, in the query or in a JSON body", [
      { path: "query.source_id", message: "is required (or body.source_id for a JSON request)" },
    ]);
  }
  return id;
}

const deprecatedTenantOnly: Handler<"uploadDeprecatedTenant"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { source_id: inQuery, delimiter } = c.req.valid("query");
  const isJson = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase() === "application/json";
  const body = isJson ? (c.req.valid("json") as ScanRequestBody & { source_id?: number }) : {};
  const { source_id: inBody, ...request } = body as ScanRequestBody & { source_id?: number };
  const sourceId = tenantOnlySource(inQuery, inBody);
  const jobId = await upload(c, tenant, sourceId, delimiter, () => request as ScanRequestBody);
  deprecate(c, tenant, sourceId);
  return c.json(accepted(sourceId, jobId), 202);
};

export const uploadDeprecatedSource = deprecatedWithSource;
export const uploadDeprecatedV2Source = deprecatedWithSource as unknown as Handler<"uploadDeprecatedV2Source">;
export const uploadDeprecatedTenant = deprecatedTenantOnly;
export const uploadDeprecatedV2Tenant = deprecatedTenantOnly as unknown as Handler<"uploadDeprecatedV2Tenant">;
