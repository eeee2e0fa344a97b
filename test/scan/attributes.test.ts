/**
 * An asset lists its attributes after its first scan, without a schema load: type, kind and the
 * latest statistics, through GET …/assets?with_attributes=true.
 */
import { describe, expect, it } from "vitest";
import { finishedJob } from "../scenario/support";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { insertConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";

const CSV = [
  "id,payment_type,fare,comment",
  ...Array.from(
    { length: 60 },
    (_, i) => `${i + 1},${(i % 3) + 1},${(5 + (i % 7) * 0.5).toFixed(2)},ride number ${i} was fine`,
  ),
].join("\n");

describe("attributes after a scan", () => {
  it("lists type, kind and the latest statistics once the first scan succeeded", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await insertConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, connection, {
      type: "S3",
      payload: { path: "in/*.csv", format: "csv" },
      options: { id_attributes: ["id"] },
    });
    const get = () =>
      call(
        "GET",
        `/api/backend/${tenant}/configuration/projects/${projectId}/assets/${asset.id}?with_attributes=true`,
        {
          as: admin,
        },
      );
    expect((await get()).body.attributes).toEqual([]);
    const upload = await call("POST", `/v2/${tenant}/sources/${asset.id}/batch_data`, {
      as: admin,
      raw: CSV,
      headers: { "Content-Type": "text/csv" },
    });
    expect(upload.status).toBe(202);
    await finishedJob(tenant, asset.id, upload.body.job_id);
    const attributes = (await get()).body.attributes as Array<Record<string, any>>;
    expect(attributes.map((a) => [a.name, a.type, a.kind, a.kind_source])).toEqual([
      ["id", "integer", "identifier", "inferred"],
      ["payment_type", "integer", "code", "inferred"],
      ["fare", "number", "quantity", "inferred"],
      ["comment", "string", "text", "inferred"],
    ]);
    const fare = attributes.find((a) => a.name === "fare")!;
    expect(fare.stats).toMatchObject({
      count: 60,
      nulls: 0,
      distinct: 7,
      min: 5,
      max: 8,
      scanned_at: expect.any(String),
      quantiles: expect.arrayContaining([5, 8]),
    });
    expect(attributes.find((a) => a.name === "payment_type")!.stats.top_values).toHaveLength(3);
  });
});
