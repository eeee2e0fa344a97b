/**
 * Databricks Jobs API 2.1: `POST /api/2.1/jobs/runs/submit` (a one-time run on a new cluster
 * built from databricks_config), `GET /api/2.1/jobs/runs/get?run_id=`, `POST /api/2.1/jobs/runs/cancel`,
 * with the DELTALAKE connection's workspace host and its personal access token or service principal's
 * OAuth token (Bearer, src/scan/connectors/databricks-auth.ts).
 */

import type { OutboundPolicy } from "../../lib/outbound";
import { type DatabricksAuth, databricksBearer } from "../connectors/databricks-auth";
import { ConnectorError } from "../connectors/types";
import { trimSlash } from "../sql/warehouse-api";
import {
  type ErrorShape,
  providerCall,
  type RunStatus,
  runFailure,
  type SparkProviderClient,
  type SparkRunSpec,
  type SubmittedRun,
} from "./provider";

export interface DatabricksBlock {
  spark_version?: string;
  node_type?: string;
  instance_pool_id?: string;
  driver_instance_pool_id?: string;
  policy_id?: string;
  min_instance_count?: number;
  max_instance_count?: number;
}

/** A current LTS runtime, when databricks_config names none. */
export const DEFAULT_DATABRICKS_RUNTIME = "15.4.x-scala2.12";

/** The `new_cluster` of the run: databricks_config's fields under the Clusters API's names. */
export function databricksCluster(block: DatabricksBlock, sparkConf: Record<string, string>) {
  const min = block.min_instance_count ?? 1;
  const max = Math.max(min, block.max_instance_count ?? min);
  return {
    spark_version: block.spark_version ?? DEFAULT_DATABRICKS_RUNTIME,
    // A pool decides the node type of its instances: node_type_id goes only without one.
    ...(block.instance_pool_id
      ? { instance_pool_id: block.instance_pool_id }
      : block.node_type
        ? { node_type_id: block.node_type }
        : {}),
    ...(block.driver_instance_pool_id ? { driver_instance_pool_id: block.driver_instance_pool_id } : {}),
    ...(block.policy_id ? { policy_id: block.policy_id, apply_policy_default_values: true } : {}),
    ...(max > min ? { autoscale: { min_workers: min, max_workers: max } } : { num_workers: min }),
    ...(Object.keys(sparkConf).length > 0 ? { spark_conf: sparkConf } : {}),
  };
}

/** The body of runs/submit: one PySpark task on a new cluster. */
export function submitRunRequest(block: DatabricksBlock, spec: SparkRunSpec) {
  return {
    run_name: `dq-monitor full scan ${spec.jobId}`,
    // A second submit with the same token (a redelivered queue message) returns the same run.
    idempotency_token: spec.jobId,
    timeout_seconds: spec.timeoutSeconds,
    tasks: [
      {
        task_key: "profile",
        new_cluster: databricksCluster(block, spec.sparkConf),
        spark_python_task: { python_file: spec.driverUri, parameters: spec.args },
      },
    ],
  };
}

interface RunState {
  life_cycle_state?: string;
  result_state?: string;
  state_message?: string;
}

/** A Databricks client for one workspace. */
export function databricksJobs(
  workspace: { host: string; port?: string; endpoint?: string; auth: DatabricksAuth; block: DatabricksBlock },
  policy?: OutboundPolicy,
): SparkProviderClient {
  const base = trimSlash(
    workspace.endpoint ??
      `https://${workspace.host}${workspace.port && workspace.port !== "443" ? `:${workspace.port}` : ""}`,
  );
  const bearer = databricksBearer(base, workspace.auth, policy);
  const shape: ErrorShape = {
    provider: "Databricks",
    // The bearer's list grows with each token it is issued.
    secrets: bearer.secrets,
    read: (b) => ({ code: b.error_code as string | undefined, message: b.message as string | undefined }),
  };
  const call = async <T>(path: string, init: RequestInit): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      const headers = { authorization: await bearer.authorization(), "content-type": "application/json" };
      try {
        return await providerCall<T>(`${base}${path}`, { ...init, headers }, shape, policy);
      } catch (err) {
        if (!(err instanceof ConnectorError && err.kind === "auth")) throw err;
        // A refused OAuth token (revoked before its expiry) is forgotten; the call is tried once more.
        bearer.refused();
        if (!bearer.renews || attempt > 0) throw err;
      }
    }
  };
  return {
    provider: "DATABRICKS",
    async submit(spec: SparkRunSpec): Promise<SubmittedRun> {
      const { run_id } = await call<{ run_id?: number }>("/api/2.1/jobs/runs/submit", {
        method: "POST",
        body: JSON.stringify(submitRunRequest(workspace.block, spec)),
      });
      if (run_id === undefined) throw new Error("Databricks runs/submit answered without a run_id");
      return { runId: String(run_id), runUrl: `${base}/#job/runs/${run_id}`, state: "PENDING" };
    },
    async status(runId: string): Promise<RunStatus> {
      const run = await call<{ state?: RunState; run_page_url?: string }>(
        `/api/2.1/jobs/runs/get?run_id=${encodeURIComponent(runId)}`,
        { method: "GET" },
      );
      const s = run.state ?? {};
      const life = s.life_cycle_state ?? "UNKNOWN";
      const ended = ["TERMINATED", "SKIPPED", "INTERNAL_ERROR"].includes(life);
      const state = s.result_state ? `${life}/${s.result_state}` : life;
      const ok = life === "TERMINATED" && s.result_state === "SUCCESS";
      return {
        state,
        ended,
        ...(ended && !ok ? { failure: runFailure(s.state_message || state, shape.secrets) } : {}),
        ...(run.run_page_url ? { runUrl: run.run_page_url } : {}),
      };
    },
    async cancel(runId: string): Promise<void> {
      await call("/api/2.1/jobs/runs/cancel", { method: "POST", body: JSON.stringify({ run_id: Number(runId) }) });
    },
  };
}
