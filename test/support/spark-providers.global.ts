/**
 * One local HTTP server playing the three Spark providers' public APIs, each checking requests as
 * its reference documents them and answering in its shapes:
 *   /dbx      Databricks Jobs API 2.1: runs/submit, runs/get, runs/cancel (a personal access token,
 *             or a service principal's token from /dbx/oidc/v1/token: databricks-oauth.ts)
 *   /emr      Amazon EMR, JSON 1.1 (X-Amz-Target ElasticMapReduce.*), SigV4: RunJobFlow,
 *             DescribeCluster, ListSteps, TerminateJobFlows
 *   /dataproc Dataproc v1 workflowTemplates:instantiateInline, operations get/cancel (Google OAuth
 *             bearer from /google/token, the JWT bearer grant)
 * A run answers RUNNING to its first status read and has ended at the next one. Behaviour is chosen
 * by the driver URI the test configures: a path with /fail/ makes the run fail with the provider's
 * message, /busy/ makes the submit throttled (429, or EMR's ThrottlingException).
 *
 * Test-only endpoints: GET /_test/runs?job=<job id> (what was submitted and every call since), and
 * POST /_test/sign?job=<job id>[&ts=<unix seconds>] with a body: the callback the driver would send
 * (its URL, and the X-DQ-Timestamp / X-DQ-Signature headers signed with the job's secret from the
 * submitted arguments, exactly as spark/dq_profile.py signs). A submit whose driver URI has /hold/
 * waits until POST /_test/release?match=<text of its body>; GET /_test/held?match=<text> counts the
 * waiting ones: a test's way to act while a submit is in flight.
 */

import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { exportPKCS8, generateKeyPair } from "jose";
import type { TestProject } from "vitest/node";
import { createDatabricksOAuth, type DatabricksOAuthFixture } from "./databricks-oauth";
import { MODELS, shapeErrors } from "./dts-shapes";
import { type Google, googleToken } from "./warehouses/bigquery";
import { HOST, readBody, send } from "./warehouses/shared";
import { checkSigV4 } from "./warehouses/sigv4";

export interface SparkProviderFixtures {
  control: string;
  databricks: { endpoint: string; host: string; token: string; oauth: DatabricksOAuthFixture };
  emr: { endpoint: string; region: string; accessKey: string; secretKey: string };
  dataproc: {
    endpoint: string;
    project: string;
    region: string;
    account: { client_email: string; private_key: string; private_key_id: string; token_uri: string };
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    sparkProviders: SparkProviderFixtures;
  }
}

type Provider = "DATABRICKS" | "EMR" | "DATAPROC";

/** A run as the fake keeps it: what was submitted, the driver's arguments, and the calls since. */
interface Run {
  provider: Provider;
  runId: string;
  jobId: string;
  body: Record<string, unknown>;
  args: string[];
  driverUri: string;
  reads: number;
  cancelled: boolean;
  calls: string[];
}

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
const need = (ok: unknown, what: string) => {
  if (!ok) throw new Refused(400, "INVALID_PARAMETER_VALUE", what);
};
const isStr = (v: unknown): v is string => typeof v === "string" && v.length > 0;
const isInt = (v: unknown): v is number => Number.isInteger(v);
const behaviour = (driverUri: string) =>
  driverUri.includes("/fail/") ? "fail" : driverUri.includes("/busy/") ? "busy" : "ok";
const FAILURE =
  "Traceback (most recent call last): pyspark.errors.AnalysisException: [PATH_NOT_FOUND] Path does not exist";

function parseJson(body: Buffer): Record<string, unknown> {
  try {
    const v = JSON.parse(body.toString("utf8"));
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // falls through
  }
  throw new Refused(400, "MALFORMED_REQUEST", "Could not parse request object");
}

/** The job id is the driver's --job-id argument. */
function jobIdOf(args: string[]): string {
  const i = args.indexOf("--job-id");
  need(i >= 0 && isStr(args[i + 1]), "the driver's arguments carry no --job-id");
  return args[i + 1]!;
}

/** The EMR operations the fake plays, and their input in the SDK's model (models_0.d.ts). */
const EMR_INPUTS: Record<string, string> = {
  RunJobFlow: "RunJobFlowInput",
  DescribeCluster: "DescribeClusterInput",
  ListSteps: "ListStepsInput",
  TerminateJobFlows: "TerminateJobFlowsInput",
};

export default async function setup(project: TestProject) {
  const runs = new Map<string, Run>(); // by provider run id
  const byJob = new Map<string, Run>();
  const google: Google = { tokenUri: "", accounts: new Map(), tokens: new Map() };
  const dbxToken = `dapi${randomBytes(16).toString("hex")}`;
  const dbxOAuth = createDatabricksOAuth(dbxToken);
  const aws = {
    accessKeyId: "AKIADQSPARKTEST0001",
    secretAccessKey: randomBytes(20).toString("base64"),
    region: "eu-west-1",
  };
  const keys = await generateKeyPair("RS256", { extractable: true });

  function record(provider: Provider, runId: string, body: Record<string, unknown>, args: string[], driverUri: string) {
    const run: Run = {
      provider,
      runId,
      jobId: jobIdOf(args),
      body,
      args,
      driverUri,
      reads: 0,
      cancelled: false,
      calls: ["submit"],
    };
    runs.set(runId, run);
    byJob.set(run.jobId, run);
    return run;
  }
  function runOf(runId: string, status = 400, code = "RESOURCE_DOES_NOT_EXIST"): Run {
    const run = runs.get(runId);
    if (!run) throw new Refused(status, code, `Run ${runId} does not exist.`);
    return run;
  }
  /** Where a run stands: RUNNING after its first read, ended from the second on. */
  const stateOf = (run: Run) =>
    run.cancelled
      ? "cancelled"
      : run.reads < 2
        ? "running"
        : behaviour(run.driverUri) === "fail"
          ? "failed"
          : "succeeded";
  const advance = (run: Run) => {
    run.reads++;
    return stateOf(run);
  };

  // ---- Databricks Jobs API 2.1 ----
  async function databricks(req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer) {
    const path = url.pathname.slice("/dbx".length);
    if (dbxOAuth.handle(req, res, path, raw)) return;
    if (!dbxOAuth.accepts(req.headers.authorization)) {
      throw new Refused(401, "UNAUTHENTICATED", "Invalid access token.");
    }
    if (path === "/api/2.1/jobs/runs/submit" && req.method === "POST") {
      need(String(req.headers["content-type"]).startsWith("application/json"), "Content-Type must be application/json");
      const body = parseJson(raw);
      // The body as the Databricks SDK's model (from Databricks' OpenAPI) defines SubmitRun.
      const refused = shapeErrors(MODELS.databricksJobs, "SubmitRun", body);
      need(refused.length === 0, refused.join("; "));
      need(isStr(body.run_name), "run_name must be a string");
      need(
        body.idempotency_token === undefined || (isStr(body.idempotency_token) && body.idempotency_token.length <= 64),
        "idempotency_token: at most 64 characters",
      );
      need(body.timeout_seconds === undefined || isInt(body.timeout_seconds), "timeout_seconds must be an integer");
      const tasks = body.tasks as Array<Record<string, any>> | undefined;
      need(Array.isArray(tasks) && tasks.length === 1, "tasks: one task expected");
      const task = tasks![0]!;
      need(isStr(task.task_key), "tasks[0].task_key is required");
      const cluster = task.new_cluster as Record<string, any> | undefined;
      need(cluster && isStr(cluster.spark_version), "new_cluster.spark_version is required");
      need(
        !(cluster!.instance_pool_id && cluster!.node_type_id),
        "node_type_id cannot be set together with instance_pool_id",
      );
      // Databricks: a cluster's node type comes from node_type_id, its pool, or a policy that fixes it.
      need(
        isStr(cluster!.node_type_id) || isStr(cluster!.instance_pool_id) || isStr(cluster!.policy_id),
        "The cluster must specify node_type_id, instance_pool_id or a policy_id that sets it",
      );
      need(
        isInt(cluster!.num_workers) !== (cluster!.autoscale !== undefined),
        "exactly one of num_workers or autoscale",
      );
      if (cluster!.autoscale) {
        const { min_workers, max_workers } = cluster!.autoscale;
        need(
          isInt(min_workers) && isInt(max_workers) && min_workers <= max_workers,
          "autoscale: min_workers <= max_workers",
        );
      }
      const py = task.spark_python_task as { python_file?: unknown; parameters?: unknown } | undefined;
      need(py && isStr(py.python_file), "spark_python_task.python_file is required");
      need(
        Array.isArray(py!.parameters) && (py!.parameters as unknown[]).every((p) => typeof p === "string"),
        "parameters must be strings",
      );
      if (behaviour(String(py!.python_file)) === "busy") {
        throw new Refused(429, "REQUEST_LIMIT_EXCEEDED", "Too many requests. Please wait a moment and try again.");
      }
      const same = [...runs.values()].find(
        (r) => r.provider === "DATABRICKS" && r.body.idempotency_token === body.idempotency_token,
      );
      if (same) return send(res, 200, { run_id: Number(same.runId) });
      const runId = String(100_000 + runs.size);
      record("DATABRICKS", runId, body, py!.parameters as string[], String(py!.python_file));
      return send(res, 200, { run_id: Number(runId) });
    }
    if (path === "/api/2.1/jobs/runs/get" && req.method === "GET") {
      const runId = url.searchParams.get("run_id") ?? "";
      need(/^\d+$/.test(runId), "run_id must be an integer");
      const run = runOf(runId);
      run.calls.push("get");
      const s = advance(run);
      const state =
        s === "running"
          ? { life_cycle_state: "RUNNING", state_message: "In run" }
          : s === "succeeded"
            ? { life_cycle_state: "TERMINATED", result_state: "SUCCESS", state_message: "" }
            : s === "cancelled"
              ? { life_cycle_state: "TERMINATED", result_state: "CANCELED", state_message: "Run cancelled." }
              : { life_cycle_state: "TERMINATED", result_state: "FAILED", state_message: FAILURE };
      const answer = { run_id: Number(runId), run_page_url: `https://${url.host}/#job/runs/${runId}`, state };
      // The answer is a Run of the SDK's model, or the fake has drifted (a 500 fails the test).
      const drift = shapeErrors(MODELS.databricksJobs, "Run", answer);
      if (drift.length) throw new Error(`the fake's runs/get answer is not a Run: ${drift.join("; ")}`);
      return send(res, 200, answer);
    }
    if (path === "/api/2.1/jobs/runs/cancel" && req.method === "POST") {
      const body = parseJson(raw);
      const refused = shapeErrors(MODELS.databricksJobs, "CancelRun", body);
      need(refused.length === 0, refused.join("; "));
      need(isInt(body.run_id), "run_id must be an integer");
      const run = runOf(String(body.run_id));
      run.calls.push("cancel");
      run.cancelled = true;
      return send(res, 200, {});
    }
    throw new Refused(404, "ENDPOINT_NOT_FOUND", `No API found for '${req.method} ${path}'`);
  }

  // ---- Amazon EMR (JSON 1.1, SigV4) ----
  async function emr(req: IncomingMessage, res: ServerResponse, _url: URL, raw: Buffer) {
    const awsError = (status: number, type: string, message: string) =>
      send(res, status, { __type: type, message }, "application/x-amz-json-1.1");
    if (req.method !== "POST") return awsError(404, "UnknownOperationException", "");
    if (req.headers["content-type"] !== "application/x-amz-json-1.1") {
      return awsError(400, "SerializationException", "Content-Type must be application/x-amz-json-1.1");
    }
    const bad = checkSigV4(req, raw, { ...aws, service: "elasticmapreduce" });
    if (bad) return awsError(bad.status, bad.type, bad.message);
    const action = /^ElasticMapReduce\.(\w+)$/.exec(String(req.headers["x-amz-target"] ?? ""))?.[1];
    let body: Record<string, any>;
    try {
      body = parseJson(raw);
    } catch {
      return awsError(400, "SerializationException", "Start of structure or map found where not expected.");
    }
    const invalid = (m: string) => awsError(400, "ValidationException", m);
    // Each operation's input as the AWS SDK's model of EMR defines it: no unknown field, none missing.
    const refused = action && EMR_INPUTS[action] ? shapeErrors(MODELS.emr, EMR_INPUTS[action], body) : [];
    if (refused.length) return invalid(refused.join("; "));
    switch (action) {
      case "RunJobFlow": {
        if (!isStr(body.Name) || body.Name.length > 256) return invalid("Name is required (at most 256 characters)");
        if (body.LogUri !== undefined && (!isStr(body.LogUri) || !/^s3n?:\/\/[^/]+/.test(body.LogUri)))
          return invalid("LogUri must be an s3:// location");
        const groups = body.Instances?.InstanceGroups as Array<Record<string, any>> | undefined;
        if (!Array.isArray(groups)) return invalid("Instances.InstanceGroups is required");
        for (const g of groups) {
          if (!["MASTER", "CORE", "TASK"].includes(g.InstanceRole))
            return invalid("InstanceRole must be MASTER, CORE or TASK");
          if (!isStr(g.InstanceType) || !isInt(g.InstanceCount))
            return invalid("InstanceType and InstanceCount are required");
          if (g.Market !== undefined && !["ON_DEMAND", "SPOT"].includes(g.Market))
            return invalid("Market must be ON_DEMAND or SPOT");
        }
        if (groups.filter((g) => g.InstanceRole === "MASTER").length !== 1)
          return invalid("exactly one MASTER instance group");
        const limits = body.ManagedScalingPolicy?.ComputeLimits;
        if (limits) {
          if (!["Instances", "InstanceFleetUnits", "VCPU"].includes(limits.UnitType))
            return invalid("ComputeLimits.UnitType is not valid");
          if (!(limits.MinimumCapacityUnits <= limits.MaximumCapacityUnits))
            return invalid("MinimumCapacityUnits must not exceed MaximumCapacityUnits");
        }
        const step = (body.Steps as Array<Record<string, any>> | undefined)?.[0];
        if (!step || !isStr(step.Name) || !isStr(step.HadoopJarStep?.Jar))
          return invalid("Steps[].Name and HadoopJarStep.Jar are required");
        if (
          !["TERMINATE_CLUSTER", "CANCEL_AND_WAIT", "CONTINUE", "TERMINATE_JOB_FLOW"].includes(step.ActionOnFailure)
        ) {
          return invalid("ActionOnFailure is not valid");
        }
        const args = step.HadoopJarStep.Args as string[];
        // spark-submit [options] <app> [app arguments]: the app is the first argument ending in .py.
        const app = args.findIndex((a) => a.endsWith(".py"));
        if (args[0] !== "spark-submit" || app < 0) return invalid("the step runs no spark-submit of a Python file");
        if (behaviour(args[app]!) === "busy") return awsError(400, "ThrottlingException", "Rate exceeded");
        const runId = `j-${randomBytes(6).toString("hex").toUpperCase()}`;
        record("EMR", runId, body, args.slice(app + 1), args[app]!);
        return send(res, 200, {
          JobFlowId: runId,
          ClusterArn: `arn:aws:elasticmapreduce:${aws.region}:123456789012:cluster/${runId}`,
        });
      }
      case "DescribeCluster":
      case "ListSteps": {
        const run = runs.get(String(body.ClusterId));
        if (!run) return awsError(400, "InvalidRequestException", `Cluster id '${body.ClusterId}' is not valid.`);
        run.calls.push(action);
        // One status read is DescribeCluster then ListSteps: the run advances on DescribeCluster.
        const s = action === "DescribeCluster" ? advance(run) : stateOf(run);
        if (action === "DescribeCluster") {
          const state = s === "running" ? "RUNNING" : s === "succeeded" ? "TERMINATING" : "TERMINATED_WITH_ERRORS";
          const reason =
            s === "failed"
              ? { Code: "STEP_FAILURE", Message: "Shut down as step failed" }
              : s === "cancelled"
                ? { Code: "USER_REQUEST", Message: "Terminated by user request" }
                : {};
          return send(res, 200, {
            Cluster: { Id: run.runId, Name: run.body.Name, Status: { State: state, StateChangeReason: reason } },
          });
        }
        const stepState =
          s === "running" ? "RUNNING" : s === "succeeded" ? "COMPLETED" : s === "cancelled" ? "CANCELLED" : "FAILED";
        return send(res, 200, {
          Steps: [
            {
              Id: "s-1",
              Name: "dq-monitor profile",
              Status: {
                State: stepState,
                ...(s === "failed"
                  ? { FailureDetails: { Reason: "Unknown Error.", Message: FAILURE, LogFile: "s3://logs/" } }
                  : {}),
              },
            },
          ],
        });
      }
      case "TerminateJobFlows": {
        const ids = body.JobFlowIds as string[] | undefined;
        if (!Array.isArray(ids) || ids.length === 0) return invalid("JobFlowIds is required");
        for (const id of ids) {
          const run = runs.get(id);
          if (run) {
            run.calls.push("TerminateJobFlows");
            run.cancelled = true;
          }
        }
        return send(res, 200, {});
      }
      default:
        return awsError(400, "UnknownOperationException", "");
    }
  }

  // ---- Dataproc v1 ----
  async function dataproc(req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!bearer || !google.tokens.has(bearer))
      throw new Refused(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.");
    const path = url.pathname.slice("/dataproc".length);
    const inline = /^\/v1\/projects\/([^/]+)\/regions\/([^/]+)\/workflowTemplates:instantiateInline$/.exec(path);
    if (inline && req.method === "POST") {
      const [, project, region] = inline;
      if (project !== "dq-spark-project")
        throw new Refused(
          403,
          "PERMISSION_DENIED",
          `Permission 'dataproc.workflowTemplates.instantiateInline' denied on project ${project}`,
        );
      const requestId = url.searchParams.get("requestId");
      need(
        requestId === null || /^[A-Za-z0-9_-]{1,40}$/.test(requestId),
        "requestId: letters, digits, _ and -, at most 40",
      );
      const body = parseJson(raw);
      const managed = (body.placement as any)?.managedCluster;
      need(
        // ManagedCluster.clusterName: 2 to 35 characters (Dataproc's WorkflowTemplate reference).
        managed && /^[a-z]([-a-z0-9]{0,33}[a-z0-9])$/.test(managed.clusterName),
        "placement.managedCluster.clusterName must be 2-35 lower-case letters, digits and hyphens",
      );
      const config = managed.config ?? {};
      for (const group of [config.masterConfig, config.workerConfig].filter(Boolean)) {
        need(group.numInstances === undefined || isInt(group.numInstances), "numInstances must be an integer");
        need(
          group.diskConfig === undefined || isInt(group.diskConfig.bootDiskSizeGb),
          "diskConfig.bootDiskSizeGb must be an integer",
        );
      }
      if (config.autoscalingConfig)
        need(isStr(config.autoscalingConfig.policyUri), "autoscalingConfig.policyUri is required");
      const job = (body.jobs as Array<Record<string, any>> | undefined)?.[0];
      need(job && /^[a-zA-Z0-9_-]{3,50}$/.test(job.stepId), "jobs[].stepId is required (3-50 letters, digits, _ or -)");
      need(isStr(job!.pysparkJob?.mainPythonFileUri), "jobs[].pysparkJob.mainPythonFileUri is required");
      const driverUri = String(job!.pysparkJob.mainPythonFileUri);
      if (behaviour(driverUri) === "busy")
        throw new Refused(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Workflow requests'.");
      const same = [...runs.values()].find((r) => r.provider === "DATAPROC" && r.jobId === requestId);
      const name = same?.runId ?? `projects/${project}/regions/${region}/operations/${randomUUID()}`;
      if (!same) record("DATAPROC", name, body, job!.pysparkJob.args ?? [], driverUri);
      return send(res, 200, {
        name,
        metadata: {
          "@type": "type.googleapis.com/google.cloud.dataproc.v1.WorkflowMetadata",
          state: "PENDING",
          clusterName: managed.clusterName,
        },
      });
    }
    const op = /^\/v1\/(projects\/[^/]+\/regions\/[^/]+\/operations\/[^/:]+)(:cancel)?$/.exec(path);
    if (op) {
      const run = runOf(op[1]!, 404, "NOT_FOUND");
      if (op[2] && req.method === "POST") {
        run.calls.push("cancel");
        run.cancelled = true;
        return send(res, 200, {});
      }
      if (!op[2] && req.method === "GET") {
        run.calls.push("get");
        const s = advance(run);
        const node = {
          stepId: "profile",
          state: s === "running" ? "RUNNING" : s === "succeeded" ? "COMPLETED" : "FAILED",
          ...(s === "failed" ? { error: FAILURE } : {}),
        };
        const error =
          s === "failed"
            ? { code: 2, message: `Job failed: ${FAILURE}` }
            : s === "cancelled"
              ? { code: 1, message: "Operation was cancelled." }
              : undefined;
        return send(res, 200, {
          name: run.runId,
          metadata: {
            "@type": "type.googleapis.com/google.cloud.dataproc.v1.WorkflowMetadata",
            state: s === "running" ? "RUNNING" : "DONE",
            graph: { nodes: [node] },
          },
          done: s !== "running",
          ...(error ? { error } : {}),
        });
      }
    }
    throw new Refused(404, "NOT_FOUND", "Not found");
  }

  const errorBody = (prefix: string, err: Refused) =>
    prefix === "dataproc"
      ? { error: { code: err.status, message: err.message, status: err.code } }
      : { error_code: err.code, message: err.message };

  let held: Array<{ body: string; resume: () => void }> = [];
  const server: Server = createServer((req, res) => {
    (async () => {
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      const raw = await readBody(req);
      const prefix = url.pathname.split("/")[1] ?? "";
      try {
        if (url.pathname === "/_test/release") {
          const match = url.searchParams.get("match") ?? "";
          const released = held.filter((h) => match && h.body.includes(match));
          for (const h of released) h.resume();
          held = held.filter((h) => !released.includes(h));
          return send(res, 200, { released: released.length });
        }
        if (url.pathname === "/_test/held") {
          const match = url.searchParams.get("match") ?? "";
          return send(res, 200, { held: held.filter((h) => match && h.body.includes(match)).length });
        }
        const text = raw.toString("utf8");
        if (!url.pathname.startsWith("/_test/") && text.includes("/hold/")) {
          await new Promise<void>((resume) => held.push({ body: text, resume }));
        }
        if (url.pathname === "/_test/runs") {
          const run = byJob.get(url.searchParams.get("job") ?? "");
          return send(res, run ? 200 : 404, run ?? { message: "no run for this job" });
        }
        if (url.pathname === "/_test/sign") {
          const run = byJob.get(url.searchParams.get("job") ?? "");
          if (!run) return send(res, 404, { message: "no run for this job" });
          const arg = (name: string) => run.args[run.args.indexOf(name) + 1]!;
          const timestamp = url.searchParams.get("ts") ?? String(Math.floor(Date.now() / 1000));
          const text = raw.toString("utf8");
          const signature = `v1=${createHmac("sha256", arg("--callback-secret")).update(`${timestamp}.${text}`).digest("hex")}`;
          return send(res, 200, {
            url: arg("--callback-url"),
            headers: { "x-dq-timestamp": timestamp, "x-dq-signature": signature },
            body: text,
          });
        }
        if (prefix === "google") return await googleToken(google, req, res, raw);
        if (prefix === "dbx") return await databricks(req, res, url, raw);
        if (prefix === "emr") return await emr(req, res, url, raw);
        if (prefix === "dataproc") return await dataproc(req, res, url, raw);
        return send(res, 404, { message: "no such provider" });
      } catch (err) {
        if (err instanceof Refused) return send(res, err.status, errorBody(prefix, err));
        throw err;
      }
    })().catch((err) => {
      if (!res.headersSent) send(res, 500, { message: String(err) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => resolve());
  });
  const base = `http://${HOST}:${(server.address() as { port: number }).port}`;
  google.tokenUri = `${base}/google/token`;
  const account = {
    client_email: "dq-spark@dq-spark-project.iam.gserviceaccount.com",
    private_key: await exportPKCS8(keys.privateKey),
    private_key_id: randomBytes(20).toString("hex"),
    token_uri: google.tokenUri,
  };
  google.accounts.set(account.client_email, { keyId: account.private_key_id, publicKey: keys.publicKey });
  project.provide("sparkProviders", {
    control: `${base}/_test`,
    databricks: {
      endpoint: `${base}/dbx`,
      host: "dbc-dqspark.cloud.databricks.com",
      token: dbxToken,
      oauth: dbxOAuth.client,
    },
    emr: { endpoint: `${base}/emr`, region: aws.region, accessKey: aws.accessKeyId, secretKey: aws.secretAccessKey },
    dataproc: { endpoint: `${base}/dataproc`, project: "dq-spark-project", region: "europe-west1", account },
  });
  return () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
}
