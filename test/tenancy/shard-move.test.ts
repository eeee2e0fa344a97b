/**
 * Issue 38, point 4: a tenant moves between shards online (src/tenancy/shard-move.ts). Writes go
 * on while it moves: those the fence refuses answer 409 tenant_moving (never a 5xx) and succeed
 * when retried; nothing is lost or doubled; reads answer throughout; the listings are the same
 * after; another tenant of the source shard is untouched; the ids stay.
 */

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { advanceMove, moveOf, startMove } from "../../src/tenancy/shard-move";
import { TENANT_TABLES } from "../../src/tenancy/shard-tables";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { createConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { emailBatch, scanJob, uploadCsv } from "../support/scans";
import { tenantOnShard, tenantRows } from "../support/shards";
import { unique } from "../support/unique";

async function scan(tenant: string, assetId: number, csv: string): Promise<string> {
  const jobId = await uploadCsv(tenant, assetId, csv);
  expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
  return jobId;
}

/** A tenant with a project, an asset, clean scans and one that opens an incident. */
async function world() {
  const tenant = await tenantOnShard(0);
  const projectId = await createProject(tenant);
  const connection = await createConnection(tenant, { projectId, type: "S3" });
  const asset = await createAsset(tenant, projectId, connection.id, {
    type: "S3",
    payload: { path: "in/*.csv", format: "csv" },
  });
  const jobs: string[] = [];
  for (let seq = 1; seq <= 5; seq++) jobs.push(await scan(tenant, asset.id, emailBatch(seq)));
  jobs.push(await scan(tenant, asset.id, emailBatch(6, 60)));
  return { tenant, projectId, assetId: asset.id as number, jobs };
}

const get = async (path: string) => {
  const res = await call("GET", path, { as: admin });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

/** What the API shows of the tenant: its projects, assets, scans, incidents and each job's alerts. */
async function listings(w: { tenant: string; projectId: number; assetId: number; jobs: string[] }) {
  const base = `/api/backend/${w.tenant}`;
  const alerts = [];
  for (const job of w.jobs) {
    const res = await call("POST", `${base}/configuration/sources/${w.assetId}/alerts?job_id=${job}`, { as: admin });
    expect(res.status).toBe(200);
    alerts.push(res.body);
  }
  return {
    assets: await get(`${base}/configuration/projects/${w.projectId}/assets`),
    scans: await get(`${base}/configuration/assets/${w.assetId}/scans`),
    incidents: await get(`${base}/incidents`),
    alerts,
  };
}

describe("a tenant's move between shards (issue 38, point 4)", { timeout: 180_000 }, () => {
  it("moves online: writes refused meanwhile are retried, nothing lost or doubled, another tenant untouched", async () => {
    const moving = await world();
    const bystander = await world();
    const before = await listings(moving);
    const bystanderBefore = await listings(bystander);
    const bystanderRows = await tenantRows(env.DB, bystander.tenant);
    const movingRows = await tenantRows(env.DB, moving.tenant);

    await startMove(env, moving.tenant, 1);
    // Writes and reads go on while the move advances in small steps.
    let moved = false;
    const created: string[] = [];
    const refusals: number[] = [];
    const writer = (async () => {
      while (!moved) {
        const name = unique("p");
        for (;;) {
          const res = await call("POST", `/api/backend/${moving.tenant}/configuration/projects`, {
            as: admin,
            body: { name },
          });
          if (res.status === 201) break;
          expect(res.status, JSON.stringify(res.body)).toBe(409);
          expect(res.body.code).toBe("tenant_moving");
          expect(res.headers.get("retry-after")).toBe("1");
          refusals.push(res.status);
          await new Promise((r) => setTimeout(r, 20));
        }
        created.push(name);
        await get(`/api/backend/${moving.tenant}/configuration/projects`);
      }
    })();
    let move = (await moveOf(env, moving.tenant))!;
    for (let i = 0; move.step !== "done"; i++) {
      move = await advanceMove(env, move, { steps: 3, rows: 7, settleMs: 0 });
      await new Promise((r) => setTimeout(r, 10));
      expect(i).toBeLessThan(2000);
    }
    moved = true;
    await writer;
    expect(refusals.length).toBeGreaterThan(0);
    expect(move.copied).toBeGreaterThan(Object.values(movingRows).reduce((a, b) => a + b, 0) / 2);

    // Every project written is there once; the listings are those of before.
    const projects = (await get(`/api/backend/${moving.tenant}/configuration/projects`)) as { name: string }[];
    const names = projects.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of created) expect(names).toContain(name);
    expect(projects).toHaveLength(1 + created.length);
    expect(await listings(moving)).toEqual(before);

    // Its rows are all in shard 1 now; DB keeps only the directory's bookkeeping.
    expect(
      await env.DB.prepare("SELECT shard FROM tenant_shards WHERE tenant_id = ?").bind(moving.tenant).first(),
    ).toEqual({
      shard: 1,
    });
    expect(await tenantRows(env.DB, moving.tenant)).toEqual({ tenant_shards: 1, tenant_moves: 1, tenant_fences: 1 });
    const there = await tenantRows(env.DB_SHARD_1!, moving.tenant);
    for (const [table, n] of Object.entries(movingRows)) {
      if (table !== "projects" && table !== "audit_events") expect(there[table], table).toBe(n);
    }

    // The other tenant of shard 0 is untouched.
    expect(await tenantRows(env.DB, bystander.tenant)).toEqual(bystanderRows);
    expect(await listings(bystander)).toEqual(bystanderBefore);

    // The moved tenant scans on its new shard, its new ids beside the old ones.
    const next = await scan(moving.tenant, moving.assetId, emailBatch(7));
    expect((await get(`/api/backend/${moving.tenant}/configuration/assets/${moving.assetId}/scans`)).length).toBe(
      before.scans.length + 1,
    );
    expect(next).toBeTruthy();
  });

  it("fences every table of tenant rows, in every shard (a new table without its triggers fails here)", async () => {
    for (const d1 of [env.DB, env.DB_SHARD_1!]) {
      const { results } = await d1
        .prepare(
          "SELECT tbl_name AS name, count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_fence_%' GROUP BY tbl_name",
        )
        .all<{ name: string; n: number }>();
      expect(Object.fromEntries(results.map((r) => [r.name, r.n]))).toEqual(
        Object.fromEntries(TENANT_TABLES.map((t) => [t.name, 3])),
      );
    }
  });
});
