import { z } from "@hono/zod-openapi";
import { TenantId } from "../params";

/** 50 GB, the default upload size of a new tenant (spec section 8); free_upload_limit is in bytes. */
export const DEFAULT_FREE_UPLOAD_LIMIT = 50 * 1024 ** 3;
/** Days scan data and results are kept unless the tenant says otherwise. */
export const DEFAULT_DATA_TTL_DAYS = 90;

export const STORAGE_TYPES = ["GCS", "S3", "AZURE", "R2"] as const;

const StorageSecurity = z.strictObject({
  storage_account: z.string().min(1).max(200).optional(),
  sas_key: z.string().min(1).max(4096).optional().openapi({ description: "Write-only: never returned" }),
});

const StoragePayload = z.strictObject({
  credentials: z
    .record(z.string(), z.unknown())
    .optional()
    .openapi({ description: "Credentials of the store (e.g. a GCP service account). Write-only: never returned" }),
  bucket: z.string().min(1).max(255).optional(),
  security: StorageSecurity.optional(),
});

export const StorageInput = z
  .strictObject({ type: z.enum(STORAGE_TYPES), payload: StoragePayload })
  .superRefine((s, ctx) => {
    if (!s.payload.bucket) ctx.addIssue({ code: "custom", path: ["payload", "bucket"], message: "is required" });
    if (s.type === "AZURE") {
      for (const f of ["storage_account", "sas_key"] as const) {
        if (!s.payload.security?.[f]) {
          ctx.addIssue({ code: "custom", path: ["payload", "security", f], message: "is required for AZURE" });
        }
      }
    }
  })
  .openapi("TenantStorage");

export const TenantDataprocConfig = z
  .strictObject({
    autoscale_policy: z.string().min(1).max(1024).optional(),
    spark_worker_disk_size_in_gb: z.number().int().positive().max(65536).optional(),
    spark_master_disk_size_in_gb: z.number().int().positive().max(65536).optional(),
    master_node_type: z.string().min(1).max(200).optional(),
    worker_node_type: z.string().min(1).max(200).optional(),
    download_job_spark_properties: z.record(z.string(), z.string()).optional(),
  })
  .openapi("TenantDataprocConfig");

export const TenantInput = z
  .strictObject({
    id: TenantId.optional().openapi({ description: "If given, must equal the path's tenantId" }),
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).default(""),
    storage: StorageInput.nullable().optional(),
    data_ttl: z
      .number()
      .int()
      .positive()
      .max(36500)
      .default(DEFAULT_DATA_TTL_DAYS)
      .openapi({ description: "Days scan data and results are kept" }),
    free_upload_limit: z
      .number()
      .int()
      .positive()
      .max(Number.MAX_SAFE_INTEGER)
      .default(DEFAULT_FREE_UPLOAD_LIMIT)
      .openapi({ description: "Bytes one upload may carry (default 50 GB)" }),
    use_information_schema: z.boolean().default(false),
    "dataproc-config": TenantDataprocConfig.nullable().optional(),
  })
  .openapi("TenantConfigurationInput");
export type TenantInput = z.infer<typeof TenantInput>;

export const TenantSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    storage: z
      .object({
        type: z.string(),
        payload: z.object({
          bucket: z.string().optional(),
          security: z.object({ storage_account: z.string().optional() }).optional(),
        }),
      })
      .nullable()
      .openapi({ description: "The storage; its credentials and sas_key are write-only and never returned" }),
    data_ttl: z.number().int(),
    free_upload_limit: z.number().int(),
    use_information_schema: z.boolean(),
    "dataproc-config": TenantDataprocConfig.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("TenantConfiguration");
