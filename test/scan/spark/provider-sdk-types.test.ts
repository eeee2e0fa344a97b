/**
 * The EMR request body our client builds, checked against the AWS SDK's own request type
 * (`RunJobFlowCommandInput` of @aws-sdk/client-emr, generated from EMR's Smithy model). The check is
 * done by the type checker: `npm run typecheck` fails when runJobFlowRequest builds a field the SDK
 * does not define (a misspelt name, at any depth) or a value of the wrong type. The `@ts-expect-error`
 * lines prove the check refuses a misspelt field and a wrong value, so it cannot pass vacuously.
 */

import type { RunJobFlowCommandInput } from "@aws-sdk/client-emr";
import { describe, expect, it } from "vitest";
import { type EmrBlock, runJobFlowRequest } from "../../../src/scan/spark/emr";

/**
 * `Actual` with every key the `Shape` lacks typed `never`, at any depth (arrays and unions too):
 * a value of `Actual` is assignable only when it has no field outside `Shape`.
 */
type Exact<Shape, Actual> = Actual extends readonly (infer E)[]
  ? NonNullable<Shape> extends readonly (infer S)[]
    ? Exact<S, E>[]
    : never
  : Actual extends object
    ? { [K in keyof Actual]: K extends keyof NonNullable<Shape> ? Exact<NonNullable<Shape>[K], Actual[K]> : never }
    : Actual;

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

describe("the EMR RunJobFlow body against @aws-sdk/client-emr's types", () => {
  it("builds the fields the SDK names, with managed scaling and spark-defaults when asked", () => {
    expect(body.ManagedScalingPolicy?.ComputeLimits?.MaximumCapacityUnits).toBe(6);
    expect(body.Configurations?.[0]?.Classification).toBe("spark-defaults");
    expect(body.Instances?.InstanceGroups?.map((g) => g.InstanceRole)).toEqual(["MASTER", "CORE"]);
    expect([refusedName, refusedValue].length).toBe(2);
  });
});
