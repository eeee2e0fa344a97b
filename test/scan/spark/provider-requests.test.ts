/**
 * The provider request bodies against the limits the providers document: EMR keeps the step's logs
 * (LogUri), Dataproc's managed cluster name has at most 35 characters.
 */

import { describe, expect, it } from "vitest";
import { clusterNameOf, inlineWorkflow } from "../../../src/scan/spark/dataproc";
import { runJobFlowRequest } from "../../../src/scan/spark/emr";

const spec = (jobId: string, driverUri: string) => ({ jobId, driverUri, args: [], sparkConf: {}, timeoutSeconds: 60 });

describe("provider request bodies", () => {
  it("Dataproc: the managed cluster's name is 2-35 lower-case characters for any job id", () => {
    for (const jobId of ["job_AbCdEfGhIjKlMnOpQrSt", `job_${"X".repeat(60)}`, "job__________________________-x"]) {
      const name = inlineWorkflow({}, spec(jobId, "gs://b/d.py")).placement.managedCluster.clusterName;
      expect(name).toMatch(/^[a-z]([-a-z0-9]{0,33}[a-z0-9])$/);
      expect(name).toBe(clusterNameOf(jobId));
    }
  });

  it("EMR: the step's logs are kept beside the driver unless log_uri says where", () => {
    expect(runJobFlowRequest({}, spec("job_1", "s3://art/dq-monitor/spark/dq_profile.py")).LogUri).toBe(
      "s3://art/dq-monitor/spark/logs/",
    );
    expect(runJobFlowRequest({ log_uri: "s3://logs/emr/" }, spec("job_1", "s3://art/d.py")).LogUri).toBe(
      "s3://logs/emr/",
    );
  });
});
