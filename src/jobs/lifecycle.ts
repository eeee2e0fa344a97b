/**
 * The scan job's lifecycle, in one module: its statuses, the transitions between them, and every
 * write that moves a job along (docs/scan-lifecycle.md draws it, with who makes each transition).
 * Each status change is one UPDATE conditional on the statuses it may leave (and on the row's
 * other conditions it has), which says whether it applied; a caller acts on that, never on the
 * status it read before. No other module writes scan_jobs.status: new jobs are inserted
 * INITIAL_STATUS by scan-jobs.ts and schedules.ts.
 *
 * A RUNNING job handed to the tenant's Spark cluster goes through phases kept in their own
 * columns, written here too because the transitions depend on them: dispatched (a provider run id:
 * no queue delivery claims it again), and called back (callback_used_at: the callback decides the
 * job, no longer the cron).
 *
 * A job that ends leaves D1 (issue 38): its asset's AssetMonitor keeps it (keepEnded), then deletes
 * its D1 row and counts the step on the asset's mark; the scan's own success ends it in the
 * monitor's D1 batch instead (succeedInBatchStatement). Readers merge D1's jobs with the object's
 * (scan-jobs.ts).
 */

import { and, desc, eq, inArray, isNotNull, isNull, ne, or, type SQL, sql } from "drizzle-orm";
import { assetMonitor } from "../contracts/asset-monitor-client";
import type { Db } from "../db";
import { type ScanJobRow, type SparkProvider, scanJobs } from "../db/schema";
import type { Env } from "../env";
import { inJsonList } from "../lib/sql";
import { nowIso } from "../lib/time";
import { type PublishEnv, publishScanFailed } from "../notifications/events";

export type ScanJobStatus = ScanJobRow["status"];

/** The status a new job is inserted with. */
export const INITIAL_STATUS = "QUEUED" satisfies ScanJobStatus;

/** Waiting for a delivery of the scan-jobs queue, or running (in the Worker or on Spark). */
export const ACTIVE_STATUSES = ["QUEUED", "RUNNING"] as const satisfies readonly ScanJobStatus[];

/** Ended: no transition leaves these. */
export const FINAL_STATUSES = ["SUCCEEDED", "FAILED", "CANCELLED"] as const satisfies readonly ScanJobStatus[];

interface Transition {
  readonly from: readonly ScanJobStatus[];
  readonly to: ScanJobStatus;
}

/**
 * The allowed transitions: the statuses each may leave, and the one it reaches. Conditions on the
 * row besides its status are said here and written in the transition's UPDATE below.
 */
export const SCAN_JOB_TRANSITIONS = {
  /** A queue delivery claims the job; RUNNING again after a delivery died mid-scan. Never once dispatched to Spark. */
  start: { from: ACTIVE_STATUSES, to: "RUNNING" },
  /** A transient failure with attempts left: back to the queue, the reason visible. Never once dispatched. */
  retry: { from: ["RUNNING"], to: "QUEUED" },
  succeed: { from: ACTIVE_STATUSES, to: "SUCCEEDED" },
  fail: { from: ACTIVE_STATUSES, to: "FAILED" },
  /** The cron ends a dispatched Spark run that failed or did not call back in time; not once a callback was accepted. */
  failRun: { from: ["RUNNING"], to: "FAILED" },
  /** A queued job, or a running one on Spark (a light scan in the Worker cannot be stopped). */
  cancel: { from: ACTIVE_STATUSES, to: "CANCELLED" },
} as const satisfies Record<string, Transition>;

export type ScanJobTransition = keyof typeof SCAN_JOB_TRANSITIONS;

/** Whether a job in `status` is still to end. */
export function isActive(status: ScanJobStatus): boolean {
  return (ACTIVE_STATUSES as readonly ScanJobStatus[]).includes(status);
}

const leaving = (transition: ScanJobTransition) => inArray(scanJobs.status, [...SCAN_JOB_TRANSITIONS[transition].from]);

/** Whether the UPDATE applied: it returned the row it changed. */
const applied = (rows: { id: string }[]) => rows.length > 0;

/**
 * The claim of one queue delivery, as a statement for the caller's `db.batch` (it reads the asset
 * in the same round trip); it returns the claimed row, or none when the job is not to run. An
 * upload's engine reason is known from its request alone, so the claim records it too.
 */
export function startJobStatement(db: Db, message: { job_id: string; tenant_id: string }, uploadEngineReason: string) {
  return db
    .update(scanJobs)
    .set({
      status: SCAN_JOB_TRANSITIONS.start.to,
      attempts: sql`${scanJobs.attempts} + 1`,
      startedAt: sql`coalesce(${scanJobs.startedAt}, ${nowIso()})`,
      error: null,
      engineReason: sql`CASE WHEN json_valid(${scanJobs.request}) THEN CASE WHEN json_extract(${scanJobs.request}, '$.upload') IS NOT NULL THEN ${uploadEngineReason} ELSE ${scanJobs.engineReason} END ELSE ${scanJobs.engineReason} END`,
    })
    .where(
      and(
        eq(scanJobs.id, message.job_id),
        eq(scanJobs.tenantId, message.tenant_id),
        leaving("start"),
        // Handed to the tenant's Spark cluster: the callback or the cron ends it, never a second run.
        isNull(scanJobs.providerRunId),
      ),
    )
    .returning();
}

/**
 * Puts a running job back in the queue after a transient failure; false if it ended meanwhile, or
 * was dispatched (a queued job with a run no delivery would claim, and no cron would poll).
 */
export async function retryJob(db: Db, jobId: string, reason: string): Promise<boolean> {
  const rows = await db
    .update(scanJobs)
    .set({ status: SCAN_JOB_TRANSITIONS.retry.to, error: `retrying after: ${reason}` })
    .where(and(eq(scanJobs.id, jobId), leaving("retry"), isNull(scanJobs.providerRunId)))
    .returning({ id: scanJobs.id });
  return applied(rows);
}

/** The bindings a job's end uses: its asset's AssetMonitor (and the notifications of a failure). */
export type JobEndEnv = PublishEnv & Pick<Env, "ASSET_MONITOR">;

/** Ends a job that has not ended yet, which then leaves D1 (keepEnded); its ended row, or undefined if it had ended. */
async function end(
  env: Pick<Env, "ASSET_MONITOR">,
  db: Db,
  jobId: string,
  transition: "succeed" | "fail" | "failRun" | "cancel",
  error: string | null,
): Promise<ScanJobRow | undefined> {
  const [row] = await endStatement(db, jobId, transition, error).returning();
  if (row) await keepEnded(env, row);
  return row;
}

/**
 * Whether a job leaves D1 once ended: not one a Spark provider was handed (it has a callback
 * secret), whose callback (POST /api/callbacks/scans/{job_id}) finds it from its id alone, in D1,
 * and answers 409 for an ended job; those stay until retention, as before.
 */
export function leavesD1(job: Pick<ScanJobRow, "callbackSecret">): boolean {
  return job.callbackSecret === null;
}

/**
 * An ended job goes to its asset's object, which keeps it and then deletes its D1 row (issue 38).
 * Never fails the end: a job the object could not take stays ended in D1, readers show it from
 * there, and the history move (retention/history-move.ts) takes it in later.
 */
export async function keepEnded(env: Pick<Env, "ASSET_MONITOR">, row: ScanJobRow): Promise<void> {
  if (!leavesD1(row)) return;
  try {
    await assetMonitor(env, row.tenantId, row.assetId).keepJob(row);
  } catch (err) {
    console.error(JSON.stringify({ job_id: row.id, job_not_kept: String(err) }));
  }
}

/**
 * The asset's jobs in one of `statuses` that may leave D1 for its object: all but those handed to
 * Spark (a callback secret), whose callback finds them by id alone.
 */
function leavingD1(asset: { tenantId: string; assetId: number }, statuses: readonly ScanJobStatus[]) {
  return and(
    eq(scanJobs.tenantId, asset.tenantId),
    eq(scanJobs.assetId, asset.assetId),
    inArray(scanJobs.status, [...statuses]),
    isNull(scanJobs.callbackSecret),
  );
}

/** The DELETE of one job of an asset's from D1, where its status is one of `statuses`. */
function jobDelete(db: Db, job: Pick<ScanJobRow, "id" | "tenantId" | "assetId">, statuses: readonly ScanJobStatus[]) {
  return db.delete(scanJobs).where(and(eq(scanJobs.id, job.id), leavingD1(job, statuses)));
}

/**
 * The scan's own end, in its AssetMonitor's D1 batch (after the object kept the job as pending):
 * the job still QUEUED or RUNNING leaves D1, SUCCEEDED, and the statement returns its row as it was.
 */
export function succeedInBatchStatement(db: Db, job: Pick<ScanJobRow, "id" | "tenantId" | "assetId">) {
  return jobDelete(db, job, SCAN_JOB_TRANSITIONS.succeed.from).returning();
}

/** The D1 row of an ended job its asset's object keeps (only once ended: an active one stays). */
export function keptJobDeleteStatement(db: Db, job: Pick<ScanJobRow, "id" | "tenantId" | "assetId">) {
  return jobDelete(db, job, FINAL_STATUSES);
}

/** end()'s UPDATE, where `condition` holds too. */
function endStatement(
  db: Db,
  jobId: string,
  transition: "succeed" | "fail" | "failRun" | "cancel",
  error: string | null,
  condition?: SQL,
) {
  return db
    .update(scanJobs)
    .set({ status: SCAN_JOB_TRANSITIONS[transition].to, error, finishedAt: nowIso() })
    .where(
      and(
        eq(scanJobs.id, jobId),
        leaving(transition),
        transition === "failRun" ? and(isNotNull(scanJobs.providerRunId), isNull(scanJobs.callbackUsedAt)) : undefined,
        transition === "cancel" ? or(ne(scanJobs.status, "RUNNING"), eq(scanJobs.engine, "SPARK")) : undefined,
        condition,
      ),
    );
}

/** The asset's ended jobs still in D1 (the history move takes them in), newest first, at most `limit`. */
export function endedJobsQuery(db: Db, asset: { tenantId: string; id: number }, limit: number) {
  return db
    .select()
    .from(scanJobs)
    .where(leavingD1({ tenantId: asset.tenantId, assetId: asset.id }, FINAL_STATUSES))
    .orderBy(desc(scanJobs.createdAt))
    .limit(limit);
}

/** The D1 rows of ended jobs of the asset its object took in (an active job never leaves D1 so). */
export function movedJobsDeleteStatement(db: Db, asset: { tenantId: string; id: number }, ids: readonly string[]) {
  return db
    .delete(scanJobs)
    .where(
      and(leavingD1({ tenantId: asset.tenantId, assetId: asset.id }, FINAL_STATUSES), inJsonList(scanJobs.id, ids)),
    );
}

/** A job that ends FAILED is a scan.failed event for the tenant's channels (after the job is recorded; never failing it). */
async function published(env: PublishEnv, db: Db, ended: ScanJobRow | undefined): Promise<boolean> {
  if (ended) await publishScanFailed(env, db, ended);
  return ended !== undefined;
}

/** The scan's result is applied: the job SUCCEEDED. False if it had ended already. */
export async function succeedJob(
  env: Pick<Env, "ASSET_MONITOR">,
  db: Db,
  job: Pick<ScanJobRow, "id">,
): Promise<boolean> {
  return (await end(env, db, job.id, "succeed", null)) !== undefined;
}

/** The job FAILED, saying why (scan.failed published). False if it had ended already. */
export async function failJob(env: JobEndEnv, db: Db, job: Pick<ScanJobRow, "id">, error: string): Promise<boolean> {
  return published(env, db, await end(env, db, job.id, "fail", error));
}

/**
 * A job whose queue send failed after its row was committed: FAILED with `error`, so none is left
 * QUEUED that no delivery will ever claim. No scan.failed: the request that made it was answered
 * 503 and sends it again. False if it had ended already.
 */
export async function failUnqueuedJob(
  env: Pick<Env, "ASSET_MONITOR">,
  db: Db,
  job: Pick<ScanJobRow, "id">,
  error: string,
): Promise<boolean> {
  return (await end(env, db, job.id, "fail", error)) !== undefined;
}

/**
 * The cron's end of a Spark run that failed or timed out: the job FAILED (scan.failed published),
 * unless a callback was accepted meanwhile, which decides the job instead. False if not applied.
 */
export async function failSparkRun(
  env: JobEndEnv,
  db: Db,
  job: Pick<ScanJobRow, "id">,
  error: string,
): Promise<boolean> {
  return published(env, db, await end(env, db, job.id, "failRun", error));
}

/** The job CANCELLED, if queued or running on Spark; false if it ended or started in the Worker. */
export async function cancelJob(
  env: Pick<Env, "ASSET_MONITOR">,
  db: Db,
  job: Pick<ScanJobRow, "id">,
  reason: string,
): Promise<boolean> {
  return (await end(env, db, job.id, "cancel", reason)) !== undefined;
}

/**
 * cancelJob as a statement for the caller's batch, for a job of the asset that no provider was
 * handed a run of (cancelling it calls nothing out), where `condition` holds too (the caller's
 * access): it returns the cancelled row, none when the job is not one to cancel so.
 */
export function cancelUnrunJobStatement(
  db: Db,
  job: Pick<ScanJobRow, "id" | "tenantId" | "assetId">,
  reason: string,
  condition: SQL | undefined,
) {
  const ofAsset = and(eq(scanJobs.tenantId, job.tenantId), eq(scanJobs.assetId, job.assetId));
  return endStatement(
    db,
    job.id,
    "cancel",
    reason,
    and(ofAsset, isNull(scanJobs.providerRunId), condition),
  ).returning();
}

/** Before the provider is called: the job runs on Spark, with the callback's sealed secret and deadline. */
export async function recordSparkDispatch(
  db: Db,
  jobId: string,
  dispatch: { provider: SparkProvider; engineReason: string; callbackSecret: string; callbackDeadline: string },
): Promise<void> {
  await db
    .update(scanJobs)
    .set({ engine: "SPARK", ...dispatch })
    .where(eq(scanJobs.id, jobId));
}

/**
 * The provider took the run: its id makes the job dispatched (no queue delivery claims it again).
 * Recorded whatever the job's status, so a run started for a job cancelled meanwhile can be found;
 * returns the job's status, which says whether it was (the caller then cancels the run).
 */
export async function markDispatched(
  db: Db,
  jobId: string,
  run: { runId: string; runUrl?: string | undefined; state: string },
): Promise<ScanJobStatus | undefined> {
  const [row] = await db
    .update(scanJobs)
    .set({ providerRunId: run.runId, providerRunUrl: run.runUrl ?? null, providerState: run.state })
    .where(eq(scanJobs.id, jobId))
    .returning({ status: scanJobs.status });
  return row?.status;
}

/** The provider's own state of the run (as polled, or CANCELLING), and its page when it gave one. */
export async function recordRunState(db: Db, jobId: string, state: string, runUrl?: string): Promise<void> {
  await db
    .update(scanJobs)
    .set({ providerState: state, ...(runUrl ? { providerRunUrl: runUrl } : {}) })
    .where(eq(scanJobs.id, jobId));
}

/** A run that ended without calling back yet: the callback has until `deadline`. */
export async function extendCallbackDeadline(db: Db, jobId: string, deadline: string): Promise<void> {
  await db.update(scanJobs).set({ callbackDeadline: deadline }).where(eq(scanJobs.id, jobId));
}

/** Takes the job's single-use callback; false if it was taken already or the job is no longer running. */
export async function takeCallback(db: Db, jobId: string, receivedAt: string): Promise<boolean> {
  const rows = await db
    .update(scanJobs)
    .set({ callbackUsedAt: receivedAt })
    .where(and(eq(scanJobs.id, jobId), isNull(scanJobs.callbackUsedAt), eq(scanJobs.status, "RUNNING")))
    .returning({ id: scanJobs.id });
  return applied(rows);
}

/** Gives the callback back when it could not be queued: the driver may send it again. */
export async function releaseCallback(db: Db, jobId: string): Promise<void> {
  await db.update(scanJobs).set({ callbackUsedAt: null }).where(eq(scanJobs.id, jobId));
}
