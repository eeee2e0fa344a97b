/**
 * Consumer of `scan-results`: an accepted Spark callback applied to the asset's monitor, like
 * every other result (pipeline applyProfile, idempotent per job id). A job that already ended
 * acknowledges the message and changes nothing; a failed run fails its job with the driver's words.
 */

import { and, eq } from "drizzle-orm";
import type { ScanResultMessage } from "../contracts/messages";
import type { AssetProfile } from "../contracts/profile";
import { createDb, type Db } from "../db";
import type { ScanJobRow } from "../db/schema";
import { scanJobs, tenants } from "../db/schema";
import { tenantDatabase } from "../db/shards";
import type { Env } from "../env";
import { failJob, succeedJob } from "../jobs/lifecycle";
import { tenantUploadStore } from "../jobs/upload-storage";
import { applyProfile, loadScanSubject } from "../pipeline/scan-pipeline";
import { resultKey } from "../pipeline/spark-dispatch";
import { ConnectorError, safeDetail } from "../scan/connectors/types";
import { SparkProfileSchema } from "../scan/spark/callback-body";
import { backoffSeconds, describe, isStorageFault, MAX_ATTEMPTS } from "./scan-jobs";

/** A stored profile larger than this is refused (a profile of 2,000 attributes is a few MB). */
const MAX_STORED_PROFILE_BYTES = 32 * 1024 * 1024;

/** The profile the driver wrote to the tenant's storage, at the key this job was given. */
async function storedProfile(env: Env, db: Db, job: ScanJobRow): Promise<AssetProfile> {
  const tenant = await db.query.tenants.findFirst({ where: eq(tenants.id, job.tenantId) });
  const store = tenant ? await tenantUploadStore(env, tenant) : undefined;
  if (!store) throw new ConnectorError("the profile was sent by reference but the tenant has no storage", "invalid");
  const text = await new Response(await store.stream(resultKey(job.tenantId, job.id))).text();
  if (text.length > MAX_STORED_PROFILE_BYTES) throw new ConnectorError("the stored profile is too large", "invalid");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ConnectorError("the stored profile is not JSON", "invalid");
  }
  const parsed = SparkProfileSchema.safeParse(value);
  if (!parsed.success) throw new ConnectorError("the stored profile does not have the profile's shape", "invalid");
  return parsed.data as AssetProfile;
}

/** Applies one accepted callback; idempotent by job id. */
export async function applyScanResult(env: Env, message: ScanResultMessage): Promise<void> {
  const db = createDb(await tenantDatabase(env, message.tenant_id));
  const job = await db.query.scanJobs.findFirst({
    where: and(eq(scanJobs.id, message.job_id), eq(scanJobs.tenantId, message.tenant_id)),
  });
  if (job?.status !== "RUNNING") return;
  if (message.status === "FAILED") {
    await failJob(env, db, job, `the Spark job failed: ${safeDetail(message.error) || "no reason given"}`);
    return;
  }
  const profile = message.profile ?? (await storedProfile(env, db, job));
  // The progress first: the monitor ends the job in its batch, taking the row as it is then.
  const progress = { rowsScanned: profile.row_count, bytesScanned: profile.bytes ?? job.bytesScanned };
  await db.update(scanJobs).set(progress).where(eq(scanJobs.id, job.id));
  const subject = await loadScanSubject(env, db, { ...job, ...progress });
  const result = await applyProfile(env, subject, message.received_at, profile);
  if (!result.jobEnded) await succeedJob(env, db, job);
}

/** Consumer of `scan-results`: storage faults retried with backoff; a result that cannot apply fails its job. */
export async function consumeScanResults(batch: MessageBatch<ScanResultMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    try {
      await applyScanResult(env, message.body);
      message.ack();
    } catch (err) {
      const transient = (err instanceof ConnectorError && err.transient) || isStorageFault(err);
      if (transient && message.attempts < MAX_ATTEMPTS) {
        message.retry({ delaySeconds: backoffSeconds(message.attempts) });
        continue;
      }
      if (!(err instanceof ConnectorError))
        console.error(JSON.stringify({ job_id: message.body.job_id, error: String(err) }));
      await failUnapplied(env, message.body, describe(err));
      message.ack();
    }
  }
}

async function failUnapplied(env: Env, body: ScanResultMessage, reason: string): Promise<void> {
  const db = createDb(await tenantDatabase(env, body.tenant_id));
  const job = await db.query.scanJobs.findFirst({
    where: and(eq(scanJobs.id, body.job_id), eq(scanJobs.tenantId, body.tenant_id)),
  });
  if (job) await failJob(env, db, job, `the full scan's result could not be applied: ${reason}`);
}

/** Consumer of `scan-results-dlq`: a result whose deliveries all failed fails its job. */
export async function failDeadScanResults(batch: MessageBatch<ScanResultMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    await failUnapplied(env, message.body, "it could not be delivered after its retries");
    message.ack();
  }
}
