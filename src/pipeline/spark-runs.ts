/**
 * Full scans after dispatch: the minute cron polls each running provider run until it ends (a
 * provider failure fails the job with the provider's own message; a run that never calls back
 * times out and is cancelled), and a user may cancel a scan, which cancels the provider run.
 */

import { and, eq, isNotNull } from "drizzle-orm";
import type { Db } from "../db";
import { unfenced } from "../db/fences";
import type { ScanJobRow } from "../db/schema";
import { scanJobs } from "../db/schema";
import type { Env } from "../env";
import { cancelJob, extendCallbackDeadline, failSparkRun, isActive, recordRunState } from "../jobs/lifecycle";
import { ConflictError } from "../lib/errors";
import { ConnectorError } from "../scan/connectors/types";
import type { SparkProviderClient } from "../scan/spark/provider";
import { loadScanSubject } from "./scan-pipeline";
import { chooseSparkTarget } from "./spark-dispatch";

/** After a run ended well, the callback has this long to arrive before the job times out. */
export const CALLBACK_GRACE_MS = 10 * 60 * 1000;

/** The provider client of a dispatched job, built again from the tenant's configuration; undefined if it changed. */
async function clientOf(env: Env, db: Db, job: ScanJobRow): Promise<SparkProviderClient | undefined> {
  const subject = await loadScanSubject(env, db, job);
  const choice = await chooseSparkTarget(env, db, subject.asset, subject.source);
  if ("missing" in choice || choice.provider !== job.provider) return undefined;
  return choice.client;
}

const providerName = (job: ScanJobRow) => (job.provider ?? "Spark").toLowerCase();

/** One tick of the cron: every running provider run is polled once (at most `limit` per tick). */
export async function pollSparkRuns(
  env: Env,
  db: Db,
  now: Date,
  limit = 50,
): Promise<{ polled: number; ended: number }> {
  const running = await db.query.scanJobs.findMany({
    where: and(
      eq(scanJobs.status, "RUNNING"),
      eq(scanJobs.engine, "SPARK"),
      isNotNull(scanJobs.providerRunId),
      unfenced(scanJobs.tenantId),
    ),
    limit,
  });
  let ended = 0;
  for (const job of running) {
    try {
      if (await pollOne(env, db, job, now)) ended++;
    } catch (err) {
      // Throttled or unreachable provider, or our storage: the next tick asks again.
      if (!(err instanceof ConnectorError)) console.error(JSON.stringify({ job_id: job.id, error: String(err) }));
    }
  }
  return { polled: running.length, ended };
}

async function pollOne(env: Env, db: Db, job: ScanJobRow, now: Date): Promise<boolean> {
  const runId = job.providerRunId!;
  const deadline = job.callbackDeadline ? Date.parse(job.callbackDeadline) : Number.POSITIVE_INFINITY;
  const client = await clientOf(env, db, job).catch(() => undefined);
  if (now.getTime() >= deadline && !job.callbackUsedAt) {
    await client?.cancel(runId).catch(() => undefined);
    return failSparkRun(
      env,
      db,
      job,
      `timed out: the ${providerName(job)} run did not call back before ${job.callbackDeadline}; it was cancelled`,
    );
  }
  if (!client) return false;
  const status = await client.status(runId);
  await recordRunState(db, job.id, status.state, status.runUrl);
  // A callback already accepted decides the job, whatever the run did afterwards.
  if (!status.ended || job.callbackUsedAt) return false;
  if (status.failure) return failSparkRun(env, db, job, `the ${providerName(job)} run failed: ${status.failure}`);
  // Ended well without calling back yet: the callback may be on its way; the deadline comes closer.
  const grace = new Date(now.getTime() + CALLBACK_GRACE_MS).toISOString();
  if (!job.callbackDeadline || grace < job.callbackDeadline) {
    await extendCallbackDeadline(db, job.id, grace);
  }
  return false;
}

/**
 * Cancels a scan: a queued one at once; a full scan by cancelling its provider run first. A light
 * scan already running in the Worker cannot be stopped (409), nor can an ended one.
 */
export async function cancelScan(env: Env, db: Db, job: ScanJobRow, actor: string): Promise<void> {
  if (!isActive(job.status)) {
    throw new ConflictError(`The scan is ${job.status}: only a queued or running scan can be cancelled`);
  }
  if (job.status === "RUNNING" && job.engine === "WORKER") {
    throw new ConflictError("A light scan already running in the Worker cannot be cancelled; it ends on its own");
  }
  if (job.providerRunId) {
    const client = await clientOf(env, db, job).catch(() => undefined);
    if (!client) {
      throw new ConflictError("The tenant's Spark job configuration changed: cancel the run in the provider's console");
    }
    try {
      await client.cancel(job.providerRunId);
    } catch (err) {
      const why = err instanceof ConnectorError ? err.message : "the provider could not be reached";
      throw new ConflictError(`The ${providerName(job)} run was not cancelled (${why}); try again`);
    }
    await recordRunState(db, job.id, "CANCELLING");
  }
  const ended = await cancelJob(env, db, job, `cancelled by ${actor}`);
  if (!ended) throw new ConflictError("The scan ended, or started in the Worker, meanwhile: it was not cancelled");
}
