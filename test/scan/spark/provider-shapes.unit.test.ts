/**
 * The run-time walk of the providers' SDK models (test/support/dts-shapes.ts) that the fakes refuse
 * requests with: a body of the documented shape passes; a misspelt field, a wrong kind, an unknown
 * enum value and a missing required field do not, so the fakes' checks cannot pass vacuously. (Our
 * own bodies go through the same walk in the fakes, test/pipeline/full-scans.test.ts and
 * test/scan/sql/warehouses/; their types are checked in provider-sdk-types.test.ts.)
 */

import { describe, expect, it } from "vitest";
import { MODELS, shapeErrors } from "../../support/dts-shapes";

const submit = {
  run_name: "r",
  idempotency_token: "job_1",
  timeout_seconds: 60,
  tasks: [
    {
      task_key: "profile",
      new_cluster: {
        spark_version: "15.4.x-scala2.12",
        node_type_id: "i3.xlarge",
        num_workers: 1,
        spark_conf: { a: "b" },
      },
      spark_python_task: { python_file: "dbfs:/d.py", parameters: ["--job-id", "job_1"] },
    },
  ],
};

describe("the SDK models' run-time walk", () => {
  it("passes bodies of the documented shapes", () => {
    expect(shapeErrors(MODELS.databricksJobs, "SubmitRun", submit)).toEqual([]);
    expect(
      shapeErrors(MODELS.databricksSql, "ExecuteStatementRequest", {
        statement: "SELECT :p0",
        warehouse_id: "wh",
        disposition: "INLINE",
        format: "JSON_ARRAY",
        parameters: [{ name: "p0", value: "1", type: "BIGINT" }],
      }),
    ).toEqual([]);
    expect(
      shapeErrors(MODELS.redshiftData, "ExecuteStatementInput", {
        Sql: "SELECT 1",
        Database: "dev",
        WorkgroupName: "w",
      }),
    ).toEqual([]);
    expect(shapeErrors(MODELS.emr, "TerminateJobFlowsInput", { JobFlowIds: ["j-1"] })).toEqual([]);
  });

  it("refuses a misspelt field, a wrong kind, an unknown enum value and a missing required field", () => {
    const task = submit.tasks[0]!;
    expect(
      shapeErrors(MODELS.databricksJobs, "SubmitRun", {
        ...submit,
        timeout_seconds: "60",
        tasks: [{ ...task, task_key: undefined, spark_python_task: { python_file: "f", parameter: [] } }],
      }).sort(),
    ).toEqual([
      "SubmitRun.tasks[0].spark_python_task.parameter: no such field of SparkPythonTask",
      "SubmitRun.tasks[0].task_key: required by SubmitTask, missing",
      "SubmitRun.timeout_seconds: string where a number goes",
    ]);
    expect(
      shapeErrors(MODELS.databricksSql, "ExecuteStatementRequest", {
        statement: "S",
        warehouse_id: "w",
        disposition: "INLINED",
      }),
    ).toEqual(['ExecuteStatementRequest.disposition: "INLINED" is none of "EXTERNAL_LINKS" | "INLINE"']);
    expect(shapeErrors(MODELS.redshiftData, "ExecuteStatementInput", { Database: "dev" })).toEqual([
      "ExecuteStatementInput.Sql: required by ExecuteStatementInput, missing",
    ]);
    expect(
      shapeErrors(MODELS.emr, "RunJobFlowInput", {
        Name: "n",
        Instances: {},
        Steps: [{ Name: "s", ActionOnFailure: "STOP", HadoopJarStep: { Jar: "command-runner.jar" } }],
      }),
    ).toEqual(['RunJobFlowInput.Steps[0].ActionOnFailure: "STOP" is no ActionOnFailure']);
  });
});
