import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { MAX_ATTRIBUTES, MAX_RECORD_DEPTH, MAX_VALUE_CHARS } from "../../src/scan/formats";
import { admin, call } from "../support/api";
import { createAsset, csvAsset } from "../support/assets";
import { createConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";

/** Data a user uploads whose scan must fail as their input, never as "internal". */
async function uploadAsset() {
  const { tenant, projectId, asset } = await csvAsset();
  return { tenant, projectId, assetId: asset.id as number };
}

/** The job once it has finished, whichever way. */
async function finished(tenant: string, assetId: number, jobId: string) {
  const path = `/api/backend/${tenant}/configuration/assets/${assetId}/scans/${jobId}`;
  return vi.waitFor(
    async () => {
      const res = await call("GET", path, { as: admin });
      expect(res.body.status).toMatch(/^(SUCCEEDED|FAILED)$/);
      return res.body as { status: string; error: string | null; attempts: number };
    },
    { timeout: 30_000, interval: 25 },
  );
}

async function uploadAndScan(data: string, contentType: string) {
  const { tenant, assetId } = await uploadAsset();
  const res = await call("POST", `/v2/${tenant}/sources/${assetId}/batch_data`, {
    as: admin,
    raw: data,
    headers: { "Content-Type": contentType },
  });
  expect(res.status).toBe(202);
  return finished(tenant, assetId, res.body.job_id);
}

/** FAILED at the first attempt with a reason about the data, not the operators' "internal error". */
function expectInputFailure(job: { status: string; error: string | null; attempts: number }, reason: RegExp) {
  expect(job.status).toBe("FAILED");
  expect(job.attempts).toBe(1);
  expect(job.error).toMatch(reason);
  expect(job.error).not.toMatch(/internal/);
}

describe("scans of data past a limit fail as input errors", () => {
  it("an NDJSON record nested 10,000 deep", async () => {
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    const job = await uploadAndScan(`{"id":1}\n{"id":2,"tags":${deep}}\n`, "application/x-ndjson");
    expectInputFailure(
      job,
      new RegExp(`NDJSON line 2: "tags" nests objects and arrays deeper than ${MAX_RECORD_DEPTH} levels`),
    );
  });

  it(`a CSV of more than ${MAX_ATTRIBUTES} columns`, async () => {
    const width = MAX_ATTRIBUTES + 1;
    const csv = `${Array.from({ length: width }, (_, i) => `c${i}`).join(",")}\n${"1,".repeat(width - 1)}1\n`;
    const job = await uploadAndScan(csv, "text/csv");
    expectInputFailure(job, /CSV header: the data has more than 2000 attributes, the most one asset may have/);
  });

  it(`a value longer than ${MAX_VALUE_CHARS} characters`, async () => {
    const job = await uploadAndScan(`id,note\n1,${"x".repeat(MAX_VALUE_CHARS + 1)}\n`, "text/csv");
    expectInputFailure(job, /CSV record 2: the value of "note" is longer than 1 Mi characters/);
  });
});

describe("a JDBC URL whose database name is not valid percent-encoding", () => {
  it("fails the scan and the schema load as the connection's input, naming the field (never a 500)", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await createConnection(tenant, {
      projectId,
      type: "GENERIC_JDBC",
      payload: {
        db_type: "postgresql",
        db_or_schema: "sales",
        connection_properties: { url: "jdbc:postgresql://db.example.com:5432/sales" },
      },
    });
    // The API refuses such a url now (400); a connection stored before that rule still has one.
    await env.DB.prepare("update connections set payload = ? where id = ?")
      .bind(
        JSON.stringify({
          db_type: "postgresql",
          db_or_schema: "sales",
          connection_properties: { url: "jdbc:postgresql://db.example.com:5432/sales%ff" },
        }),
        connection.id,
      )
      .run();
    const asset = await createAsset(tenant, projectId, connection.id, { type: "GENERIC_JDBC" });
    const schema = await call("POST", `/api/data/${tenant}/assets/${asset.id}/schema`, { as: admin });
    expect(schema.status).toBe(422);
    expect(schema.body.code).toBe("source_error");
    expect(schema.body.detail).toBe(
      "invalid: connection_properties.url: the database name is not valid percent-encoding (escapes must spell UTF-8, e.g. %C3%A9 for é)",
    );
    const scan = await call("POST", `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`, { as: admin });
    expect(scan.status).toBe(202);
    const job = await finished(tenant, asset.id, scan.body.job_id);
    expectInputFailure(job, /^connection_properties\.url: the database name is not valid percent-encoding/);
  });
});
