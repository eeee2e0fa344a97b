import { and, eq, sql } from "drizzle-orm";
import type { ScanJobMessage, ScanQueueMessage } from "../contracts/messages";
import { createDb } from "../db";
import { assetHeadColumns, assets, scanJobs } from "../db/schema";
import { tenantDatabase } from "../db/shards";
import type { Env } from "../env";
import { failBackfill, runBackfillStep } from "../incidents/backfill";
import { admitScan } from "../jobs/admission";
import { failJob, retryJob, startJobStatement, succeedJob } from "../jobs/lifecycle";
import { DomainError, InvalidInputError } from "../lib/errors";
import { runScanJob, UPLOAD_ENGINE_REASON } from "../pipeline/scan-pipeline";
import { ConnectorError } from "../scan/connectors/types";

/** Attempts before a transient failure is final (the queue's max_retries is 5: 6 deliveries). */
export const MAX_ATTEMPTS = 6;

/** Exponential backoff for transient failures: 10 s, 20 s, 40 s … capped at 10 minutes. */
export function backoffSeconds(attempt: number): number {
  return Math.min(600, 10 * 2 ** Math.max(0, attempt - 1));
}

type Outcome = "done" | "retry";

/**
 * A failure of our own storage (D1, a Durable Object) while the results are written: the scan
 * itself was fine and the write is one transaction, so nothing landed and a later delivery can
 * apply the job whole. Retried like a transient connector error; the text stays in the logs.
 */
const STORAGE_FAULT =
  /D1_(ERROR|EXEC_ERROR|TYPE_ERROR)|SQLITE_|Durable Object|Network connection lost|storage operation/i;
export function isStorageFault(err: unknown): boolean {
  return !(err instanceof ConnectorError) && !(err instanceof DomainError) && STORAGE_FAULT.test(String(err));
}

/**
 * A readable, secret-free reason for a failed job: a connector's or the domain's own message
 * (input the user can fix), else a pointer to the logs.
 */
export function describe(err: unknown): string {
  if (err instanceof ConnectorError) return err.message;
  if (err instanceof DomainError) return domainReason(err);
  if (isStorageFault(err)) return "the results could not be stored (a storage fault; details in the logs)";
  return "internal error while scanning; the operators have the details in the logs";
}

function domainReason(err: DomainError): string {
  if (!(err instanceof InvalidInputError) || err.fields.length === 0) return err.message;
  return err.fields.map((f) => `${f.field}: ${f.message}`).join("; ");
}

/**
 * Runs one delivery of a scan job. Idempotent: a job that already finished is acknowledged and
 * ignored, so a message delivered twice does nothing twice.
 */
export async function processScanJob(env: Env, message: ScanJobMessage, attempt: number): Promise<Outcome> {
  const db = createDb(await tenantDatabase(env, message.tenant_id));
  // The job is claimed and the asset read in one round trip: only a job still QUEUED or RUNNING
  // and not handed to the tenant's Spark cluster (the callback or the cron ends that one, never a
  // second run) becomes RUNNING; any other is done already. An upload's engine reason is known
  // from its request alone, so the claim records it too (one D1 write fewer per uploaded scan).
  const [claimed, assetRows] = await db.batch([
    startJobStatement(db, message, UPLOAD_ENGINE_REASON),
    // A select, not findFirst: drizzle's D1 batch fails to map a findFirst that finds nothing. Its
    // attributes (the latest scan's statistics, tens of KB) are left out: a scan does not read them,
    // only how many there are (the width its memory is estimated by, jobs/admission.ts).
    db
      .select({ ...assetHeadColumns, attributeCount: sql<number | null>`json_array_length(${assets.attributes})` })
      .from(assets)
      .where(and(eq(assets.tenantId, message.tenant_id), eq(assets.id, message.asset_id)))
      .limit(1),
  ]);
  const job = claimed[0];
  if (!job) return "done";
  const asset = assetRows[0]?.id === job.assetId ? assetRows[0] : undefined;
  try {
    // Admitted once its memory fits beside the isolate's other scans (estimated by the asset's width).
    const outcome = await admitScan(asset?.attributeCount ?? undefined, () => runScanJob(env, db, job, asset));
    if ("dispatched" in outcome) return "done";
    // The monitor ended the job in its batch; a replay (its batch had run) leaves it to end here.
    if (!outcome.jobEnded) await succeedJob(env, db, job);
    return "done";
  } catch (err) {
    const transient = (err instanceof ConnectorError && err.transient) || isStorageFault(err);
    if (!(err instanceof ConnectorError) && !(err instanceof DomainError)) {
      console.error(JSON.stringify({ job_id: job.id, error: String(err), stack: (err as Error)?.stack }));
    }
    if (transient && attempt < MAX_ATTEMPTS) {
      // Back to QUEUED with the reason visible, until the next delivery; a job that ended
      // meanwhile (cancelled while it was being dispatched to Spark) stays ended.
      return (await retryJob(db, job.id, describe(err))) ? "retry" : "done";
    }
    await failJob(env, db, job, describe(err));
    return "done";
  }
}

/**
 * Consumer of `scan-jobs`: each message acknowledged or retried on its own, with backoff. The
 * messages of different assets run at the same time (a scan mostly waits: on the source, on D1, on
 * the asset's monitor), as many as the isolate's memory admits (jobs/admission.ts: each scan by its
 * estimate, at most 40 MiB live whatever its width); those of one asset, and the backfill's steps,
 * run one after another in the batch's order, as each asset's monitor applies them anyway.
 */
export async function consumeScanJobs(batch: MessageBatch<ScanQueueMessage>, env: Env): Promise<void> {
  const lanes = new Map<string, Message<ScanQueueMessage>[]>();
  for (const message of batch.messages) {
    const body = message.body;
    const lane = "kind" in body ? "backfill" : `${body.tenant_id}:${body.asset_id}`;
    lanes.set(lane, [...(lanes.get(lane) ?? []), message]);
  }
  const waiting = [...lanes.values()];
  const runLanes = async () => {
    for (let messages = waiting.shift(); messages !== undefined; messages = waiting.shift()) {
      for (const message of messages) await consumeScanJob(message, env);
    }
  };
  await Promise.all(Array.from({ length: waiting.length }, runLanes));
}

async function consumeScanJob(message: Message<ScanQueueMessage>, env: Env): Promise<void> {
  const body = message.body;
  try {
    if ("kind" in body) {
      const db = createDb(await tenantDatabase(env, body.tenant_id));
      const next = await runBackfillStep(env, db, body.tenant_id, body.job_id, body.after_asset_id);
      if (next !== undefined) await env.SCAN_JOBS.send({ ...body, after_asset_id: next }, { contentType: "json" });
      message.ack();
      return;
    }
    const outcome = await processScanJob(env, body, message.attempts);
    if (outcome === "retry") message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    else message.ack();
  } catch (err) {
    // D1 or the Durable Object failed before the job could record anything: try again later.
    console.error(JSON.stringify({ job_id: body.job_id, error: String(err) }));
    message.retry({ delaySeconds: backoffSeconds(message.attempts) });
  }
}

/** Consumer of `scan-jobs-dlq`: a job whose deliveries all failed is FAILED, never left QUEUED. */
export async function failDeadScanJobs(batch: MessageBatch<ScanQueueMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body;
    const db = createDb(await tenantDatabase(env, body.tenant_id));
    if ("kind" in body) {
      await failBackfill(db, body.tenant_id, body.job_id, "a step could not be delivered after its retries");
      message.ack();
      continue;
    }
    const job = await db.query.scanJobs.findFirst({ where: eq(scanJobs.id, body.job_id) });
    if (job) {
      const reason = job.error?.replace(/^retrying after: /, "") ?? "the scan could not be delivered";
      await failJob(env, db, job, `gave up after ${job.attempts} attempts: ${reason}`);
    }
    message.ack();
  }
}
