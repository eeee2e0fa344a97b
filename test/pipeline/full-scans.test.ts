/**
 * Full scans end to end against the local fakes of the three providers
 * (test/support/spark-providers.global.ts): dispatch built from the Spark job configuration, the
 * cron's polling, the driver's signed callback through the scan-results queue to the monitor, and
 * every refusal of a forged, replayed or late callback.
 */

import { env } from "cloudflare:workers";
import { AwsClient } from "aws4fetch";
import { describe, expect, inject, it, vi } from "vitest";
import { createDb } from "../../src/db";
import { pollSparkRuns } from "../../src/pipeline/spark-runs";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { orders } from "../scenario/data";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { createConnection } from "../support/connections";
import { keptAlerts } from "../support/monitor";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

const fx = () => inject("sparkProviders");
const db = () => createDb(env.DB);
const SPARK_PROPERTIES = { "spark.executor.memory": "8g", "spark.sql.shuffle.partitions": "64" };

type Provider = "DATABRICKS" | "EMR" | "DATAPROC";

/** A tenant whose Spark job configuration names one provider, and an asset that provider can scan. */
async function fullScanAsset(
  provider: Provider,
  opts: {
    driver?: string;
    assetOptions?: Record<string, unknown>;
    tenant?: Record<string, unknown>;
    /** DATABRICKS: the connection holds a service principal's OAuth client, not a token. */
    servicePrincipal?: boolean;
  } = {},
) {
  const f = fx();
  const tenant = await createTenant(opts.tenant);
  const projectId = await createProject(tenant);
  let connection: { id: number };
  let asset: { id: number };
  let config: Record<string, unknown>;
  if (provider === "DATABRICKS") {
    connection = await createConnection(tenant, {
      projectId,
      type: "DELTALAKE",
      payload: {
        host: f.databricks.host,
        port: "443",
        httppath: "/sql/1.0/warehouses/dqwh01",
        endpoint: f.databricks.endpoint,
      },
      credential: {
        type: "TOKEN",
        payload: opts.servicePrincipal
          ? { client_id: f.databricks.oauth.clientId, client_secret: f.databricks.oauth.clientSecret }
          : { token: f.databricks.token },
      },
    });
    asset = await createAsset(tenant, projectId, connection.id, {
      type: "DELTALAKE",
      ...(opts.assetOptions ? { options: opts.assetOptions } : {}),
    });
    config = {
      databricks_config: {
        spark_version: "15.4.x-scala2.12",
        node_type: "i3.xlarge",
        driver_instance_pool_id: "pool-driver-01",
        policy_id: "E0631F5C0D0004F2",
        min_instance_count: 2,
        max_instance_count: 8,
        ...(opts.driver ? { driver_uri: opts.driver } : {}),
      },
    };
  } else if (provider === "EMR") {
    connection = await createConnection(tenant, {
      projectId,
      type: "S3",
      payload: { bucket: "landing-zone", region: f.emr.region },
      credential: { type: "AWS", payload: { access_key: f.emr.accessKey, secret_key: f.emr.secretKey } },
    });
    asset = await createAsset(tenant, projectId, connection.id, {
      type: "S3",
      payload: { path: "orders/*.csv", format: "csv" },
    });
    config = {
      emr_config: {
        master_instance_type: "m5.2xlarge",
        worker_instance_type: "r5.4xlarge",
        worker_instance_option: "SPOT",
        min_instance_count: 2,
        max_instance_count: 10,
        endpoint: f.emr.endpoint,
        driver_uri: opts.driver ?? "s3://dq-artifacts/dq-monitor/spark/dq_profile.py",
      },
    };
  } else {
    connection = await createConnection(tenant, {
      projectId,
      type: "GCS",
      payload: { bucket: "raw-events" },
      credential: {
        type: "GCP",
        payload: { ...f.dataproc.account, project_id: f.dataproc.project, client_id: "112233445566778899" },
      },
    });
    asset = await createAsset(tenant, projectId, connection.id, {
      type: "GCS",
      payload: { path: "orders/*.csv", format: "csv" },
    });
    config = {
      dataproc_config: {
        master_node_type: "n2-standard-4",
        worker_node_type: "n2-highmem-8",
        spark_master_disk_size_in_gb: 100,
        spark_worker_disk_size_in_gb: 500,
        autoscale_policy: `projects/${f.dataproc.project}/regions/${f.dataproc.region}/autoscalingPolicies/dq`,
        region: f.dataproc.region,
        endpoint: f.dataproc.endpoint,
        driver_uri: opts.driver ?? "gs://dq-artifacts/dq-monitor/spark/dq_profile.py",
      },
    };
  }
  const put = await call("PUT", `/configuration/tenants/${tenant}/spark-job-config`, {
    as: admin,
    body: { spark_properties: SPARK_PROPERTIES, ...config },
  });
  expect(put.status).toBe(200);
  return { tenant, projectId, assetId: asset.id, connectionId: connection.id };
}

const scansPath = (tenant: string, assetId: number) => `/api/backend/${tenant}/configuration/assets/${assetId}/scans`;

async function getJob(tenant: string, assetId: number, jobId: string) {
  const res = await call("GET", `${scansPath(tenant, assetId)}/${jobId}`, { as: admin });
  expect(res.status).toBe(200);
  return res.body;
}

/** Triggers a full scan and waits until it was handed to its provider (or ended). */
async function dispatch(tenant: string, assetId: number, body: Record<string, unknown> = { full_scan: true }) {
  const res = await call("POST", scansPath(tenant, assetId), { as: admin, body });
  expect(res.status).toBe(202);
  const jobId = res.body.job_id as string;
  const job = await vi.waitFor(
    async () => {
      const j = await getJob(tenant, assetId, jobId);
      expect(j.provider?.run_id ?? (["FAILED", "SUCCEEDED"].includes(j.status) ? "ended" : null)).not.toBeNull();
      return j;
    },
    { timeout: 30_000, interval: 50 },
  );
  return { jobId, job };
}

async function submitted(jobId: string) {
  const res = await fetch(`${fx().control}/runs?job=${jobId}`);
  expect(res.status).toBe(200);
  return (await res.json()) as { provider: string; runId: string; body: any; args: string[]; calls: string[] };
}

/** The callback the driver would post: signed by the fake with the job's secret, as spark/dq_profile.py signs. */
async function signedCallback(jobId: string, body: unknown, ts?: number) {
  const res = await fetch(`${fx().control}/sign?job=${jobId}${ts ? `&ts=${ts}` : ""}`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { url: string; headers: Record<string, string>; body: string };
}

/** Posts a callback to the Worker (the URL's path on this deployment). */
function postCallback(cb: { url: string; headers: Record<string, string>; body: string }) {
  return call("POST", new URL(cb.url).pathname, {
    raw: cb.body,
    headers: { ...cb.headers, "Content-Type": "application/json" },
  });
}

/** What the driver computes for the orders table: the profile shape the Worker computes. */
function ordersProfile(problem?: "null_spike") {
  const builder = new ProfileBuilder({ idAttributes: ["id"], inferFromText: false });
  builder.add(orders(1, new Date(), problem) as unknown as Record<string, unknown>[]);
  const { breakdown: _dropped, ...profile } = builder.finish();
  return profile;
}

const tick = () => pollSparkRuns(env, db(), new Date());

async function rowOf(jobId: string) {
  return env.DB.prepare("select status, callback_used_at, callback_secret, error from scan_jobs where id = ?")
    .bind(jobId)
    .first<{ status: string; callback_used_at: string | null; callback_secret: string; error: string | null }>();
}

const countOf = async (sql: string, ...binds: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>())!.n;

/** Polls, signs a profile with a null spike, posts it, and checks the job ends with the monitor's alerts and incident. */
async function completeWithProfile(tenant: string, assetId: number, jobId: string) {
  await tick();
  expect((await getJob(tenant, assetId, jobId)).provider.state).toMatch(/RUNNING/);
  const cb = await signedCallback(jobId, { status: "SUCCEEDED", profile: ordersProfile("null_spike") });
  expect(new URL(cb.url).pathname).toBe(`/api/callbacks/scans/${jobId}`);
  const accepted = await postCallback(cb);
  expect(accepted.status).toBe(202);
  const done = await vi.waitFor(
    async () => {
      const j = await getJob(tenant, assetId, jobId);
      expect(j.status).toBe("SUCCEEDED");
      return j;
    },
    { timeout: 30_000, interval: 50 },
  );
  expect(done.progress.rows).toBeGreaterThan(900);
  const alerts = await call("POST", `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${jobId}`, {
    as: admin,
  });
  expect(alerts.status).toBe(200);
  expect(alerts.body.map((a: { type: string }) => a.type)).toContain("completeness");
  expect(
    await countOf(
      "select count(*) as n from incidents where tenant_id = ? and asset_id = ? and state = 'OPEN'",
      tenant,
      assetId,
    ),
  ).toBe(1);
  // The same callback again is refused and changes nothing.
  const alertCount = (await keptAlerts(tenant, assetId, "job_id = ?", jobId)).length;
  const replay = await postCallback(cb);
  expect(replay.status).toBe(409);
  expect(await keptAlerts(tenant, assetId, "job_id = ?", jobId)).toHaveLength(alertCount);
  return done;
}

describe("full scans on Databricks (Jobs API 2.1)", { timeout: 60_000 }, () => {
  it("submits a run built from databricks_config, polls it, and applies its signed callback", async () => {
    const { tenant, assetId } = await fullScanAsset("DATABRICKS");
    const { jobId, job } = await dispatch(tenant, assetId);
    expect(job).toMatchObject({
      status: "RUNNING",
      engine: "SPARK",
      engine_reason: "full scan requested: runs on DATABRICKS",
      provider: { name: "DATABRICKS", run_id: expect.stringMatching(/^\d+$/), state: "PENDING" },
    });
    expect(JSON.stringify(job)).not.toContain("dqcb_");
    const run = await submitted(jobId);
    expect(run.body).toMatchObject({
      run_name: `dq-monitor full scan ${jobId}`,
      idempotency_token: jobId,
      tasks: [
        {
          task_key: "profile",
          new_cluster: {
            spark_version: "15.4.x-scala2.12",
            node_type_id: "i3.xlarge",
            driver_instance_pool_id: "pool-driver-01",
            policy_id: "E0631F5C0D0004F2",
            autoscale: { min_workers: 2, max_workers: 8 },
            spark_conf: SPARK_PROPERTIES,
          },
          spark_python_task: { python_file: "dbfs:/dq-monitor/spark/dq_profile.py" },
        },
      ],
    });
    const source = JSON.parse(run.args[run.args.indexOf("--source") + 1]!);
    expect(source).toEqual({ kind: "table", format: "delta", table: "main.sales.orders" });
    await completeWithProfile(tenant, assetId, jobId);
  });

  it("runs with a service principal's OAuth token (M2M), fetched once and never shown", async () => {
    const tokenRequests = async () =>
      ((await (await fetch(`${fx().databricks.endpoint}/_test/oauth`)).json()) as { requests: number }).requests;
    const before = await tokenRequests();
    const { tenant, projectId, assetId, connectionId } = await fullScanAsset("DATABRICKS", { servicePrincipal: true });
    const { jobId } = await dispatch(tenant, assetId);
    expect((await submitted(jobId)).calls).toEqual(["submit"]);
    const done = await completeWithProfile(tenant, assetId, jobId);
    // runs/submit and runs/get both went with the one token the workspace issued.
    expect((await submitted(jobId)).calls).toEqual(["submit", "get"]);
    expect(await tokenRequests()).toBe(before + 1);
    const connection = await call(
      "GET",
      `/api/backend/${tenant}/configuration/projects/${projectId}/connections/${connectionId}`,
      { as: admin },
    );
    expect(connection.status).toBe(200);
    for (const shown of [JSON.stringify(connection.body), JSON.stringify(done)]) {
      expect(shown).not.toContain(fx().databricks.oauth.clientSecret);
    }
  });

  it("fails the job with Databricks' own message when the run fails, and never shows the token", async () => {
    const { tenant, assetId } = await fullScanAsset("DATABRICKS", { driver: "dbfs:/fail/dq_profile.py" });
    const { jobId } = await dispatch(tenant, assetId);
    await tick();
    await tick();
    const job = await getJob(tenant, assetId, jobId);
    expect(job.status).toBe("FAILED");
    expect(job.error).toContain("the databricks run failed: Traceback");
    expect(job.error).toContain("PATH_NOT_FOUND");
    expect(job.provider.state).toBe("TERMINATED/FAILED");
    expect(JSON.stringify(job)).not.toContain(fx().databricks.token);
  });

  it("retries a throttled submit (429 REQUEST_LIMIT_EXCEEDED) from the queue", async () => {
    const { tenant, assetId } = await fullScanAsset("DATABRICKS", { driver: "dbfs:/busy/dq_profile.py" });
    const res = await call("POST", scansPath(tenant, assetId), { as: admin, body: { full_scan: true } });
    const job = await vi.waitFor(
      async () => {
        const j = await getJob(tenant, assetId, res.body.job_id);
        expect(j.error ?? "").toContain("retrying after");
        return j;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(job.status).toBe("QUEUED");
    expect(job.error).toContain("Databricks answered 429 (REQUEST_LIMIT_EXCEEDED");
    expect(job.provider.run_id).toBeNull();
  });
});

describe("full scans on EMR (RunJobFlow, SigV4)", { timeout: 60_000 }, () => {
  it("starts a cluster from emr_config with one spark-submit step, and applies its signed callback", async () => {
    const { tenant, assetId } = await fullScanAsset("EMR");
    const { jobId, job } = await dispatch(tenant, assetId);
    expect(job.provider).toMatchObject({
      name: "EMR",
      run_id: expect.stringMatching(/^j-/),
      run_url: expect.stringContaining("clusterDetails"),
    });
    const run = await submitted(jobId);
    expect(run.body).toMatchObject({
      Name: `dq-monitor full scan ${jobId}`,
      LogUri: "s3://dq-artifacts/dq-monitor/spark/logs/",
      ReleaseLabel: "emr-7.5.0",
      Applications: [{ Name: "Spark" }],
      Instances: {
        InstanceGroups: [
          { InstanceRole: "MASTER", InstanceType: "m5.2xlarge", InstanceCount: 1, Market: "ON_DEMAND" },
          { InstanceRole: "CORE", InstanceType: "r5.4xlarge", InstanceCount: 2, Market: "SPOT" },
        ],
        KeepJobFlowAliveWhenNoSteps: false,
      },
      ManagedScalingPolicy: {
        ComputeLimits: { UnitType: "Instances", MinimumCapacityUnits: 2, MaximumCapacityUnits: 10 },
      },
      Configurations: [{ Classification: "spark-defaults", Properties: SPARK_PROPERTIES }],
      Steps: [{ ActionOnFailure: "TERMINATE_CLUSTER", HadoopJarStep: { Jar: "command-runner.jar" } }],
    });
    expect(run.body.Steps[0].HadoopJarStep.Args.slice(0, 4)).toEqual([
      "spark-submit",
      "--deploy-mode",
      "cluster",
      "s3://dq-artifacts/dq-monitor/spark/dq_profile.py",
    ]);
    expect(JSON.parse(run.args[run.args.indexOf("--source") + 1]!)).toEqual({
      kind: "files",
      uri: "s3://landing-zone/orders/*.csv",
      format: "csv",
    });
    await completeWithProfile(tenant, assetId, jobId);
  });

  it("fails the job with the step's failure message", async () => {
    const { tenant, assetId } = await fullScanAsset("EMR", { driver: "s3://dq-artifacts/fail/dq_profile.py" });
    const { jobId } = await dispatch(tenant, assetId);
    await tick();
    await tick();
    const job = await getJob(tenant, assetId, jobId);
    expect(job.status).toBe("FAILED");
    expect(job.error).toContain("the emr run failed: Traceback");
    expect(job.provider.state).toBe("TERMINATED_WITH_ERRORS/FAILED");
    expect(JSON.stringify(job)).not.toContain(fx().emr.secretKey);
  });

  it("retries a throttled RunJobFlow (ThrottlingException)", async () => {
    const { tenant, assetId } = await fullScanAsset("EMR", { driver: "s3://dq-artifacts/busy/dq_profile.py" });
    const res = await call("POST", scansPath(tenant, assetId), { as: admin, body: { full_scan: true } });
    const job = await vi.waitFor(
      async () => {
        const j = await getJob(tenant, assetId, res.body.job_id);
        expect(j.error ?? "").toContain("ThrottlingException");
        return j;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(job.status).toBe("QUEUED");
  });
});

/** A tenant with a HIVE_ICEBERG connection whose files are in S3 (EMR) or GCS (Dataproc). */
async function icebergConnection(store: "S3" | "GCS") {
  const f = fx();
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const connection = await createConnection(tenant, {
    projectId,
    type: "HIVE_ICEBERG",
    payload: {
      thrift_uri: "thrift://hms.internal:9083",
      location_type: store,
      region: store === "S3" ? f.emr.region : f.dataproc.region,
      bucket: "lake",
    },
    credential:
      store === "S3"
        ? { type: "AWS", payload: { access_key: f.emr.accessKey, secret_key: f.emr.secretKey } }
        : {
            type: "GCP",
            payload: { ...f.dataproc.account, project_id: f.dataproc.project, client_id: "112233445566778899" },
          },
  });
  return { f, tenant, projectId, connection };
}

describe("full scans of an Iceberg table (HIVE_ICEBERG)", { timeout: 60_000 }, () => {
  it("asks EMR for its Iceberg runtime and names the catalog dq on the connection's metastore", async () => {
    const { f, tenant, projectId, connection } = await icebergConnection("S3");
    const asset = await createAsset(tenant, projectId, connection.id, {
      type: "HIVE_ICEBERG",
      payload: { database: "lake", table: "orders" },
    });
    const put = await call("PUT", `/configuration/tenants/${tenant}/spark-job-config`, {
      as: admin,
      body: {
        spark_properties: SPARK_PROPERTIES,
        emr_config: { endpoint: f.emr.endpoint, driver_uri: "s3://dq-artifacts/dq-monitor/spark/dq_profile.py" },
      },
    });
    expect(put.status).toBe(200);
    const { jobId } = await dispatch(tenant, asset.id);
    const run = await submitted(jobId);
    expect(JSON.parse(run.args[run.args.indexOf("--source") + 1]!)).toEqual({
      kind: "iceberg",
      metastore_uri: "thrift://hms.internal:9083",
      table: "lake.orders",
    });
    expect(run.body.Configurations).toEqual([
      {
        Classification: "spark-defaults",
        Properties: {
          "spark.sql.catalog.dq": "org.apache.iceberg.spark.SparkCatalog",
          "spark.sql.catalog.dq.type": "hive",
          "spark.sql.catalog.dq.uri": "thrift://hms.internal:9083",
          ...SPARK_PROPERTIES,
        },
      },
      { Classification: "iceberg-defaults", Properties: { "iceberg.enabled": "true" } },
    ]);
  });

  it("on Dataproc: the image and Iceberg release of dataproc_config reach the request (defaults 2.2-debian12, 1.6.1)", async () => {
    const { f, tenant, projectId, connection } = await icebergConnection("GCS");
    // One asset a run: a second full scan of an asset waits for its first.
    const runWith = async (versions: Record<string, string>) => {
      const asset = await createAsset(tenant, projectId, connection.id, {
        type: "HIVE_ICEBERG",
        payload: { database: "lake", table: unique("orders").replace(/-/g, "_") },
      });
      const put = await call("PUT", `/configuration/tenants/${tenant}/spark-job-config`, {
        as: admin,
        body: {
          dataproc_config: {
            region: f.dataproc.region,
            endpoint: f.dataproc.endpoint,
            driver_uri: "gs://dq-artifacts/dq-monitor/spark/dq_profile.py",
            ...versions,
          },
        },
      });
      expect(put.status).toBe(200);
      const { jobId } = await dispatch(tenant, asset.id);
      const { body } = await submitted(jobId);
      return {
        image: body.placement.managedCluster.config.softwareConfig?.imageVersion,
        packages: body.jobs[0].pysparkJob.properties["spark.jars.packages"],
      };
    };
    expect(await runWith({})).toEqual({
      image: "2.2-debian12",
      packages: "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.6.1",
    });
    // Dataproc 2.1 runs Spark 3.3: the runtime built for it, of the configured release.
    expect(await runWith({ image_version: "2.1-debian11", iceberg_runtime_version: "1.5.2" })).toEqual({
      image: "2.1-debian11",
      packages: "org.apache.iceberg:iceberg-spark-runtime-3.3_2.12:1.5.2",
    });
  });
});

describe("full scans on Dataproc (workflowTemplates.instantiateInline)", { timeout: 60_000 }, () => {
  it("instantiates a managed cluster from dataproc_config with a PySpark job, and applies its signed callback", async () => {
    const { tenant, assetId } = await fullScanAsset("DATAPROC");
    const { jobId, job } = await dispatch(tenant, assetId);
    expect(job.provider).toMatchObject({
      name: "DATAPROC",
      run_id: expect.stringMatching(/^projects\/dq-spark-project\/regions\/europe-west1\/operations\//),
    });
    const run = await submitted(jobId);
    const f = fx();
    expect(run.body).toMatchObject({
      placement: {
        managedCluster: {
          clusterName: `dq-${jobId.toLowerCase().replace(/_/g, "-")}`,
          config: {
            masterConfig: { numInstances: 1, machineTypeUri: "n2-standard-4", diskConfig: { bootDiskSizeGb: 100 } },
            workerConfig: { machineTypeUri: "n2-highmem-8", diskConfig: { bootDiskSizeGb: 500 } },
            autoscalingConfig: {
              policyUri: `projects/${f.dataproc.project}/regions/${f.dataproc.region}/autoscalingPolicies/dq`,
            },
          },
        },
      },
      jobs: [
        {
          stepId: "profile",
          pysparkJob: {
            mainPythonFileUri: "gs://dq-artifacts/dq-monitor/spark/dq_profile.py",
            properties: SPARK_PROPERTIES,
          },
        },
      ],
    });
    await completeWithProfile(tenant, assetId, jobId);
  });

  it("fails the job with the operation's error message", async () => {
    const { tenant, assetId } = await fullScanAsset("DATAPROC", { driver: "gs://dq-artifacts/fail/dq_profile.py" });
    const { jobId } = await dispatch(tenant, assetId);
    await tick();
    await tick();
    const job = await getJob(tenant, assetId, jobId);
    expect(job.status).toBe("FAILED");
    expect(job.error).toContain("the dataproc run failed: Job failed: Traceback");
    expect(JSON.stringify(job)).not.toContain("PRIVATE KEY");
  });
});

describe("the callback refuses what it must not apply, and changes nothing", { timeout: 60_000 }, () => {
  it("refuses forged, stale, unsigned, unknown-job and malformed callbacks", async () => {
    const { tenant, assetId } = await fullScanAsset("DATABRICKS");
    const { jobId } = await dispatch(tenant, assetId);
    const good = await signedCallback(jobId, { status: "SUCCEEDED", profile: ordersProfile() });
    const forged = { ...good, headers: { ...good.headers, "x-dq-signature": `v1=${"0".repeat(64)}` } };
    expect((await postCallback(forged)).status).toBe(401);
    const tampered = { ...good, body: good.body.replace('"row_count":', '"row_count":1') };
    expect((await postCallback(tampered)).status).toBe(401);
    const stale = await signedCallback(
      jobId,
      { status: "SUCCEEDED", profile: ordersProfile() },
      Math.floor(Date.now() / 1000) - 3600,
    );
    const staleRes = await postCallback(stale);
    expect(staleRes.status).toBe(401);
    expect(staleRes.body.detail).toContain("5-minute window");
    expect((await postCallback({ ...good, headers: {} })).status).toBe(401);
    expect((await postCallback({ ...good, url: good.url.replace(jobId, "job_doesnotexist00000000") })).status).toBe(
      401,
    );
    const notProfile = await signedCallback(jobId, { status: "SUCCEEDED", profile: { row_count: -1 } });
    expect((await postCallback(notProfile)).status).toBe(400);
    const row = await rowOf(jobId);
    expect(row).toMatchObject({ status: "RUNNING", callback_used_at: null });
    expect(row!.callback_secret).not.toContain("dqcb_");
    expect(await keptAlerts(tenant, assetId, "job_id = ?", jobId)).toHaveLength(0);
    // The genuine one still works once.
    expect((await postCallback(good)).status).toBe(202);
  });

  it("refuses a callback larger than 96 KiB (413) and one after the job's deadline (409)", async () => {
    const { tenant, assetId } = await fullScanAsset("DATABRICKS");
    const { jobId } = await dispatch(tenant, assetId);
    const big = await signedCallback(jobId, { status: "FAILED", error: "x".repeat(100 * 1024) });
    expect((await postCallback(big)).status).toBe(413);
    await env.DB.prepare("update scan_jobs set callback_deadline = ? where id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), jobId)
      .run();
    const late = await signedCallback(jobId, { status: "SUCCEEDED", profile: ordersProfile() });
    const res = await postCallback(late);
    expect(res.status).toBe(409);
    expect(res.body.detail).toContain("too late");
    expect(await rowOf(jobId)).toMatchObject({ status: "RUNNING", callback_used_at: null });
    // The cron then times the run out and cancels it at the provider.
    await tick();
    const job = await getJob(tenant, assetId, jobId);
    expect(job.status).toBe("FAILED");
    expect(job.error).toMatch(/^timed out: the databricks run did not call back/);
    expect((await submitted(jobId)).calls).toContain("cancel");
  });

  it("takes a large profile by reference to the tenant's storage, at the key the job was given", async () => {
    const { s3 } = inject("objectStores");
    const storage = {
      type: "S3",
      payload: {
        bucket: s3.bucket,
        region: s3.region,
        endpoint: s3.endpoint,
        credentials: { access_key: s3.accessKeyId, secret_key: s3.secretAccessKey },
      },
    };
    const { tenant, assetId } = await fullScanAsset("EMR", { tenant: { storage } });
    const { jobId } = await dispatch(tenant, assetId);
    const run = await submitted(jobId);
    const key = `spark-results/${tenant}/${jobId}/profile.json`;
    expect(run.args[run.args.indexOf("--result-uri") + 1]).toBe(`s3://${s3.bucket}/${key}`);
    // What the driver writes through the cluster's file system, here straight into the bucket.
    const text = JSON.stringify(ordersProfile("null_spike"));
    const client = new AwsClient({
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      region: s3.region,
      service: "s3",
    });
    expect((await client.fetch(`${s3.endpoint}/${s3.bucket}/${key}`, { method: "PUT", body: text })).status).toBe(200);
    const cb = await signedCallback(jobId, { status: "SUCCEEDED", profile_ref: { bytes: text.length } });
    expect((await postCallback(cb)).status).toBe(202);
    const job = await vi.waitFor(
      async () => {
        const j = await getJob(tenant, assetId, jobId);
        expect(j.status).toBe("SUCCEEDED");
        return j;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(job.progress.rows).toBeGreaterThan(900);
    expect(await keptAlerts(tenant, assetId, "job_id = ? and type = 'completeness'", jobId)).toHaveLength(1);
  });

  it("fails the job with the driver's reason when it reports a failure", async () => {
    const { tenant, assetId } = await fullScanAsset("EMR");
    const { jobId } = await dispatch(tenant, assetId);
    const cb = await signedCallback(jobId, { status: "FAILED", error: "the table lake.orders does not exist" });
    expect((await postCallback(cb)).status).toBe(202);
    const job = await vi.waitFor(
      async () => {
        const j = await getJob(tenant, assetId, jobId);
        expect(j.status).toBe("FAILED");
        return j;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(job.error).toBe("the Spark job failed: the table lake.orders does not exist");
  });
});

describe("cancel, and where a scan runs", { timeout: 60_000 }, () => {
  it("cancels a running full scan at its provider; its callback is refused afterwards", async () => {
    const { tenant, assetId } = await fullScanAsset("DATAPROC");
    const { jobId } = await dispatch(tenant, assetId);
    const res = await call("POST", `${scansPath(tenant, assetId)}/${jobId}/cancel`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "CANCELLED", error: expect.stringMatching(/^cancelled by /) });
    expect((await submitted(jobId)).calls).toContain("cancel");
    const cb = await signedCallback(jobId, { status: "SUCCEEDED", profile: ordersProfile() });
    expect((await postCallback(cb)).status).toBe(409);
    expect((await call("POST", `${scansPath(tenant, assetId)}/${jobId}/cancel`, { as: admin })).status).toBe(409);
  });

  it("cancels the run of a scan cancelled while its submit was in flight (no orphan run)", async () => {
    const driver = `gs://dq-artifacts/hold/${crypto.randomUUID()}/dq_profile.py`;
    const { tenant, assetId } = await fullScanAsset("DATAPROC", { driver });
    const res = await call("POST", scansPath(tenant, assetId), { as: admin, body: { full_scan: true } });
    expect(res.status).toBe(202);
    const jobId = res.body.job_id as string;
    // The submit reached the provider and waits there: the job runs on Spark, with no run id yet.
    await vi.waitFor(
      async () => {
        const held = await (await fetch(`${fx().control}/held?match=${encodeURIComponent(driver)}`)).json();
        expect(held).toEqual({ held: 1 });
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(await getJob(tenant, assetId, jobId)).toMatchObject({ status: "RUNNING", engine: "SPARK" });
    const cancelled = await call("POST", `${scansPath(tenant, assetId)}/${jobId}/cancel`, { as: admin });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "CANCELLED" });
    await fetch(`${fx().control}/release?match=${encodeURIComponent(driver)}`, { method: "POST" });
    // The provider's run, created after the cancel, is cancelled as soon as its id is known.
    await vi.waitFor(async () => expect((await submitted(jobId)).calls).toContain("cancel"), {
      timeout: 30_000,
      interval: 50,
    });
    expect(await getJob(tenant, assetId, jobId)).toMatchObject({
      status: "CANCELLED",
      provider: { state: "CANCELLING" },
    });
  });

  it("fails a requested full scan without a Spark configuration, saying why", async () => {
    const { tenant, assetId } = await fullScanAsset("DATABRICKS");
    await call("DELETE", `/configuration/tenants/${tenant}/spark-job-config`, { as: admin });
    const { job } = await dispatch(tenant, assetId);
    expect(job).toMatchObject({
      status: "FAILED",
      engine: "WORKER",
      engine_reason:
        "a full scan was requested but the tenant has no Spark job configuration (databricks_config, emr_config or dataproc_config)",
      provider: null,
    });
  });

  it("only_light_scan keeps a requested full scan in the Worker", async () => {
    const full = await fullScanAsset("DATABRICKS");
    const light = await fullScanAsset("DATABRICKS", { assetOptions: { only_light_scan: "true" } });
    const dispatched = await dispatch(full.tenant, full.assetId);
    expect(dispatched.job.engine).toBe("SPARK");
    const res = await call("POST", scansPath(light.tenant, light.assetId), { as: admin, body: { full_scan: true } });
    const job = await vi.waitFor(
      async () => {
        const j = await getJob(light.tenant, light.assetId, res.body.job_id);
        expect(j.status).toMatch(/^(SUCCEEDED|FAILED)$/);
        return j;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(job).toMatchObject({
      engine: "WORKER",
      engine_reason: "light scan: the asset's only_light_scan is 'true'; the requested full scan was not run",
      provider: null,
    });
    expect((await fetch(`${fx().control}/runs?job=${res.body.job_id}`)).status).toBe(404);
  });

  it("sends files over the tenant's threshold to Spark (EMR through connection_id), and smaller ones stay light", async () => {
    const { s3 } = inject("objectStores");
    const f = fx();
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const lake = await createConnection(tenant, {
      projectId,
      type: "S3",
      payload: { bucket: s3.bucket, region: s3.region, endpoint: s3.endpoint },
      credential: { type: "AWS", payload: { access_key: s3.accessKeyId, secret_key: s3.secretAccessKey } },
    });
    const compute = await createConnection(tenant, {
      projectId,
      type: "S3",
      payload: { bucket: "emr-logs", region: f.emr.region },
      credential: { type: "AWS", payload: { access_key: f.emr.accessKey, secret_key: f.emr.secretKey } },
    });
    const prefix = `spark-threshold/${tenant}`;
    const csv = `id,email\n${Array.from({ length: 100 }, (_, i) => `${i},u${i}@example.com`).join("\n")}\n`;
    const client = new AwsClient({
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      region: s3.region,
      service: "s3",
    });
    const put = await client.fetch(`${s3.endpoint}/${s3.bucket}/${prefix}/a.csv`, { method: "PUT", body: csv });
    expect(put.status).toBe(200);
    const asset = await createAsset(tenant, projectId, lake.id, {
      type: "S3",
      payload: { path: `${prefix}/*.csv`, format: "csv" },
    });
    const config = (threshold: number) =>
      call("PUT", `/configuration/tenants/${tenant}/spark-job-config`, {
        as: admin,
        body: {
          full_scan_threshold_bytes: threshold,
          emr_config: {
            connection_id: compute.id,
            endpoint: f.emr.endpoint,
            driver_uri: "s3://dq-artifacts/dq-monitor/spark/dq_profile.py",
          },
        },
      });
    expect((await config(1000)).status).toBe(200);
    const { jobId, job } = await dispatch(tenant, asset.id, {});
    expect(job).toMatchObject({
      engine: "SPARK",
      engine_reason: `full scan: ${(csv.length / 1024).toFixed(1)} KiB exceed the full-scan threshold of 1000 bytes; runs on EMR`,
      provider: { name: "EMR" },
      progress: { total_bytes: csv.length },
    });
    expect(JSON.parse((await submitted(jobId)).args[7]!)).toEqual({
      kind: "files",
      uri: `s3://${s3.bucket}/${prefix}/*.csv`,
      format: "csv",
    });
    await call("POST", `${scansPath(tenant, asset.id)}/${jobId}/cancel`, { as: admin });

    expect((await config(1024 * 1024)).status).toBe(200);
    const res = await call("POST", scansPath(tenant, asset.id), { as: admin });
    const light = await vi.waitFor(
      async () => {
        const j = await getJob(tenant, asset.id, res.body.job_id);
        expect(j.status).toBe("SUCCEEDED");
        return j;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(light).toMatchObject({
      engine: "WORKER",
      engine_reason: "light scan: within the Worker's budget",
      provider: null,
    });
  });

  it("keeps tenants apart: another tenant's job cannot be cancelled (404)", async () => {
    const { tenant, assetId } = await fullScanAsset("DATABRICKS");
    const { jobId } = await dispatch(tenant, assetId);
    const other = await fullScanAsset("DATABRICKS");
    const res = await call("POST", `${scansPath(other.tenant, other.assetId)}/${jobId}/cancel`, { as: admin });
    expect(res.status).toBe(404);
    expect((await getJob(tenant, assetId, jobId)).status).toBe("RUNNING");
    expect((await submitted(jobId)).calls).not.toContain("cancel");
    await call("POST", `${scansPath(tenant, assetId)}/${jobId}/cancel`, { as: admin });
  });
});
