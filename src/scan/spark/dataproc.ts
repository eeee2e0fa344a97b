/**
 * Google Cloud Dataproc workflow templates: `projects.regions.workflowTemplates.instantiateInline`
 * runs the driver as a PySpark job on a managed cluster built from dataproc_config (or the tenant's
 * dataproc-config), which Dataproc deletes when the workflow ends; the long-running operation is
 * read with `operations.get` and cancelled with `operations.cancel`. A Google OAuth token comes
 * from the connection's service account (the JWT bearer grant the GCS and BigQuery code uses).
 */

import type { OutboundPolicy } from "../../lib/outbound";
import { exchangeServiceAccountAssertion, type GcsServiceAccount } from "../connectors/gcs";
import { trimSlash } from "../sql/warehouse-api";
import { DATAPROC_IMAGE, dataprocImageRuntime, icebergRuntimePackage, withPackage } from "./iceberg-runtime";
import {
  type ErrorShape,
  providerCall,
  type RunStatus,
  runFailure,
  type SparkProviderClient,
  type SparkRunSpec,
  type SubmittedRun,
} from "./provider";

export interface DataprocBlock {
  master_node_type?: string;
  worker_node_type?: string;
  spark_master_disk_size_in_gb?: number;
  spark_worker_disk_size_in_gb?: number;
  autoscale_policy?: string;
  /** The cluster's image; default DATAPROC_IMAGE for an Iceberg run, Dataproc's own otherwise. */
  image_version?: string;
  /** The Iceberg release whose Spark runtime an Iceberg run adds; default ICEBERG_VERSION. */
  iceberg_runtime_version?: string;
  /** The tenant's dataproc-config only: Spark properties of its jobs. */
  download_job_spark_properties?: Record<string, string>;
}

export const DATAPROC_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** A node group of the managed cluster: machine type and boot disk as the block sets them. */
function nodeGroup(count: number, machine: string | undefined, diskGb: number | undefined) {
  return {
    numInstances: count,
    ...(machine ? { machineTypeUri: machine } : {}),
    ...(diskGb ? { diskConfig: { bootDiskSizeGb: diskGb } } : {}),
  };
}

/** The managed cluster's name of a job: at most 35 characters, as Dataproc allows. */
export const clusterNameOf = (jobId: string) =>
  `dq-${jobId.toLowerCase().replace(/[^a-z0-9-]/g, "-")}`.slice(0, 35).replace(/-+$/, "");

/** The inline WorkflowTemplate of a run: one managed cluster, one PySpark job. */
export function inlineWorkflow(block: DataprocBlock, spec: SparkRunSpec) {
  const properties: Record<string, string> = { ...(block.download_job_spark_properties ?? {}), ...spec.sparkConf };
  // The image whose Spark and Scala the Iceberg runtime is built for; a configured image is used for every run.
  const image = block.image_version ?? (spec.iceberg ? DATAPROC_IMAGE : undefined);
  if (spec.iceberg && image) {
    const { spark, scala } = dataprocImageRuntime(image);
    properties["spark.jars.packages"] = withPackage(
      properties["spark.jars.packages"],
      icebergRuntimePackage(spark, scala, block.iceberg_runtime_version),
    );
  }
  return {
    placement: {
      managedCluster: {
        // ManagedCluster.clusterName: 2–35 lower-case letters, digits and hyphens, a letter first,
        // no hyphen last (Dataproc appends a random suffix, so a lower-cased job id stays unique).
        clusterName: clusterNameOf(spec.jobId),
        config: {
          masterConfig: nodeGroup(1, block.master_node_type, block.spark_master_disk_size_in_gb),
          workerConfig: nodeGroup(2, block.worker_node_type, block.spark_worker_disk_size_in_gb),
          ...(block.autoscale_policy ? { autoscalingConfig: { policyUri: block.autoscale_policy } } : {}),
          ...(image ? { softwareConfig: { imageVersion: image } } : {}),
        },
      },
    },
    jobs: [
      {
        stepId: "profile",
        pysparkJob: {
          mainPythonFileUri: spec.driverUri,
          args: spec.args,
          ...(Object.keys(properties).length > 0 ? { properties } : {}),
        },
      },
    ],
  };
}

interface Operation {
  name?: string;
  done?: boolean;
  error?: { code?: number; message?: string };
  metadata?: { state?: string; graph?: { nodes?: Array<{ stepId?: string; state?: string; error?: string }> } };
}

/** A Dataproc client for one project and region. */
export function dataprocWorkflows(
  target: { project: string; region: string; endpoint?: string; account: GcsServiceAccount; block: DataprocBlock },
  policy?: OutboundPolicy,
): SparkProviderClient {
  const base = trimSlash(target.endpoint ?? "https://dataproc.googleapis.com");
  const shape: ErrorShape = {
    provider: "Dataproc",
    secrets: [target.account.private_key, target.account.private_key_id, target.account.client_email],
    read: (b) => {
      const e = (b.error ?? {}) as { status?: string; message?: string };
      return { code: e.status, message: e.message };
    },
  };
  let token: { accessToken: string; refreshAt: number } | undefined;
  async function call<T>(path: string, init: RequestInit): Promise<T> {
    if (!token || Date.now() >= token.refreshAt) {
      token = await exchangeServiceAccountAssertion(target.account, DATAPROC_SCOPE, policy);
    }
    const headers = { authorization: `Bearer ${token.accessToken}`, "content-type": "application/json" };
    return providerCall<T>(
      `${base}${path}`,
      { ...init, headers },
      { ...shape, secrets: [...shape.secrets, token.accessToken] },
      policy,
    );
  }
  const regionPath = `/v1/projects/${encodeURIComponent(target.project)}/regions/${encodeURIComponent(target.region)}`;
  return {
    provider: "DATAPROC",
    async submit(spec: SparkRunSpec): Promise<SubmittedRun> {
      // requestId makes a redelivered submit return the same workflow instead of a second one.
      const op = await call<Operation>(
        `${regionPath}/workflowTemplates:instantiateInline?requestId=${encodeURIComponent(spec.jobId)}`,
        { method: "POST", body: JSON.stringify(inlineWorkflow(target.block, spec)) },
      );
      if (!op.name) throw new Error("Dataproc instantiateInline answered without an operation name");
      return {
        runId: op.name,
        runUrl: `https://console.cloud.google.com/dataproc/workflows/list?project=${encodeURIComponent(target.project)}`,
        state: op.metadata?.state ?? "PENDING",
      };
    },
    async status(runId: string): Promise<RunStatus> {
      const op = await call<Operation>(`/v1/${runId}`, { method: "GET" });
      const state = op.metadata?.state ?? (op.done ? "DONE" : "PENDING");
      const failedNode = op.metadata?.graph?.nodes?.find((n) => n.state === "FAILED");
      if (!op.done) return { state, ended: false };
      const message = op.error?.message ?? failedNode?.error;
      return { state, ended: true, ...(message ? { failure: runFailure(message, shape.secrets) } : {}) };
    },
    async cancel(runId: string): Promise<void> {
      await call(`/v1/${runId}:cancel`, { method: "POST", body: "{}" });
    },
  };
}
