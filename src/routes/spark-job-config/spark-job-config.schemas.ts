import { z } from "@hono/zod-openapi";
import {
  DATAPROC_IMAGE,
  DATAPROC_IMAGE_PATTERN,
  ICEBERG_VERSION,
  ICEBERG_VERSION_PATTERN,
} from "../../scan/spark/iceberg-runtime";

const text = (description: string) => z.string().min(1).max(1024).openapi({ description });
const diskSize = (description: string) => z.number().int().positive().max(65536).openapi({ description });
const instanceCount = (description: string) => z.number().int().nonnegative().max(100_000).openapi({ description });

/** Autoscaling bounds: min may not exceed max (the issue names max_instance_count). */
function checkInstanceBounds(
  block: { min_instance_count?: number; max_instance_count?: number },
  ctx: z.RefinementCtx,
) {
  const { min_instance_count: min, max_instance_count: max } = block;
  if (typeof min === "number" && typeof max === "number" && min > max) {
    ctx.addIssue({
      code: "custom",
      path: ["max_instance_count"],
      message: `must be at least min_instance_count (${min})`,
    });
  }
}

/** Fields every provider block may carry beyond the spec's (docs/resources/settings.md). */
const dispatchFields = (credential: string, driverDefault: string) => ({
  connection_id: z
    .number()
    .int()
    .positive()
    .optional()
    .openapi({
      description: `Connection whose credential starts the run (${credential}); default the asset's own when it fits`,
    }),
  driver_uri: text(`Where the PySpark driver spark/dq_profile.py is deployed; default ${driverDefault}`).optional(),
});
const providerEndpoint = (provider: string) =>
  z
    .url({ protocol: /^https?$/ })
    .max(1024)
    .optional()
    .openapi({ description: `API base URL instead of ${provider} (a private endpoint)` });
const regionName = z
  .string()
  .regex(/^[a-z0-9-]{1,64}$/, "must be a region name such as europe-west1")
  .optional();

export const SparkProperties = z
  .record(z.string().min(1).max(256), z.string().max(4096))
  .openapi("SparkProperties", { description: 'Spark settings, e.g. {"spark.executor.memory": "4g"}' });

export const DataprocConfig = z
  .strictObject({
    master_node_type: text("Machine type of the master node").optional(),
    worker_node_type: text("Machine type of worker nodes").optional(),
    spark_master_disk_size_in_gb: diskSize("Master boot disk size, GB").optional(),
    spark_worker_disk_size_in_gb: diskSize("Worker boot disk size, GB").optional(),
    autoscale_policy: text("Full resource path to an autoscaling policy").optional(),
    region: regionName.openapi({ description: "Dataproc region; default us-central1" }),
    project_id: text("Google Cloud project; default the service account's project_id").optional(),
    endpoint: providerEndpoint("https://dataproc.googleapis.com"),
    image_version: z
      .string()
      .regex(DATAPROC_IMAGE_PATTERN, "must be a Dataproc 2.1, 2.2 or 2.3 image version such as 2.2-debian12")
      .optional()
      .openapi({
        description: `The cluster's image (2.1, 2.2 or 2.3 lines); default ${DATAPROC_IMAGE} for an Iceberg table, Dataproc's default otherwise`,
      }),
    iceberg_runtime_version: z
      .string()
      .regex(ICEBERG_VERSION_PATTERN, "must be an Iceberg release such as 1.6.1")
      .optional()
      .openapi({
        description: `The Iceberg release whose Spark runtime an Iceberg table's run adds (built for the image's Spark); default ${ICEBERG_VERSION}`,
      }),
    ...dispatchFields("a GCP service account", "gs://{tenant storage bucket}/dq-monitor/spark/dq_profile.py"),
  })
  .openapi("DataprocConfig");

export const EmrConfig = z
  .strictObject({
    master_instance_type: text("Instance type of the master node").optional(),
    worker_instance_type: text("Instance type of workers").optional(),
    worker_instance_option: z.enum(["ON_DEMAND", "SPOT"]).optional(),
    min_instance_count: instanceCount("Minimum workers for autoscaling").optional(),
    max_instance_count: instanceCount("Maximum workers for autoscaling").optional(),
    region: regionName.openapi({ description: "AWS region; default the connection's region, else us-east-1" }),
    release_label: text("EMR release; default emr-7.5.0").optional(),
    service_role: text("EMR service role; default EMR_DefaultRole").optional(),
    job_flow_role: text("EC2 instance profile of the cluster; default EMR_EC2_DefaultRole").optional(),
    log_uri: text("s3:// folder for the cluster's and the step's logs; default the driver's folder + logs/")
      .regex(/^s3n?:\/\//, "must be an s3:// URI")
      .optional(),
    endpoint: providerEndpoint("https://elasticmapreduce.{region}.amazonaws.com"),
    ...dispatchFields("AWS keys", "s3://{tenant storage bucket}/dq-monitor/spark/dq_profile.py"),
  })
  .superRefine(checkInstanceBounds)
  .openapi("EmrConfig");

export const DatabricksConfig = z
  .strictObject({
    spark_version: text("Runtime version").optional(),
    node_type: text("VM type of worker nodes").optional(),
    instance_pool_id: text("Instance pool for workers").optional(),
    driver_instance_pool_id: text("Instance pool for the driver").optional(),
    policy_id: text("Cluster policy to apply").optional(),
    min_instance_count: instanceCount("Minimum workers for autoscaling").optional(),
    max_instance_count: instanceCount("Maximum workers for autoscaling").optional(),
    ...dispatchFields(
      "a DELTALAKE connection's host and its token or service principal",
      "dbfs:/dq-monitor/spark/dq_profile.py",
    ),
  })
  .superRefine(checkInstanceBounds)
  .superRefine((block, ctx) => {
    // Databricks refuses a new_cluster without node_type_id unless a pool or a policy sets it.
    if (!block.node_type && !block.instance_pool_id && !block.policy_id) {
      ctx.addIssue({
        code: "custom",
        path: ["node_type"],
        message: "Databricks needs a node type: set node_type, instance_pool_id or policy_id",
      });
    }
  })
  .openapi("DatabricksConfig");

const thresholdBytes = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional().openapi({
  description:
    "Files larger than this go to Spark when a provider is configured; default 1 GiB. null on PUT restores the default",
});

export const SparkJobConfigSchema = z
  .object({
    spark_properties: SparkProperties.optional(),
    dataproc_config: DataprocConfig.optional(),
    emr_config: EmrConfig.optional(),
    databricks_config: DatabricksConfig.optional(),
    full_scan_threshold_bytes: thresholdBytes,
  })
  .openapi("SparkJobConfig", { description: "Only the blocks that are set; {} when nothing is saved" });

export const PutSparkJobConfigBody = z
  .strictObject({
    spark_properties: SparkProperties.nullable()
      .optional()
      .openapi({ description: "Replaces the stored Spark properties; null clears them; omitted keeps them" }),
    dataproc_config: DataprocConfig.nullable()
      .optional()
      .openapi({ description: "Replaces the whole Dataproc block; null clears it; omitted keeps it" }),
    emr_config: EmrConfig.nullable()
      .optional()
      .openapi({ description: "Replaces the whole EMR block; null clears it; omitted keeps it" }),
    databricks_config: DatabricksConfig.nullable()
      .optional()
      .openapi({ description: "Replaces the whole Databricks block; null clears it; omitted keeps it" }),
    full_scan_threshold_bytes: thresholdBytes.nullable(),
  })
  .openapi("PutSparkJobConfig", { example: { spark_properties: { "spark.executor.memory": "4g" } } });
