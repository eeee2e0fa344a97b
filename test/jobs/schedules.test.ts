import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { dispatchDueSchedules, scheduledJobId } from "../../src/jobs/schedules";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { insertConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";

async function scheduledAsset(cron = "* * * * *") {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const connection = await insertConnection(tenant, { projectId, type: "DELTALAKE" });
  const asset = await createAsset(tenant, projectId, connection, {
    scheduled_upload: { cron, timezone: "UTC", enabled: true },
  });
  return { tenant, projectId, asset };
}

async function setNextRun(assetId: number, iso: string) {
  await env.DB.prepare("update assets set next_run_at = ? where id = ?").bind(iso, assetId).run();
}

async function jobsOf(assetId: number) {
  const { results } = await env.DB.prepare(
    "select id, status, kind, trigger, request from scan_jobs where asset_id = ? order by id",
  )
    .bind(assetId)
    .all<{ id: string; status: string; kind: string; trigger: string; request: string }>();
  return results;
}

async function nextRunOf(assetId: number) {
  return (await env.DB.prepare("select next_run_at from assets where id = ?")
    .bind(assetId)
    .first<{ next_run_at: string }>())!.next_run_at;
}

describe("schedule dispatch", () => {
  it("turns a due slot into exactly one job and moves next_run_at past now", async () => {
    const { asset } = await scheduledAsset();
    const now = new Date("2030-01-01T10:00:30Z");
    await setNextRun(asset.id, "2030-01-01T10:00:00.000Z");
    await dispatchDueSchedules(env.DB, env.SCAN_JOBS, now);
    const jobs = await jobsOf(asset.id);
    expect(jobs).toEqual([
      {
        id: scheduledJobId(asset.id, "2030-01-01T10:00:00.000Z"),
        status: "QUEUED",
        kind: "SCAN",
        trigger: "schedule",
        request: JSON.stringify({ slot: "2030-01-01T10:00:00.000Z" }),
      },
    ]);
    expect(await nextRunOf(asset.id)).toBe("2030-01-01T10:01:00.000Z");
    // The same minute again (an overlapping or repeated invocation): nothing new.
    await dispatchDueSchedules(env.DB, env.SCAN_JOBS, now);
    expect(await jobsOf(asset.id)).toHaveLength(1);
  });

  it("catches up a missed slot once, not once per missed minute", async () => {
    const { asset } = await scheduledAsset();
    await setNextRun(asset.id, "2030-01-01T09:00:00.000Z");
    await dispatchDueSchedules(env.DB, env.SCAN_JOBS, new Date("2030-01-01T10:00:05Z"));
    expect(await jobsOf(asset.id)).toHaveLength(1);
    expect(await nextRunOf(asset.id)).toBe("2030-01-01T10:01:00.000Z");
  });

  it("leaves schedules that are not due, disabled or cleared alone", async () => {
    const { tenant, projectId, asset } = await scheduledAsset("0 * * * *");
    await setNextRun(asset.id, "2030-01-01T11:00:00.000Z");
    await dispatchDueSchedules(env.DB, env.SCAN_JOBS, new Date("2030-01-01T10:30:00Z"));
    expect(await jobsOf(asset.id)).toHaveLength(0);
    await call("PUT", `/api/backend/${tenant}/configuration/projects/${projectId}/assets/${asset.id}`, {
      as: admin,
      body: { scheduled_upload: { cron: "0 * * * *", timezone: "UTC", enabled: false } },
    });
    await env.DB.prepare("update assets set next_run_at = ? where id = ?")
      .bind("2030-01-01T10:00:00.000Z", asset.id)
      .run();
    await dispatchDueSchedules(env.DB, env.SCAN_JOBS, new Date("2030-01-01T10:30:00Z"));
    expect(await jobsOf(asset.id)).toHaveLength(0);
  });

  it("dispatches thousands of due schedules in one invocation", async () => {
    const { tenant, projectId, asset } = await scheduledAsset();
    const due = "2031-06-01T00:00:00.000Z";
    // 2,000 more scheduled assets, cloned from the real one in one statement.
    await env.DB.prepare(
      `insert into assets (tenant_id, project_id, connection_id, name, description, type, options, payload, db_type,
         schedule_cron, schedule_timezone, schedule_enabled, next_run_at, created_by, created_at, updated_at)
       select a.tenant_id, a.project_id, a.connection_id, a.name || '-' || n.value, a.description, a.type, a.options,
              a.payload, a.db_type, a.schedule_cron, a.schedule_timezone, 1, ?2, a.created_by, a.created_at, a.updated_at
       from assets a, json_each(?3) n where a.id = ?1`,
    )
      .bind(asset.id, due, JSON.stringify(Array.from({ length: 2000 }, (_, i) => i)))
      .run();
    await setNextRun(asset.id, due);
    const { jobs } = await dispatchDueSchedules(env.DB, env.SCAN_JOBS, new Date("2031-06-01T00:00:10Z"));
    expect(jobs).toBeGreaterThanOrEqual(2001);
    const row = await env.DB.prepare(
      "select count(*) as n from scan_jobs j join assets a on a.id = j.asset_id where a.tenant_id = ? and a.project_id = ?",
    )
      .bind(tenant, projectId)
      .first<{ n: number }>();
    expect(row!.n).toBe(2001);
  });

  it("runs from the Worker's scheduled handler with the controller's time", async () => {
    const { asset } = await scheduledAsset();
    await setNextRun(asset.id, "2029-03-03T03:03:00.000Z");
    const controller = createScheduledController({
      scheduledTime: new Date("2029-03-03T03:03:00Z"),
      cron: "* * * * *",
    });
    await worker.scheduled(controller, env);
    expect(await jobsOf(asset.id)).toHaveLength(1);
  });
});
