import { z } from "@hono/zod-openapi";

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
  })
  .openapi("DataprocConfig");

export const EmrConfig = z
  .strictObject({
    master_instance_type: text("Instance type of the master node").optional(),
    worker_instance_type: text("Instance type of workers").optional(),
    worker_instance_option: z.enum(["ON_DEMAND", "SPOT"]).optional(),
    min_instance_count: instanceCount("Minimum workers for autoscaling").optional(),
    max_instance_count: instanceCount("Maximum workers for autoscaling").optional(),
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
  })
  .superRefine(checkInstanceBounds)
  .openapi("DatabricksConfig");

export const SparkJobConfigSchema = z
  .object({
    spark_properties: SparkProperties.optional(),
    dataproc_config: DataprocConfig.optional(),
    emr_config: EmrConfig.optional(),
    databricks_config: DatabricksConfig.optional(),
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
  })
  .openapi("PutSparkJobConfig", { example: { spark_properties: { "spark.executor.memory": "4g" } } });
