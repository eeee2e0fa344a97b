import { describe, expect, it } from "vitest";
import { admin, call } from "../support/api";
import { createAsset, insertConnection } from "../support/assets";
import { createProject, createTenant } from "../support/factories";
import { orders, type Problem, toCsv } from "./data";
import { alertKeys, EXPECTED, finishedJob } from "./support";

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

    for (let i = 0; i < 8; i++) {
      const { job, alerts } = await upload();
      expect(alerts, `clean scan ${scan}`).toEqual([]);
      expect(job.progress.rows).toBeGreaterThan(900);
      expect(job.progress.bytes).toBe(job.progress.total_bytes);
    }
    for (const [problem, expected] of EXPECTED) {
      expect((await upload(problem)).alerts, problem).toEqual(expected);
      // The column coming back is a schema change too; any other clean scan is quiet.
      const after = problem === "dropped_column" ? ["schema_change:country"] : [];
      expect((await upload()).alerts, `clean scan after ${problem}`).toEqual(after);
    }
  }, 240_000);
});
