/**
 * The provider request bodies our clients build, checked against the providers' own definitions.
 *
 * Dataproc: the inline WorkflowTemplate is walked against the `google.cloud.dataproc.v1.WorkflowTemplate`
 * message of the protos @google-cloud/dataproc ships (build/protos/protos.json, protobufjs's JSON
 * form of Google's .proto files, read directly: protobufjs's reflection generates code, which the
 * Workers runtime forbids): every key must be a field of its message (proto3 JSON names), of the field's kind, an enum
 * value one of the enum's, and at most one field of a oneof set.
 *
 * EMR: the request body our client builds, checked against the AWS SDK's own request type
 * (`RunJobFlowCommandInput` of @aws-sdk/client-emr, generated from EMR's Smithy model). The check is
 * done by the type checker: `npm run typecheck` fails when runJobFlowRequest builds a field the SDK
 * does not define (a misspelt name, at any depth) or a value of the wrong type. The `@ts-expect-error`
 * lines prove the check refuses a misspelt field and a wrong value, so it cannot pass vacuously.
 *
 * Databricks and Redshift, the same way: the Jobs API's runs/submit body against `jobs.SubmitRun`
 * and the SQL Statement Execution API's body against `sql.ExecuteStatementRequest` of
 * @databricks/sdk-experimental (generated from Databricks' OpenAPI specification), and the Data
 * API's ExecuteStatement body against `ExecuteStatementInput` of @aws-sdk/client-redshift-data.
 * The fakes check the same definitions at run time (test/support/dts-shapes.ts).
 */

import type { RunJobFlowCommandInput } from "@aws-sdk/client-emr";
import type { ExecuteStatementInput } from "@aws-sdk/client-redshift-data";
import type { jobs, sql } from "@databricks/sdk-experimental";
import dataprocProtos from "@google-cloud/dataproc/build/protos/protos.json";
import { describe, expect, it } from "vitest";
import { submitRunRequest } from "../../../src/scan/spark/databricks";
import { inlineWorkflow } from "../../../src/scan/spark/dataproc";
import { type EmrBlock, runJobFlowRequest } from "../../../src/scan/spark/emr";
import { sparkSettingsFor } from "../../../src/scan/spark/iceberg-runtime";
import { statementRequest } from "../../../src/scan/sql/databricks";
import { executeStatementRequest } from "../../../src/scan/sql/redshift";
import type { Exact } from "../../support/exact";

type Body = ReturnType<typeof runJobFlowRequest>;

const spec = {
  jobId: "job_1",
  driverUri: "s3://art/dq-monitor/spark/dq_profile.py",
  args: ["--job-id", "job_1"],
  sparkConf: {},
  timeoutSeconds: 60,
};
const scaled: EmrBlock = {
  min_instance_count: 2,
  max_instance_count: 6,
  worker_instance_option: "SPOT",
  log_uri: "s3://logs/",
};

// Every field the builder writes is one of RunJobFlowInput's, of its type.
const body: Exact<RunJobFlowCommandInput, Body> & RunJobFlowCommandInput = runJobFlowRequest(scaled, {
  ...spec,
  sparkConf: { "spark.jars.packages": "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.6.1" },
});

// The same check refuses a misspelt field deep in the body ...
const misspelt = { ...runJobFlowRequest({}, spec), Instances: { KeepJobFlowAliveWhenNoStep: false } };
// @ts-expect-error KeepJobFlowAliveWhenNoStep is not a JobFlowInstancesConfig field
const refusedName: Exact<RunJobFlowCommandInput, typeof misspelt> = misspelt;
// ... and a value of the wrong type.
const wrongType = {
  ...runJobFlowRequest({}, spec),
  Steps: [{ Name: "s", ActionOnFailure: "STOP", HadoopJarStep: { Jar: "j" } }],
};
// @ts-expect-error "STOP" is not an ActionOnFailure
const refusedValue: RunJobFlowCommandInput = wrongType;

// Databricks runs/submit: every field one of SubmitRun's (tasks: SubmitTask, new_cluster: compute.ClusterSpec).
const dbxSubmit: Exact<jobs.SubmitRun, ReturnType<typeof submitRunRequest>> & jobs.SubmitRun = submitRunRequest(
  {
    node_type: "i3.xlarge",
    instance_pool_id: "p",
    driver_instance_pool_id: "d",
    policy_id: "x",
    max_instance_count: 4,
  },
  spec,
);
const dbxMisspelt = {
  ...dbxSubmit,
  tasks: [{ task_key: "t", spark_python_task: { python_file: "f", parameter: [] } }],
};
// @ts-expect-error parameter is not a SparkPythonTask field (parameters is)
const dbxRefused: Exact<jobs.SubmitRun, typeof dbxMisspelt> = dbxMisspelt;
// Databricks SQL statements: ExecuteStatementRequest, with its enums (format, disposition, on_wait_timeout).
const dbxStatement: Exact<sql.ExecuteStatementRequest, ReturnType<typeof statementRequest>> &
  sql.ExecuteStatementRequest = statementRequest("wh1", "SELECT :p0", [1]);
// Redshift Data API ExecuteStatement, for a cluster (DbUser) and a Serverless workgroup.
const redshiftCluster: Exact<ExecuteStatementInput, ReturnType<typeof executeStatementRequest>> &
  ExecuteStatementInput = executeStatementRequest(
  { clusterIdentifier: "c1", region: "eu-west-1", database: "dev" },
  "dev",
  "dq_reader",
  "SELECT :p0",
  ["x"],
);
const redshiftMisspelt = { ...redshiftCluster, Parameter: [] };
// @ts-expect-error Parameter is not an ExecuteStatementInput field (Parameters is)
const redshiftRefused: Exact<ExecuteStatementInput, typeof redshiftMisspelt> = redshiftMisspelt;

describe("the Databricks and Redshift bodies against their SDKs' types", () => {
  it("builds the fields the SDKs name", () => {
    expect(dbxSubmit.tasks?.[0]?.new_cluster?.instance_pool_id).toBe("p");
    expect(dbxStatement.disposition).toBe("INLINE");
    expect(redshiftCluster.DbUser).toBe("dq_reader");
    expect([dbxRefused, redshiftRefused].length).toBe(2);
  });
});

describe("the EMR RunJobFlow body against @aws-sdk/client-emr's types", () => {
  it("builds the fields the SDK names, with managed scaling and spark-defaults when asked", () => {
    expect(body.ManagedScalingPolicy?.ComputeLimits?.MaximumCapacityUnits).toBe(6);
    expect(body.Configurations?.[0]?.Classification).toBe("spark-defaults");
    expect(body.Instances?.InstanceGroups?.map((g) => g.InstanceRole)).toEqual(["MASTER", "CORE"]);
    expect([refusedName, refusedValue].length).toBe(2);
  });
});

/** A message or enum of protos.json (protobufjs's JSON form of the .proto files). */
interface ProtoNode {
  nested?: Record<string, ProtoNode>;
  fields?: Record<string, { type: string; rule?: string; keyType?: string }>;
  oneofs?: Record<string, { oneof: string[] }>;
  values?: Record<string, number>;
}
const protoRoot = dataprocProtos as ProtoNode;

/** The node at a dotted path from the root, or undefined. */
function nodeAt(path: string[]): ProtoNode | undefined {
  let node: ProtoNode | undefined = protoRoot;
  for (const part of path) node = node?.nested?.[part];
  return node;
}

/** A type name as protoc resolves it: from the innermost scope outwards; its node and full path. */
function resolve(scope: string[], name: string): { node: ProtoNode; path: string[] } | undefined {
  const parts = name.replace(/^\./, "").split(".");
  for (let i = name.startsWith(".") ? 0 : scope.length; i >= 0; i--) {
    const path = [...scope.slice(0, i), ...parts];
    const node = nodeAt(path);
    if (node) return { node, path };
  }
  return undefined;
}

const SCALARS = /^(string|bytes|bool|double|float|u?int(32|64)|s?fixed(32|64)|sint(32|64))$/;

/** Where `value` departs from the message at `path` in proto3's JSON mapping: "where: reason" lines (none: it conforms). */
function protoErrors(path: string[], value: unknown, at: string): string[] {
  const message = nodeAt(path);
  if (!message?.fields) return [`${at}: ${path.join(".")} is no message`];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${at}: not an object`];
  const errors: string[] = [];
  const oneofOf = new Map<string, string>();
  for (const [name, oneof] of Object.entries(message.oneofs ?? {})) for (const f of oneof.oneof) oneofOf.set(f, name);
  const set = new Map<string, string>();
  for (const [key, v] of Object.entries(value)) {
    const field = message.fields[key];
    const where = `${at}.${key}`;
    if (!field) {
      errors.push(`${where}: no such field of ${path.at(-1)}`);
      continue;
    }
    const oneof = oneofOf.get(key);
    if (oneof) {
      if (set.has(oneof)) errors.push(`${where}: oneof ${oneof} already has ${set.get(oneof)}`);
      set.set(oneof, key);
    }
    const repeated = field.rule === "repeated";
    if (repeated && !Array.isArray(v)) {
      errors.push(`${where}: not a list`);
      continue;
    }
    const items = repeated ? (v as unknown[]) : field.keyType ? Object.values(v as object) : [v];
    const type = SCALARS.test(field.type) ? undefined : resolve(path, field.type);
    items.forEach((item, i) => {
      const itemAt = repeated ? `${where}[${i}]` : where;
      if (type?.node.fields) errors.push(...protoErrors(type.path, item, itemAt));
      else if (type?.node.values) {
        if (!(String(item) in type.node.values)) errors.push(`${itemAt}: ${item} is no ${field.type}`);
      } else if (type) errors.push(`${itemAt}: ${field.type} unresolved`);
      else if (field.type === "string" && typeof item !== "string") errors.push(`${itemAt}: not a string`);
      else if (field.type === "bool" && typeof item !== "boolean") errors.push(`${itemAt}: not a boolean`);
      else if (field.type !== "string" && field.type !== "bool" && !/^-?\d+(\.\d+)?$/.test(String(item)))
        errors.push(`${itemAt}: not a number`);
    });
  }
  return errors;
}

const WORKFLOW_TEMPLATE = ["google", "cloud", "dataproc", "v1", "WorkflowTemplate"];

describe("the Dataproc inline WorkflowTemplate against @google-cloud/dataproc's protos", () => {
  const runSpec = { ...spec, sparkConf: { "spark.jars.packages": "org.apache.iceberg:iceberg-spark-runtime" } };

  it("is a WorkflowTemplate: every field known, of its kind", () => {
    for (const block of [
      {},
      {
        master_node_type: "n2-standard-4",
        worker_node_type: "n2-standard-8",
        spark_master_disk_size_in_gb: 100,
        spark_worker_disk_size_in_gb: 200,
        autoscale_policy: "projects/p/regions/r/autoscalingPolicies/a",
        download_job_spark_properties: { "spark.executor.memory": "4g" },
      },
    ]) {
      expect(protoErrors(WORKFLOW_TEMPLATE, inlineWorkflow(block, runSpec), "template")).toEqual([]);
    }
  });

  it("the walk refuses a misspelt field, a wrong kind and a second job type", () => {
    const body = inlineWorkflow({}, runSpec);
    const job = body.jobs[0] as Record<string, unknown>;
    const misspelt = { ...body, jobs: [{ ...job, pysparkJob: { mainPythonFileUrl: "gs://b/d.py" } }] };
    expect(protoErrors(WORKFLOW_TEMPLATE, misspelt, "template")).toEqual([
      "template.jobs[0].pysparkJob.mainPythonFileUrl: no such field of PySparkJob",
    ]);
    const wrongKind = { ...body, jobs: [{ ...job, pysparkJob: { mainPythonFileUri: "gs://b/d.py", args: "--x" } }] };
    expect(protoErrors(WORKFLOW_TEMPLATE, wrongKind, "template")).toEqual([
      "template.jobs[0].pysparkJob.args: not a list",
    ]);
    const twoTypes = { ...body, jobs: [{ ...job, sparkJob: {} }] };
    expect(protoErrors(WORKFLOW_TEMPLATE, twoTypes, "template")).toEqual([
      "template.jobs[0].sparkJob: oneof jobType already has pysparkJob",
    ]);
  });
});

describe("an Iceberg source adds the Iceberg Spark runtime and the catalog dq to each provider's request", () => {
  const source = { kind: "iceberg", metastore_uri: "thrift://hms.internal:9083", table: "lake.orders" };
  const catalog = {
    "spark.sql.catalog.dq": "org.apache.iceberg.spark.SparkCatalog",
    "spark.sql.catalog.dq.type": "hive",
    "spark.sql.catalog.dq.uri": "thrift://hms.internal:9083",
  };
  const icebergSpec = (sparkConf: Record<string, string> = {}) => ({ ...spec, ...sparkSettingsFor(source, sparkConf) });

  it("adds nothing for another source, and the tenant's spark_properties win over the catalog's", () => {
    expect(sparkSettingsFor({ kind: "table", format: "delta", table: "a.b.c" }, { x: "1" })).toEqual({
      sparkConf: { x: "1" },
    });
    expect(sparkSettingsFor(source, { "spark.sql.catalog.dq.uri": "thrift://other:9083" }).sparkConf).toEqual({
      ...catalog,
      "spark.sql.catalog.dq.uri": "thrift://other:9083",
    });
  });

  it("EMR 6.5+: the iceberg-defaults classification, the catalog in spark-defaults; still a RunJobFlowCommandInput", () => {
    const emr: Exact<RunJobFlowCommandInput, Body> & RunJobFlowCommandInput = runJobFlowRequest({}, icebergSpec());
    expect(emr.Configurations).toEqual([
      { Classification: "spark-defaults", Properties: catalog },
      { Classification: "iceberg-defaults", Properties: { "iceberg.enabled": "true" } },
    ]);
    // Before 6.5 EMR has no such classification (the runtime is then the user's: spark_properties).
    const old = runJobFlowRequest({ release_label: "emr-6.4.0" }, icebergSpec());
    expect(old.Configurations?.map((c) => c.Classification)).toEqual(["spark-defaults"]);
    expect(runJobFlowRequest({}, spec).Configurations).toBeUndefined();
  });

  it("Dataproc: the runtime for the pinned image's Spark 3.5 / Scala 2.12 in spark.jars.packages; still a WorkflowTemplate", () => {
    const template = inlineWorkflow({}, icebergSpec({ "spark.jars.packages": "org.postgresql:postgresql:42.7.4" }));
    expect(protoErrors(WORKFLOW_TEMPLATE, template, "template")).toEqual([]);
    expect(template.placement.managedCluster.config).toMatchObject({
      softwareConfig: { imageVersion: "2.2-debian12" },
    });
    expect(template.jobs[0]?.pysparkJob.properties).toEqual({
      ...catalog,
      "spark.jars.packages": "org.postgresql:postgresql:42.7.4,org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.6.1",
    });
    expect(inlineWorkflow({}, spec).placement.managedCluster.config).not.toHaveProperty("softwareConfig");
  });

  it("Dataproc: a configured image and Iceberg release; the runtime built for that image's Spark; still a WorkflowTemplate", () => {
    const template = inlineWorkflow(
      { image_version: "2.1.85-ubuntu20", iceberg_runtime_version: "1.5.2" },
      icebergSpec(),
    );
    expect(protoErrors(WORKFLOW_TEMPLATE, template, "template")).toEqual([]);
    expect(template.placement.managedCluster.config).toMatchObject({
      softwareConfig: { imageVersion: "2.1.85-ubuntu20" },
    });
    expect(template.jobs[0]?.pysparkJob.properties?.["spark.jars.packages"]).toBe(
      "org.apache.iceberg:iceberg-spark-runtime-3.3_2.12:1.5.2",
    );
    // A configured image serves every run; the runtime only an Iceberg one.
    const plain = inlineWorkflow({ image_version: "2.3-debian12", iceberg_runtime_version: "1.9.2" }, spec);
    expect(plain.placement.managedCluster.config).toMatchObject({ softwareConfig: { imageVersion: "2.3-debian12" } });
    expect(plain.jobs[0]?.pysparkJob).not.toHaveProperty("properties");
  });

  it("Databricks: the catalog only (the runtime has Iceberg built in); still a SubmitRun", () => {
    const body: Exact<jobs.SubmitRun, ReturnType<typeof submitRunRequest>> & jobs.SubmitRun = submitRunRequest(
      { node_type: "i3.xlarge" },
      icebergSpec(),
    );
    expect(body.tasks?.[0]?.new_cluster?.spark_conf).toEqual(catalog);
    expect(body.tasks?.[0]).not.toHaveProperty("libraries");
  });
});
