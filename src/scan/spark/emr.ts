/**
 * Amazon EMR over its JSON 1.1 API (`X-Amz-Target: ElasticMapReduce.<Action>`, SigV4 with
 * aws4fetch): RunJobFlow starts a transient cluster from emr_config whose one step is the driver's
 * spark-submit; DescribeCluster and ListSteps read its state; TerminateJobFlows cancels it.
 */

import { AwsClient } from "aws4fetch";
import type { OutboundPolicy } from "../../lib/outbound";
import { trimSlash } from "../sql/warehouse-api";
import { emrHasIceberg } from "./iceberg-runtime";
import {
  type ErrorShape,
  providerCall,
  type RunStatus,
  runFailure,
  type SparkProviderClient,
  type SparkRunSpec,
  type SubmittedRun,
} from "./provider";

export interface EmrBlock {
  master_instance_type?: string;
  worker_instance_type?: string;
  worker_instance_option?: "ON_DEMAND" | "SPOT";
  min_instance_count?: number;
  max_instance_count?: number;
  release_label?: string;
  service_role?: string;
  job_flow_role?: string;
  /** Where EMR keeps the cluster's and the step's logs after the cluster ends. */
  log_uri?: string;
}

/** The default log folder: beside the driver (s3://bucket/dq-monitor/spark/logs/). */
export const defaultLogUri = (driverUri: string) => `${driverUri.replace(/\/[^/]*$/, "")}/logs/`;

export const EMR_DEFAULTS = {
  release_label: "emr-7.5.0",
  instance_type: "m5.xlarge",
  service_role: "EMR_DefaultRole",
  job_flow_role: "EMR_EC2_DefaultRole",
} as const;

/** The RunJobFlow request of a run: instance groups and managed scaling from emr_config, one spark-submit step.
 * Its enumerated values are literal types, so test/scan/spark/provider-sdk-types.test.ts type-checks
 * the body against the AWS SDK's RunJobFlowCommandInput. */
export function runJobFlowRequest(block: EmrBlock, spec: SparkRunSpec) {
  const min = Math.max(1, block.min_instance_count ?? 1);
  const max = Math.max(min, block.max_instance_count ?? min);
  const release = block.release_label ?? EMR_DEFAULTS.release_label;
  const configurations = [
    ...(Object.keys(spec.sparkConf).length > 0
      ? [{ Classification: "spark-defaults", Properties: spec.sparkConf }]
      : []),
    // EMR's own Iceberg build on the cluster's classpath (6.5 and later; docs/resources/spark-providers.md).
    ...(spec.iceberg && emrHasIceberg(release)
      ? [{ Classification: "iceberg-defaults", Properties: { "iceberg.enabled": "true" } }]
      : []),
  ];
  return {
    Name: `dq-monitor full scan ${spec.jobId}`,
    // Without it the step's stderr (the driver's failure) is deleted with the cluster.
    LogUri: block.log_uri ?? defaultLogUri(spec.driverUri),
    ReleaseLabel: release,
    Applications: [{ Name: "Spark" }],
    ServiceRole: block.service_role ?? EMR_DEFAULTS.service_role,
    JobFlowRole: block.job_flow_role ?? EMR_DEFAULTS.job_flow_role,
    VisibleToAllUsers: true,
    Instances: {
      InstanceGroups: [
        {
          Name: "master",
          InstanceRole: "MASTER" as const,
          Market: "ON_DEMAND" as const,
          InstanceType: block.master_instance_type ?? EMR_DEFAULTS.instance_type,
          InstanceCount: 1,
        },
        {
          Name: "workers",
          InstanceRole: "CORE" as const,
          Market: block.worker_instance_option ?? "ON_DEMAND",
          InstanceType: block.worker_instance_type ?? EMR_DEFAULTS.instance_type,
          InstanceCount: min,
        },
      ],
      // The cluster ends with its step: nothing keeps running (or billing) after the scan.
      KeepJobFlowAliveWhenNoSteps: false,
      TerminationProtected: false,
    },
    ...(max > min
      ? {
          ManagedScalingPolicy: {
            ComputeLimits: { UnitType: "Instances" as const, MinimumCapacityUnits: min, MaximumCapacityUnits: max },
          },
        }
      : {}),
    ...(configurations.length > 0 ? { Configurations: configurations } : {}),
    Steps: [
      {
        Name: "dq-monitor profile",
        ActionOnFailure: "TERMINATE_CLUSTER" as const,
        HadoopJarStep: {
          Jar: "command-runner.jar",
          Args: ["spark-submit", "--deploy-mode", "cluster", spec.driverUri, ...spec.args],
        },
      },
    ],
    Tags: [{ Key: "dq-monitor-job", Value: spec.jobId }],
  };
}

interface StatusReason {
  Code?: string;
  Message?: string;
}
interface Step {
  Status?: { State?: string; FailureDetails?: { Reason?: string; Message?: string }; StateChangeReason?: StatusReason };
}

/** An EMR client for one account and region. */
export function emrJobFlows(
  account: { accessKeyId: string; secretAccessKey: string; region: string; endpoint?: string; block: EmrBlock },
  policy?: OutboundPolicy,
): SparkProviderClient {
  const url = `${trimSlash(account.endpoint ?? `https://elasticmapreduce.${account.region}.amazonaws.com`)}/`;
  const client = new AwsClient({
    accessKeyId: account.accessKeyId,
    secretAccessKey: account.secretAccessKey,
    service: "elasticmapreduce",
    region: account.region,
    // The queue and the cron retry with backoff; aws4fetch's own retries would multiply that.
    retries: 0,
  });
  const shape: ErrorShape = {
    provider: "EMR",
    secrets: [account.secretAccessKey, account.accessKeyId],
    read: (b) => ({
      code: typeof b.__type === "string" ? b.__type.split("#").pop() : undefined,
      message: (b.message ?? b.Message) as string | undefined,
    }),
    busy: /Throttling|RequestLimitExceeded|InternalServer/,
  };
  async function call<T>(action: string, body: unknown): Promise<T> {
    const init = {
      method: "POST",
      headers: { "content-type": "application/x-amz-json-1.1", "x-amz-target": `ElasticMapReduce.${action}` },
      body: JSON.stringify(body),
    };
    const signed = await client.sign(url, init);
    return providerCall<T>(signed.url, { ...init, headers: signed.headers }, shape, policy);
  }
  const console = (id: string) =>
    `https://${account.region}.console.aws.amazon.com/emr/home?region=${account.region}#/clusterDetails/${id}`;
  return {
    provider: "EMR",
    async submit(spec: SparkRunSpec): Promise<SubmittedRun> {
      const { JobFlowId } = await call<{ JobFlowId?: string }>("RunJobFlow", runJobFlowRequest(account.block, spec));
      if (!JobFlowId) throw new Error("EMR RunJobFlow answered without a JobFlowId");
      return { runId: JobFlowId, runUrl: console(JobFlowId), state: "STARTING" };
    },
    async status(runId: string): Promise<RunStatus> {
      const { Cluster } = await call<{ Cluster?: { Status?: { State?: string; StateChangeReason?: StatusReason } } }>(
        "DescribeCluster",
        { ClusterId: runId },
      );
      const { Steps = [] } = await call<{ Steps?: Step[] }>("ListSteps", { ClusterId: runId });
      const cluster = Cluster?.Status?.State ?? "UNKNOWN";
      const step = Steps[0]?.Status;
      const stepState = step?.State ?? "PENDING";
      const state = `${cluster}/${stepState}`;
      if (stepState === "COMPLETED") return { state, ended: true };
      const stepFailed = ["FAILED", "CANCELLED", "INTERRUPTED"].includes(stepState);
      const clusterEnded = cluster === "TERMINATED" || cluster === "TERMINATED_WITH_ERRORS";
      if (!stepFailed && !clusterEnded) return { state, ended: false };
      const message =
        step?.FailureDetails?.Message ??
        step?.FailureDetails?.Reason ??
        Cluster?.Status?.StateChangeReason?.Message ??
        state;
      return { state, ended: true, failure: runFailure(message, shape.secrets) };
    },
    async cancel(runId: string): Promise<void> {
      await call("TerminateJobFlows", { JobFlowIds: [runId] });
    },
  };
}
