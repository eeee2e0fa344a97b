/**
 * The scan job's lifecycle (src/jobs/lifecycle.ts) against D1: each transition applies exactly
 * from the rows it is allowed to leave, and a refused one changes nothing; what each writes
 * besides the status; scan.failed only for a job that the call itself failed.
 */

import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import { type ScanJobRow, scanJobs } from "../../src/db/schema";
import {
  ACTIVE_STATUSES,
  cancelJob,
  FINAL_STATUSES,
  failJob,
  failSparkRun,
  retryJob,
  SCAN_JOB_TRANSITIONS,
  startJobStatement,
  succeedJob,
  takeCallback,
} from "../../src/jobs/lifecycle";
import { getScanJob } from "../../src/jobs/scan-jobs";
import { admin, call } from "../support/api";
import { csvAsset } from "../support/assets";
import { receiver } from "../support/receivers";
import { unique } from "../support/unique";

const db = () => createDb(env.DB);
const CALLED_BACK_AT = "2026-11-27T10:00:00.000Z";

/** The rows a job can be in: its status, and for a running full scan how far its Spark run got. */
const ROWS = {
  queued: { status: "QUEUED" },
  // A full scan whose dispatch failed transiently, back in the queue.
  queuedForSpark: { status: "QUEUED", engine: "SPARK" },
  inWorker: { status: "RUNNING" },
  // Recorded as a full scan; the provider has not answered the submit yet.
  dispatching: { status: "RUNNING", engine: "SPARK" },
  dispatched: { status: "RUNNING", engine: "SPARK", provider_run_id: "run-1" },
  calledBack: { status: "RUNNING", engine: "SPARK", provider_run_id: "run-1", callback_used_at: CALLED_BACK_AT },
  succeeded: { status: "SUCCEEDED" },
  failed: { status: "FAILED" },
  cancelled: { status: "CANCELLED" },
} as const;
type RowName = keyof typeof ROWS;

interface RowColumns {
  status: string;
  engine?: string;
  provider_run_id?: string;
  callback_used_at?: string;
}

async function insertJob(tenant: string, assetId: number, row: RowColumns): Promise<ScanJobRow> {
  const id = unique("job_lifecycle");
  const columns = { engine: "WORKER", provider_run_id: null, callback_used_at: null, ...row };
  await env.DB.prepare(
    `insert into scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, created_at, engine, provider_run_id, callback_used_at)
     values (?, ?, ?, 'SCAN', ?, 'api', '{}', ?, ?, ?, ?)`,
  )
    .bind(
      id,
      tenant,
      assetId,
      columns.status,
      new Date().toISOString(),
      columns.engine,
      columns.provider_run_id,
      columns.callback_used_at,
    )
    .run();
  return (await d1Row(id))!;
}

/** The job as readers see it: its D1 row while it runs, its asset's object's record once it ended. */
const reread = (job: Pick<ScanJobRow, "id" | "tenantId" | "assetId">) =>
  getScanJob(db(), assetMonitor(env, job.tenantId, job.assetId), job.tenantId, job.assetId, job.id);
/** The job's D1 row, if D1 still has it. */
const d1Row = (id: string) => db().query.scanJobs.findFirst({ where: eq(scanJobs.id, id) });

/** Each call under test: whether it applied. */
const CALLS: Record<string, (job: ScanJobRow) => Promise<boolean>> = {
  start: async (job) =>
    (await startJobStatement(db(), { job_id: job.id, tenant_id: job.tenantId }, "an upload")).length > 0,
  retry: (job) => retryJob(db(), job.id, "a transient fault"),
  succeed: (job) => succeedJob(env, db(), job),
  fail: (job) => failJob(env, db(), job, "the source refused"),
  failRun: (job) => failSparkRun(env, db(), job, "the run failed"),
  cancel: (job) => cancelJob(env, db(), job, "cancelled by a test"),
  takeCallback: (job) => takeCallback(db(), job.id, new Date().toISOString()),
};

/**
 * The status each call leaves a row in, "-" where it must not apply (the row then unchanged).
 * Columns in CALLS' order: start, retry, succeed, fail, failRun, cancel, takeCallback.
 */
// biome-ignore format: a matrix reads best aligned
const EXPECTED: Record<RowName, string[]> = {
  queued:         ["RUNNING", "-",      "SUCCEEDED", "FAILED", "-",      "CANCELLED", "-"],
  queuedForSpark: ["RUNNING", "-",      "SUCCEEDED", "FAILED", "-",      "CANCELLED", "-"],
  inWorker:       ["RUNNING", "QUEUED", "SUCCEEDED", "FAILED", "-",      "-",         "RUNNING"],
  dispatching:    ["RUNNING", "QUEUED", "SUCCEEDED", "FAILED", "-",      "CANCELLED", "RUNNING"],
  dispatched:     ["-",       "-",      "SUCCEEDED", "FAILED", "FAILED", "CANCELLED", "RUNNING"],
  calledBack:     ["-",       "-",      "SUCCEEDED", "FAILED", "-",      "CANCELLED", "-"],
  succeeded:      ["-",       "-",      "-",         "-",      "-",      "-",         "-"],
  failed:         ["-",       "-",      "-",         "-",      "-",      "-",         "-"],
  cancelled:      ["-",       "-",      "-",         "-",      "-",      "-",         "-"],
};

describe("the scan job's transitions", () => {
  it("no transition leaves an ended job, and each reaches the status the table says", () => {
    for (const [name, t] of Object.entries(SCAN_JOB_TRANSITIONS)) {
      expect(
        t.from.filter((s) => !(ACTIVE_STATUSES as readonly string[]).includes(s)),
        name,
      ).toEqual([]);
    }
    expect([...ACTIVE_STATUSES, ...FINAL_STATUSES].sort()).toEqual([
      "CANCELLED",
      "FAILED",
      "QUEUED",
      "RUNNING",
      "SUCCEEDED",
    ]);
  });

  it("applies each one exactly from the rows it may leave; a refused one changes nothing", async () => {
    const tenant = unique("t");
    expect(Object.keys(CALLS)).toEqual(["start", "retry", "succeed", "fail", "failRun", "cancel", "takeCallback"]);
    const actual: Record<string, string[]> = {};
    for (const [rowName, row] of Object.entries(ROWS)) {
      actual[rowName] = [];
      for (const [callName, run] of Object.entries(CALLS)) {
        const job = await insertJob(tenant, 1, row);
        const applied = await run(job);
        const after = (await reread(job))!;
        if (!applied) expect(after, `${callName} on ${rowName}`).toEqual(job);
        // An end takes the job out of D1 (issue 38): its asset's object keeps it, as it ended.
        const ended = applied && (FINAL_STATUSES as readonly string[]).includes(after.status);
        expect(await d1Row(job.id), `${callName} on ${rowName}: D1's row`).toEqual(ended ? undefined : after);
        actual[rowName].push(applied ? after.status : "-");
      }
    }
    expect(actual).toEqual(EXPECTED);
  });
});

describe("what a transition writes besides the status", () => {
  it("start counts the attempt, keeps the first start's time and clears the retry's reason", async () => {
    const job = await insertJob(unique("t"), 1, ROWS.queued);
    await startJobStatement(db(), { job_id: job.id, tenant_id: job.tenantId }, "an upload");
    const first = (await reread(job))!;
    expect(first).toMatchObject({ status: "RUNNING", attempts: 1, error: null });
    expect(first.startedAt).not.toBeNull();
    expect(await retryJob(db(), job.id, "the source timed out")).toBe(true);
    expect(await reread(job)).toMatchObject({ status: "QUEUED", error: "retrying after: the source timed out" });
    await startJobStatement(db(), { job_id: job.id, tenant_id: job.tenantId }, "an upload");
    expect(await reread(job)).toMatchObject({ attempts: 2, startedAt: first.startedAt, error: null });
    // Another tenant's message claims nothing.
    expect(await startJobStatement(db(), { job_id: job.id, tenant_id: unique("t") }, "an upload")).toEqual([]);
  });

  it("an end records when and why; a success has no error", async () => {
    const failed = await insertJob(unique("t"), 1, ROWS.inWorker);
    expect(await failJob(env, db(), failed, "the source refused")).toBe(true);
    const row = (await reread(failed))!;
    expect(row).toMatchObject({ status: "FAILED", error: "the source refused" });
    expect(row.finishedAt).not.toBeNull();
    const retried = await insertJob(unique("t"), 1, ROWS.inWorker);
    await retryJob(db(), retried.id, "a transient fault");
    expect(await succeedJob(env, db(), retried)).toBe(true);
    expect(await reread(retried)).toMatchObject({ status: "SUCCEEDED", error: null });
  });

  it("publishes scan.failed for a job it failed, never for one that had ended or was called back", async () => {
    const { tenant, asset } = await csvAsset();
    const hook = await receiver();
    const res = await call("POST", `/api/backend/${tenant}/configuration/notifications/channels`, {
      as: admin,
      body: { name: unique("ch"), type: "WEBHOOK", url: hook.url, events: ["scan.failed"] },
    });
    expect(res.status).toBe(201);
    const deliveries = (job: ScanJobRow) =>
      env.DB.prepare("select count(*) as n from notification_deliveries where event_key = ?")
        .bind(`job:${job.id}:failed`)
        .first<{ n: number }>()
        .then((r) => r!.n);

    const cases = [
      [ROWS.inWorker, "fail", true],
      [ROWS.cancelled, "fail", false],
      [ROWS.calledBack, "failRun", false],
      [ROWS.dispatched, "failRun", true],
    ] as const;
    for (const [row, end, ends] of cases) {
      const job = await insertJob(tenant, asset.id, row);
      expect(await CALLS[end]!(job), `${end} on ${row.status}`).toBe(ends);
      expect(await deliveries(job)).toBe(ends ? 1 : 0);
    }
  });
});
