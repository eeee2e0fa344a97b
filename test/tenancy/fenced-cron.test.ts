/**
 * The minute cron while a tenant of the shard moves away (src/db/fences.ts): the moving tenant is
 * fenced on its source shard, and the cron's work across that shard's tenants leaves it out rather
 * than fail on it. Before, one fenced tenant's due schedule made the shard's claim (one UPDATE
 * across tenants) fail, and with it every other tenant's scheduled scans for as long as the copy took.
 */
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { scheduledJobId } from "../../src/jobs/schedules";
import { moveHistoryTick } from "../../src/retention/history-move";
import { advanceMove, startMove } from "../../src/tenancy/shard-move";
import { createAsset } from "../support/assets";
import { insertConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { tenantOnShard } from "../support/shards";

async function scheduledAsset(tenant: string, nextRun: string) {
  const projectId = await createProject(tenant);
  const connection = await insertConnection(tenant, { projectId, type: "DELTALAKE" });
  const asset = await createAsset(tenant, projectId, connection, {
    scheduled_upload: { cron: "* * * * *", timezone: "UTC", enabled: true },
  });
  await env.DB.prepare("update assets set next_run_at = ? where id = ?").bind(nextRun, asset.id).run();
  return asset.id as number;
}

const jobIds = async (assetId: number) =>
  (
    await env.DB.prepare("select id from scan_jobs where asset_id = ? order by id").bind(assetId).all<{ id: string }>()
  ).results.map((r) => r.id);

describe("the cron while a tenant of the shard moves (issue 38, point 4)", { timeout: 120_000 }, () => {
  it("dispatches the other tenants' due schedules, and leaves the fenced tenant's alone", async () => {
    const slot = "2032-02-02T02:02:00.000Z";
    const moving = await tenantOnShard(0);
    const bystander = await tenantOnShard(0);
    const movingAsset = await scheduledAsset(moving, slot);
    const bystanderAsset = await scheduledAsset(bystander, slot);

    // The move's first step only: the tenant is fenced on both shards, its rows not yet copied.
    const move = await advanceMove(env, await startMove(env, moving, 1), { steps: 1 });
    expect(move.step).toBe("copy");
    const fence = await env.DB.prepare("select state from tenant_fences where tenant_id = ?").bind(moving).first();
    expect(fence).toEqual({ state: "fenced" });

    await worker.scheduled(createScheduledController({ scheduledTime: new Date(slot), cron: "* * * * *" }), env);

    expect(await jobIds(bystanderAsset)).toEqual([scheduledJobId(bystanderAsset, slot)]);
    expect(await jobIds(movingAsset)).toEqual([]);
    // Its slot is still due: its new shard's cron dispatches it once the move is through.
    const row = await env.DB.prepare("select next_run_at from assets where id = ?").bind(movingAsset).first();
    expect(row).toEqual({ next_run_at: slot });
  });

  it("moves the other tenants' ended jobs into their objects, and leaves the fenced tenant's rows", async () => {
    const slot = "2032-03-03T03:03:00.000Z";
    const moving = await tenantOnShard(0);
    const bystander = await tenantOnShard(0);
    const movingAsset = await scheduledAsset(moving, slot);
    const bystanderAsset = await scheduledAsset(bystander, slot);
    // Ended jobs still in D1 (written before jobs left it), the moving tenant's first in the table.
    for (const [tenant, asset] of [
      [moving, movingAsset],
      [bystander, bystanderAsset],
    ] as const) {
      await env.DB.prepare(
        `insert into scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, created_at)
         values (?1, ?2, ?3, 'SCAN', 'SUCCEEDED', 'api', '{}', ?4)`,
      )
        .bind(`job_old_${asset}`, tenant, asset, slot)
        .run();
    }
    await advanceMove(env, await startMove(env, moving, 1), { steps: 1 });

    const report = await moveHistoryTick(env, { assets: 1 });
    expect(report.scanJobs).toBe(1);
    expect(await jobIds(bystanderAsset)).toEqual([]);
    expect(await jobIds(movingAsset)).toEqual([`job_old_${movingAsset}`]);
  });
});
