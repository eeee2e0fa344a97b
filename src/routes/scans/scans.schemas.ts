import { z } from "@hono/zod-openapi";
import { LOCATIONS, type ScanRequest } from "../../jobs/scan-requests";
import { controlCharacterProblem } from "../../scan/sql/identifiers";

/** The fields of a scan request, unregistered: other bodies build on them without a $ref. */
export const ScanRequestFields = {
  location: z
    .enum([...new Set(LOCATIONS)] as [string, ...string[]])
    .optional()
    .openapi({ description: "Where the data is; must be the asset's connection type (GBQ = BIGQUERY)" }),
  path: z
    .string()
    .min(1)
    .max(1024)
    .optional()
    .openapi({ description: "Files: object key or pattern with * and ?, overriding the asset's payload.path" }),
  format: z.enum(["csv", "ndjson", "json", "parquet"]).optional(),
  delimiter: z.string().length(1).optional().openapi({ description: "CSV separator, overriding options.separator" }),
  table: z
    .string()
    .min(1)
    .max(512)
    .superRefine((name, ctx) => {
      const problem = controlCharacterProblem(name);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional()
    .openapi({ description: "Databases: table overriding the payload's" }),
  query: z
    .string()
    .min(1)
    .max(100_000)
    .optional()
    .openapi({ description: "Databases: a SELECT whose rows are profiled instead of the table" }),
  full_scan: z.boolean().optional().openapi({
    description:
      "true: a full scan on the tenant's Spark cluster (fails, saying why, when the tenant has none); ignored when the asset's only_light_scan is 'true'",
  }),
};

export const ScanRequestBody = z.strictObject(ScanRequestFields).openapi("ScanRequest", {
  example: { format: "csv", delimiter: "," },
  description: "Unset fields come from the asset's payload, options and connection",
});
export type ScanRequestBody = z.infer<typeof ScanRequestBody> & ScanRequest;

export const ScanAcceptedSchema = z
  .object({ message: z.string(), job_id: z.string() })
  .openapi("ScanAccepted", { description: "Upload response (spec 2.11)" });

export const ScanJobSchema = z
  .object({
    job_id: z.string(),
    asset_id: z.string(),
    kind: z.enum(["ANALYZE", "SCAN", "SCHEMA"]),
    status: z.enum(["QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"]),
    trigger: z.string(),
    progress: z.object({
      rows: z.number().int(),
      bytes: z.number().int(),
      total_bytes: z.number().int().nullable(),
      fraction: z.number().nullable(),
    }),
    engine: z
      .enum(["WORKER", "SPARK"])
      .openapi({ description: "WORKER: a light scan; SPARK: a full scan on the tenant's cluster" }),
    engine_reason: z.string().nullable().openapi({
      description:
        "Why the scan runs where it runs: in the Worker (a light scan) or on the tenant's Spark cluster (a full scan)",
    }),
    provider: z
      .object({
        name: z.enum(["DATABRICKS", "EMR", "DATAPROC"]),
        run_id: z
          .string()
          .nullable()
          .openapi({ description: "Databricks run_id, EMR cluster id, Dataproc operation name" }),
        run_url: z.string().nullable(),
        state: z.string().nullable().openapi({ description: "The provider's own state of the run, as last polled" }),
      })
      .nullable()
      .openapi({ description: "Full scans: the provider and its run; null for light scans" }),
    attempts: z.number().int(),
    error: z.string().nullable(),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    duration_ms: z.number().int().nullable(),
  })
  .openapi("ScanJob");
