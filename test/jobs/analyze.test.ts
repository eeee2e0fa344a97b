/**
 * A source group's ANALYZE job reads and stores the asset's schema before its first profile
 * (issue 10, point 9): the asset lists its attributes even when the profile then fails.
 */

import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { processScanJob } from "../../src/consumers/scan-jobs";
import type { SqlRunner } from "../../src/scan/sql";
import { DATABASES, runnerFor, uniqueTable } from "../scan/sql/support/databases";
import { admin, call } from "../support/api";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

describe("ANALYZE jobs", () => {
  const table = uniqueTable("dq_analyze");
  let runner: SqlRunner;
  afterAll(async () => {
    await runner?.query(`DROP TABLE IF EXISTS ${table}`);
    await runner?.close();
  });

  async function analyze(useInformationSchema: boolean) {
    const tenant = await createTenant({ use_information_schema: useInformationSchema });
    const projectId = await createProject(tenant);
    const base = `/api/backend/${tenant}/configuration/projects/${projectId}`;
    const connection = await call("POST", `${base}/connections`, {
      as: admin,
      body: {
        name: unique("pg"),
        type: "GENERIC_JDBC",
        payload: DATABASES.postgres.payload,
        credential: { type: "GENERIC_MAP", payload: DATABASES.postgres.credential },
      },
    });
    expect(connection.status).toBe(201);
    // The filter names a column the table does not have: the profile fails, the schema load does not.
    const asset = await call("POST", `${base}/assets`, {
      as: admin,
      body: {
        name: unique("orders"),
        type: "GENERIC_JDBC",
        connection_id: connection.body.id,
        payload: { schema: DATABASES.postgres.schema, table },
        options: { filter: { no_such_column: ["x"] } },
      },
    });
    expect(asset.status).toBe(201);
    const jobId = `job_analyze_${asset.body.id}`;
    await env.DB.prepare(
      "insert into scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, created_at) values (?, ?, ?, 'ANALYZE', 'QUEUED', 'source_group', '{}', ?)",
    )
      .bind(jobId, tenant, asset.body.id, new Date().toISOString())
      .run();

    await processScanJob(env, { job_id: jobId, tenant_id: tenant, asset_id: asset.body.id }, 1);
    // The ended job is in the asset's object (issue 38).
    const job = await call("GET", `/api/backend/${tenant}/configuration/assets/${asset.body.id}/scans/${jobId}`, {
      as: admin,
    });
    expect(job.body.status).toBe("FAILED");
    const read = await call("GET", `${base}/assets/${asset.body.id}?with_attributes=true`, { as: admin });
    return read.body.attributes.map((a: { name: string; type: string; nullable: boolean }) => [
      a.name,
      a.type,
      a.nullable,
    ]);
  }

  it("store the schema first, so a profile that fails still leaves the attributes listed", async () => {
    runner = await runnerFor("postgres");
    await runner.query(`CREATE TABLE ${table} (id BIGINT NOT NULL, email VARCHAR(200), amount DOUBLE PRECISION)`);
    await runner.query(`INSERT INTO ${table} VALUES (1, 'a@example.com', 1.5), (2, NULL, 2.5)`);
    // use_information_schema: the catalog knows id is NOT NULL.
    expect(await analyze(true)).toEqual([
      ["id", "bigint", false],
      ["email", "character varying", true],
      ["amount", "double precision", true],
    ]);
    // The tenant default (false): from a zero-row query's metadata, the same columns and types; a
    // result does not say whether a column may hold nulls.
    expect(await analyze(false)).toEqual([
      ["id", "bigint", true],
      ["email", "character varying", true],
      ["amount", "double precision", true],
    ]);
  });
});
