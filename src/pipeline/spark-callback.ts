/**
 * The Spark callback, accepted (docs/resources/light-and-full-scans.md, "The callback"):
 * size-bounded, signed with the job's own secret over "<timestamp>.<body>", inside the timestamp
 * window, before the job's deadline, and single use. An accepted callback only records that it
 * was used and goes to the `scan-results` queue; its consumer applies it to the asset's monitor
 * like every other result. Anything refused changes nothing.
 */

import { eq } from "drizzle-orm";
import type { ScanResultMessage } from "../contracts/messages";
import type { AssetProfile } from "../contracts/profile";
import { createDb, type Db } from "../db";
import { type ScanJobRow, scanJobs } from "../db/schema";
import { type ShardEnv, shardDatabases, tenantDatabase } from "../db/shards";
import type { Env } from "../env";
import { releaseCallback, takeCallback } from "../jobs/lifecycle";
import { type SealedSecret, secretBox } from "../lib/crypto";
import { ConflictError, InvalidInputError, LimitExceededError, UnauthenticatedError } from "../lib/errors";
import { ScanCallbackBody } from "../scan/spark/callback-body";
import { checkCallbackSignature } from "../scan/spark/callback-signature";
import { callbackAad } from "./spark-dispatch";

/** Larger results travel by reference to the tenant's storage: a queue message holds at most 128 KB. */
export const CALLBACK_MAX_BYTES = 96 * 1024;

const refused = (detail: string) => new UnauthenticatedError(`The callback is refused: ${detail}`);

/**
 * The job and the database of its tenant (src/db/shards.ts), found from the job id alone: every
 * shard is asked at once (one round trip's wait: `requestDb` is the request's own database, shard
 * 0, the others beside it), and the shard that has the job answers. A tenant that is moving has
 * the job in two: the directory says which is its own. Undefined when no shard has the job.
 */
async function findCallbackJob(env: ShardEnv, requestDb: Db, jobId: string) {
  const dbs = shardDatabases(env).map((d1, n) => (n === 0 ? requestDb : d1 ? createDb(d1) : undefined));
  const found = await Promise.all(
    dbs.map(async (db) =>
      db ? { db, job: await db.query.scanJobs.findFirst({ where: eq(scanJobs.id, jobId) }) } : undefined,
    ),
  );
  const held = found.filter((f) => f?.job !== undefined) as { db: Db; job: ScanJobRow }[];
  const [first] = held;
  if (held.length <= 1 || !first?.job.tenantId) return first;
  const home = await tenantDatabase(env, first.job.tenantId);
  return held.find((f) => f.db.$client === home || (f.db === requestDb && home === env.DB)) ?? first;
}

/** Checks a callback and queues it; throws a domain error (4xx) for anything it refuses. */
export async function acceptScanCallback(
  env: Env,
  requestDb: Db,
  jobId: string,
  headers: { timestamp?: string | undefined; signature?: string | undefined },
  body: string,
  now: Date = new Date(),
): Promise<void> {
  if (new TextEncoder().encode(body).byteLength > CALLBACK_MAX_BYTES) {
    throw new LimitExceededError(
      `A callback carries at most ${CALLBACK_MAX_BYTES} bytes; a larger profile goes to the tenant's storage (profile_ref)`,
    );
  }
  const found = await findCallbackJob(env, requestDb, jobId);
  // An unknown job and a bad signature look the same: the answer tells a stranger nothing.
  const sealed = found?.job.callbackSecret;
  if (!found || !sealed) throw refused("the signature is not valid");
  const { db, job } = found;
  const secret = await secretBox(env.ENCRYPTION_KEYS).open<string>(
    JSON.parse(sealed) as SealedSecret,
    callbackAad(job.id),
  );
  const check = await checkCallbackSignature(secret, headers, body, Math.floor(now.getTime() / 1000));
  if (check === "malformed") throw refused("X-DQ-Timestamp (unix seconds) and X-DQ-Signature (v1=<hex>) are required");
  if (check === "stale") throw refused("its timestamp is outside the 5-minute window");
  if (check === "forged") throw refused("the signature is not valid");
  if (job.callbackUsedAt) throw new ConflictError("This job's callback was already used: a callback is accepted once");
  if (job.status !== "RUNNING") throw new ConflictError(`The job is ${job.status}: it takes no callback`);
  if (job.callbackDeadline && Date.parse(job.callbackDeadline) <= now.getTime()) {
    throw new ConflictError("The job's deadline has passed: the callback is too late");
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidInputError([], "The callback body is not JSON");
  }
  const parsed = ScanCallbackBody.safeParse(value);
  if (!parsed.success) {
    throw new InvalidInputError(
      parsed.error.issues
        .slice(0, 20)
        .map((i) => ({ field: ["body", ...i.path.map(String)].join("."), message: i.message })),
      "The callback body is not a result; see errors",
    );
  }
  const receivedAt = now.toISOString();
  // Single use: only the first callback sets callback_used_at; a concurrent second one finds it set.
  if (!(await takeCallback(db, job.id, receivedAt)))
    throw new ConflictError("This job's callback was already used: a callback is accepted once");
  const result = parsed.data;
  const message: ScanResultMessage = {
    job_id: job.id,
    tenant_id: job.tenantId,
    asset_id: job.assetId,
    status: result.status,
    received_at: receivedAt,
    ...("profile" in result ? { profile: result.profile as AssetProfile } : {}),
    ...("profile_ref" in result ? { profile_ref: result.profile_ref } : {}),
    ...("error" in result ? { error: result.error } : {}),
  };
  try {
    await env.SCAN_RESULTS.send(message, { contentType: "json" });
  } catch (err) {
    // Not queued: the callback may be sent again.
    await releaseCallback(db, job.id);
    throw err;
  }
}
