import { AwsClient } from "aws4fetch";
import { describe, expect, inject, it } from "vitest";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { insertConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { orders, type Problem, toCsv } from "./data";
import { alertKeys, EXPECTED, finishedJob } from "./support";

/** Runs the scenario: 8 clean scans, then each problem followed by a clean scan. */
async function scenario(scanWith: (problem?: Problem) => Promise<{ job: any; alerts: string[] }>) {
  for (let i = 0; i < 8; i++) {
    const { job, alerts } = await scanWith();
    expect(alerts, `clean scan ${i + 1}`).toEqual([]);
    expect(job.progress.rows).toBeGreaterThan(900);
    expect(job.progress.bytes).toBe(job.progress.total_bytes);
  }
  for (const [problem, expected] of EXPECTED) {
    expect((await scanWith(problem)).alerts, problem).toEqual(expected);
    // The column coming back is a schema change too; any other clean scan is quiet.
    const after = problem === "dropped_column" ? ["schema_change:country"] : [];
    expect((await scanWith()).alerts, `clean scan after ${problem}`).toEqual(after);
  }
}

describe("scenario: CSV files in S3 (s3rver), read through the S3 connector", () => {
  it("trains on clean scans, then raises exactly the matching alert for each problem, and none when clean", async () => {
    const s3 = inject("objectStores").s3;
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const prefix = `scenario/${tenant}/`;
    const connection = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/connections`, {
      as: admin,
      body: {
        name: "lake",
        type: "S3",
        payload: { bucket: s3.bucket, region: s3.region, endpoint: s3.endpoint },
        credential: { type: "AWS", payload: { access_key: s3.accessKeyId, secret_key: s3.secretAccessKey } },
      },
    });
    const asset = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/assets`, {
      as: admin,
      body: {
        name: "orders",
        type: "S3",
        connection_id: connection.body.id,
        payload: { path: `${prefix}*.csv`, format: "csv" },
        options: { id_attributes: ["id"], timestamp_attribute: "updated_at" },
      },
    });
    expect(asset.status, JSON.stringify(asset.body)).toBe(201);
    const client = new AwsClient({
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      region: s3.region,
      service: "s3",
    });
    let scan = 0;
    await scenario(async (problem) => {
      scan += 1;
      // The day's file replaces yesterday's, as an export job would.
      const put = await client.fetch(`${s3.endpoint}/${s3.bucket}/${prefix}orders.csv`, {
        method: "PUT",
        body: toCsv(orders(scan, new Date(), problem), problem),
      });
      expect(put.status).toBe(200);
      const res = await call("POST", `/api/backend/${tenant}/configuration/assets/${asset.body.id}/scans`, {
        as: admin,
      });
      const job = await finishedJob(tenant, asset.body.id, res.body.job_id);
      return { job, alerts: await alertKeys(tenant, asset.body.id, res.body.job_id) };
    });
  }, 300_000);
});

describe("scenario: uploaded CSV scans find real problems", () => {
  it("trains on clean scans, then raises exactly the matching alert for each problem, and none when clean", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await insertConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, connection, {
      type: "S3",
      payload: { path: "orders/*.csv", format: "csv" },
      options: { id_attributes: ["id"], timestamp_attribute: "updated_at" },
    });
    let scan = 0;
    const upload = async (problem?: Problem) => {
      scan += 1;
      const res = await call("POST", `/v2/${tenant}/sources/${asset.id}/batch_data`, {
        as: admin,
        raw: toCsv(orders(scan, new Date(), problem), problem),
        headers: { "Content-Type": "text/csv" },
      });
      expect(res.status).toBe(202);
      const job = await finishedJob(tenant, asset.id, res.body.job_id);
      return { job, alerts: await alertKeys(tenant, asset.id, res.body.job_id) };
    };

    await scenario(upload);
  }, 240_000);
});
