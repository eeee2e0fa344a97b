import { z } from "@hono/zod-openapi";
import { storageEndpoint } from "../../connections";
import { TenantId } from "../params";

/** 50 GB = 50 × 10⁹ bytes (decimal, as storage is sold), the default upload size of a new tenant (spec section 8). */
export const DEFAULT_FREE_UPLOAD_LIMIT = 50 * 1000 ** 3;
/** Days scan data and results are kept unless the tenant says otherwise. */
export const DEFAULT_DATA_TTL_DAYS = 90;

export const STORAGE_TYPES = ["GCS", "S3", "AZURE", "R2"] as const;

const StorageSecurity = z.strictObject({
  storage_account: z.string().min(1).max(200).optional(),
  sas_key: z
    .string()
    .min(1)
    .max(4096)
    .nullable()
    .optional()
    .openapi({ description: "Write-only: never returned. Omitted: the stored one is kept; null clears it" }),
});

/** Where the store is, beyond its bucket: returned on GET (nothing secret). */
const StorageLocation = {
  region: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/, "must be a region name such as eu-west-1")
    .optional()
    .openapi({ description: "S3: the bucket's region (default us-east-1); R2: default auto" }),
  account_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/, "must be a Cloudflare account id (32 hex digits)")
    .optional()
    .openapi({ description: "R2: the Cloudflare account whose bucket it is (or give an endpoint)" }),
  endpoint: storageEndpoint.openapi({
    description:
      "Another endpoint than the provider's: an S3-compatible store, R2's https://{account_id}.r2.cloudflarestorage.com, " +
      "a private GCS or Blob endpoint",
  }),
};

const StoragePayload = z.strictObject({
  credentials: z
    .record(z.string(), z.unknown())
    .nullable()
    .optional()
    .openapi({
      description:
        "Credentials of the store: S3 and R2 {access_key, secret_key}; GCS a service-account key " +
        "{client_email, private_key, private_key_id}; AZURE uses security.sas_key. Write-only: never returned. " +
        "Omitted: the stored ones are kept (only while the store's address stays the same); null clears them",
    }),
  bucket: z.string().min(1).max(255).optional(),
  security: StorageSecurity.optional(),
  ...StorageLocation,
});

export const StorageInput = z
  .strictObject({ type: z.enum(STORAGE_TYPES), payload: StoragePayload })
  .superRefine((s, ctx) => {
    if (!s.payload.bucket) ctx.addIssue({ code: "custom", path: ["payload", "bucket"], message: "is required" });
    if (s.type === "AZURE" && !s.payload.security?.storage_account) {
      ctx.addIssue({
        code: "custom",
        path: ["payload", "security", "storage_account"],
        message: "is required for AZURE",
      });
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
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .openapi({ description: "Default: the stored name, or the tenant id for a new tenant" }),
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
    use_information_schema: z.boolean().default(false).openapi({
      description:
        "Database assets: columns from information_schema (true) or from the metadata of a zero-row query on the data (false)",
    }),
    "dataproc-config": TenantDataprocConfig.nullable().optional(),
    // Read-only fields of the GET answer, accepted so that GET → edit → PUT works; ignored.
    created_at: z.string().max(64).optional().openapi({ description: "Read-only; ignored" }),
    updated_at: z.string().max(64).optional().openapi({ description: "Read-only; ignored" }),
  })
  .openapi("TenantConfigurationInput", {
    example: {
      name: "Acme",
      description: "Acme's data platform",
      data_ttl: 90,
      free_upload_limit: 50000000000,
      use_information_schema: false,
    },
  });
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
          region: z.string().optional(),
          account_id: z.string().optional(),
          endpoint: z.string().optional(),
        }),
      })
      .nullable()
      .openapi({
        description:
          "The tenant's own bucket, where its uploaded batches are stored and read (none: the service's); " +
          "its credentials and sas_key are write-only and never returned",
      }),
    data_ttl: z.number().int(),
    free_upload_limit: z.number().int(),
    use_information_schema: z.boolean(),
    "dataproc-config": TenantDataprocConfig.nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("TenantConfiguration");
