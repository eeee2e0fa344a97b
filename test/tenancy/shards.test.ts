/**
 * Issue 38, point 4: tenants spread over several D1 databases (src/db/shards.ts). A tenant made
 * where the placement rule names shard 1 (NEW_TENANT_SHARD) lives there end to end: its
 * configuration, scans, alerts, incidents, keys and audit trail are rows of DB_SHARD_1, and `DB`
 * (the directory and shard 0) holds none of them but its directory row.
 */

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { LEASE_SIZE } from "../../src/db/shards";
import { alertIdBase } from "../../src/monitor/history-store";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { createConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { emailBatch, scanJob, uploadCsv } from "../support/scans";
import { tenantOnShard, tenantRows } from "../support/shards";
import { tenantKey } from "../support/tenants";

async function scan(tenant: string, assetId: number, csv: string): Promise<string> {
  const jobId = await uploadCsv(tenant, assetId, csv);
  expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
  return jobId;
}

describe("tenant shards (issue 38, point 4)", { timeout: 120_000 }, () => {
  it("a tenant placed on shard 1 works end to end there, and shard 0 holds none of its rows", async () => {
    const tenant = await tenantOnShard(1);
    const directory = await env.DB.prepare("SELECT shard FROM tenant_shards WHERE tenant_id = ?").bind(tenant).first();
    expect(directory).toEqual({ shard: 1 });

    const projectId = await createProject(tenant);
    const connection = await createConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, connection.id, {
      type: "S3",
      payload: { path: "in/*.csv", format: "csv" },
    });
    // Ids of shard 1 come from its own range: they cannot meet shard 0's when rows move.
    expect(asset.id).toBeGreaterThan(LEASE_SIZE);
    expect(projectId).toBeGreaterThan(LEASE_SIZE);
    expect(connection.id).toBeGreaterThan(LEASE_SIZE);

    for (let seq = 1; seq <= 5; seq++) await scan(tenant, asset.id, emailBatch(seq));
    const loud = await scan(tenant, asset.id, emailBatch(6, 60));
    const alerts = await call(
      "POST",
      `/api/backend/${tenant}/configuration/sources/${asset.id}/alerts?job_id=${loud}`,
      {
        as: admin,
      },
    );
    expect(alerts.body && alerts.status, JSON.stringify(alerts.body)).toBe(200);
    expect(alerts.body.length).toBeGreaterThan(0);
    // The object's alert ids (alertIdBase) for an asset of shard 1's range: JSON-safe, its own.
    for (const a of alerts.body as { id: number }[]) {
      expect(Number.isSafeInteger(a.id) && a.id > alertIdBase(asset.id), String(a.id)).toBe(true);
    }
    const incidents = await call("GET", `/api/backend/${tenant}/incidents`, { as: admin });
    expect(incidents.status).toBe(200);
    const list = Array.isArray(incidents.body) ? incidents.body : incidents.body.data;
    expect(list).toEqual(expect.arrayContaining([expect.objectContaining({ state: "OPEN" })]));

    // The tenant's own key (kept with the tenant's rows) authenticates, and is exchanged for a token.
    const key = await tenantKey(tenant);
    expect((await call("GET", `/api/backend/${tenant}/configuration/projects`, { as: key })).status).toBe(200);
    const token = await call("POST", "/auth/token", { body: { api_key: key.key } });
    expect(token.status).toBe(200);
    const asToken = { token: token.body.access_token as string };
    expect((await call("GET", `/api/backend/${tenant}/configuration/projects`, { as: asToken })).status).toBe(200);
    // The administrator's listing of tenants reads every shard.
    const listed = await call("GET", "/backend/private/configuration/tenants?limit=1000", { as: admin });
    expect(listed.body.map((t: { id: string }) => t.id)).toContain(tenant);

    const onShard1 = await tenantRows(env.DB_SHARD_1!, tenant);
    expect(onShard1).toMatchObject({
      tenants: 1,
      projects: 1,
      connections: 1,
      assets: 1,
      incidents: 1,
      api_keys: 1,
    });
    // The six ended jobs left D1 for the asset's object (issue 38), and list from there.
    expect(onShard1.scan_jobs).toBeUndefined();
    const jobs = await call("GET", `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`, { as: admin });
    expect(jobs.status).toBe(200);
    expect((Array.isArray(jobs.body) ? jobs.body : jobs.body.data).length).toBe(6);
    expect(onShard1.audit_events).toBeGreaterThan(0);
    expect(await tenantRows(env.DB, tenant)).toEqual({ tenant_shards: 1 });
  });

  it("a tenant made before shards (no directory row, its row in DB) stays on shard 0", async () => {
    const tenant = await tenantOnShard(0);
    expect(await env.DB.prepare("SELECT 1 FROM tenant_shards WHERE tenant_id = ?").bind(tenant).first()).toBeNull();
    const projectId = await createProject(tenant);
    expect(projectId).toBeLessThan(LEASE_SIZE);
    expect(await tenantRows(env.DB_SHARD_1!, tenant)).toEqual({});
    expect((await tenantRows(env.DB, tenant)).projects).toBe(1);
  });
});
