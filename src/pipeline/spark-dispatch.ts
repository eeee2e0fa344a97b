/**
 * Full scans, the Worker's side: which Spark provider of the tenant runs a scan (and with whose
 * credential), what the driver is told to read, and the dispatch itself. The job row records the
 * provider, its run id and the sealed per-job callback secret before and after the provider call,
 * so a redelivered queue message never starts a second run (each provider's idempotency token or
 * request id is the job id, and the secret is reused).
 */

import { and, eq } from "drizzle-orm";
import {
  type ConnectionCredential,
  driverSourceOf,
  openCredential,
  type SparkRequest,
  type SparkStart,
  sparkStartOf,
} from "../connections";
import type { Db } from "../db";
import type { AssetHead, ConnectionRow, ScanJobRow, SparkProvider, TenantRow } from "../db/schema";
import { connections, tenants } from "../db/schema";
import type { Env } from "../env";
import { markDispatched, recordRunState, recordSparkDispatch } from "../jobs/lifecycle";
import { type SealedSecret, secretBox } from "../lib/crypto";
import { outboundPolicy } from "../lib/outbound";
import { newCallbackSecret } from "../scan/spark/callback-signature";
import { sparkSettingsFor } from "../scan/spark/iceberg-runtime";
import type { SparkProviderClient } from "../scan/spark/provider";
import { getSparkJobConfig, type SparkJobConfig } from "../settings/spark";

/** A full scan that has not called back after this long is cancelled and failed (the cron checks). */
export const FULL_SCAN_TIMEOUT_SECONDS = 4 * 3600;

/** Where a large profile is written by the driver, in the tenant's storage (never a key the caller names). */
export const resultKey = (tenantId: string, jobId: string) => `spark-results/${tenantId}/${jobId}/profile.json`;

type Block = Record<string, unknown> & { connection_id?: number; driver_uri?: string };

/** A provider ready to take a run: its client, where the driver is, and what its block said. */
export interface SparkTarget {
  provider: SparkProvider;
  client: SparkProviderClient;
  driverUri: string;
  sparkConf: Record<string, string>;
  /** URI scheme the cluster reads S3 objects with (EMR: s3, elsewhere s3a). */
  s3Scheme: "s3" | "s3a";
}

/** The tenant's Spark provider for an asset, or why there is none (in words for the job). */
export type SparkChoice = SparkTarget | { missing: string };

interface Candidate {
  provider: SparkProvider;
  block: Block;
  /** The credential type the block's connection must carry. */
  credential: "TOKEN" | "AWS" | "GCP";
}

/** The configured providers, in the documented order: Databricks, EMR, Dataproc. */
function candidates(config: SparkJobConfig, tenant: TenantRow | undefined): Candidate[] {
  const out: Candidate[] = [];
  if (config.databricks_config)
    out.push({ provider: "DATABRICKS", block: config.databricks_config, credential: "TOKEN" });
  if (config.emr_config) out.push({ provider: "EMR", block: config.emr_config, credential: "AWS" });
  const dataproc = config.dataproc_config ?? tenant?.dataprocConfig ?? undefined;
  if (dataproc) out.push({ provider: "DATAPROC", block: dataproc, credential: "GCP" });
  return out;
}

/**
 * Picks the provider of a full scan: a configured provider that the asset's own connection can
 * start (DELTALAKE → Databricks, AWS keys → EMR, a GCP service account → Dataproc) first, else
 * the first one whose block names a connection_id of the tenant.
 */
export async function chooseSparkTarget(
  env: Env,
  db: Db,
  asset: AssetHead,
  own: { connection: ConnectionRow; credential: ConnectionCredential } | undefined,
): Promise<SparkChoice> {
  const [config, tenant] = await Promise.all([
    getSparkJobConfig(db, asset.tenantId),
    db.query.tenants.findFirst({ where: eq(tenants.id, asset.tenantId) }),
  ]);
  const list = candidates(config, tenant);
  if (list.length === 0) {
    return { missing: "the tenant has no Spark job configuration (databricks_config, emr_config or dataproc_config)" };
  }
  // The provider a connection can start is its type's (src/connections): a DELTALAKE token starts Databricks…
  const fits = (c: Candidate, start: SparkStart | undefined): start is SparkStart => start?.provider === c.provider;
  const ownStart = own ? sparkStartOf(own.connection, own.credential) : undefined;
  const ownFit = list.find((c) => c.block.connection_id === undefined && fits(c, ownStart));
  if (ownFit && ownStart) return target(env, ownFit, ownStart, config, tenant);
  for (const c of list) {
    if (c.block.connection_id === undefined) continue;
    const connection = await db.query.connections.findFirst({
      where: and(eq(connections.tenantId, asset.tenantId), eq(connections.id, c.block.connection_id)),
    });
    if (!connection) return { missing: `${blockName(c)}.connection_id ${c.block.connection_id} names no connection` };
    const start = sparkStartOf(connection, await openCredential(env, connection));
    if (!fits(c, start)) {
      return { missing: `${blockName(c)}.connection_id must name a connection with ${need(c)}` };
    }
    return target(env, c, start, config, tenant);
  }
  const names = list.map((c) => `${blockName(c)} (${need(c)})`).join(", ");
  return {
    missing: `no configured provider can be started with the asset's connection: set connection_id in ${names}`,
  };
}

const blockName = (c: Candidate) =>
  c.provider === "DATABRICKS" ? "databricks_config" : c.provider === "EMR" ? "emr_config" : "dataproc_config";
const need = (c: Candidate) =>
  c.credential === "TOKEN" ? "a DELTALAKE token" : c.credential === "AWS" ? "AWS keys" : "a GCP service account";

/** The provider's target: its client opened by the connection's module, where its driver is, its Spark settings. */
function target(
  env: Env,
  c: Candidate,
  start: SparkStart,
  config: SparkJobConfig,
  tenant: TenantRow | undefined,
): SparkChoice {
  const client = start.client(c.block, outboundPolicy(env));
  const storage = tenant?.storage as { type?: string; payload?: { bucket?: string } } | null | undefined;
  const storageUri = (scheme: string, type: string) =>
    storage?.type === type && storage.payload?.bucket
      ? `${scheme}://${storage.payload.bucket}/dq-monitor/spark/dq_profile.py`
      : undefined;
  const sparkConf = config.spark_properties ?? {};
  const block = c.block;
  switch (c.provider) {
    case "DATABRICKS":
      return {
        provider: "DATABRICKS",
        client,
        driverUri: block.driver_uri ?? "dbfs:/dq-monitor/spark/dq_profile.py",
        sparkConf,
        s3Scheme: "s3a",
      };
    case "EMR": {
      const driverUri = block.driver_uri ?? storageUri("s3", "S3");
      if (!driverUri) return { missing: "emr_config.driver_uri is not set and the tenant's storage is not S3" };
      return { provider: "EMR", client, driverUri, sparkConf, s3Scheme: "s3" };
    }
    case "DATAPROC": {
      const driverUri = block.driver_uri ?? storageUri("gs", "GCS");
      if (!driverUri) return { missing: "dataproc_config.driver_uri is not set and the tenant's storage is not GCS" };
      return { provider: "DATAPROC", client, driverUri, sparkConf, s3Scheme: "s3a" };
    }
  }
}

/** What the driver reads (its --source argument): never a credential; the cluster reads with its own identity. */
export function driverSource(
  asset: AssetHead,
  connection: ConnectionRow,
  request: SparkRequest,
  s3Scheme: "s3" | "s3a",
): Record<string, unknown> {
  return driverSourceOf(asset.type, connection.payload, { asset: asset.payload, request, s3Scheme });
}

/** The per-job callback secret: the one already sealed on the row (a retried dispatch), or a new one. */
async function callbackSecretOf(env: Env, job: ScanJobRow): Promise<{ secret: string; sealed: string }> {
  const box = secretBox(env.ENCRYPTION_KEYS);
  if (job.callbackSecret) {
    const secret = await box.open<string>(JSON.parse(job.callbackSecret) as SealedSecret, callbackAad(job.id));
    return { secret, sealed: job.callbackSecret };
  }
  const secret = newCallbackSecret();
  return { secret, sealed: JSON.stringify(await box.seal(secret, callbackAad(job.id))) };
}

/** The sealed callback secret opens only in its own job's row. */
export const callbackAad = (jobId: string) => `scan-callback:${jobId}`;

/** The callback URL of a job, on the service's public origin. */
export const callbackUrl = (env: Pick<Env, "PUBLIC_BASE_URL">, jobId: string) =>
  `${(env.PUBLIC_BASE_URL || "http://localhost:8787").replace(/\/+$/, "")}/api/callbacks/scans/${jobId}`;

export interface FullScanInput {
  job: ScanJobRow;
  reason: string;
  target: SparkTarget;
  source: Record<string, unknown>;
  /** The asset's options as the driver applies them. */
  options: Record<string, unknown>;
  /** The tenant's storage URI for a profile too large for the callback, when it has storage. */
  resultUri?: string;
}

/** Records the job as a SPARK scan, submits the run and records the provider's run id and state. */
export async function dispatchFullScan(env: Env, db: Db, input: FullScanInput): Promise<void> {
  const { job, target } = input;
  const { secret, sealed } = await callbackSecretOf(env, job);
  const deadline = new Date(Date.now() + FULL_SCAN_TIMEOUT_SECONDS * 1000).toISOString();
  await recordSparkDispatch(db, job.id, {
    provider: target.provider,
    engineReason: input.reason,
    callbackSecret: sealed,
    callbackDeadline: deadline,
  });
  const args = [
    "--job-id",
    job.id,
    "--callback-url",
    callbackUrl(env, job.id),
    "--callback-secret",
    secret,
    "--source",
    JSON.stringify(input.source),
    "--options",
    JSON.stringify(input.options),
    ...(input.resultUri ? ["--result-uri", input.resultUri] : []),
  ];
  const run = await target.client.submit({
    jobId: job.id,
    driverUri: target.driverUri,
    args,
    // An Iceberg source adds its catalog and asks the provider for the Iceberg runtime.
    ...sparkSettingsFor(input.source, target.sparkConf),
    timeoutSeconds: FULL_SCAN_TIMEOUT_SECONDS,
  });
  // A cancel that came while the provider was being called found no run to cancel: cancel it now,
  // or it would run (and bill the tenant's cluster) for a job that has ended (and may have left D1
  // for its asset's object already: no row to mark).
  const status = await markDispatched(db, job.id, run);
  if (status === undefined || status === "CANCELLED") {
    try {
      await target.client.cancel(run.runId);
      await recordRunState(db, job.id, "CANCELLING");
    } catch (err) {
      console.error(JSON.stringify({ event: "orphan_run_not_cancelled", job_id: job.id, error: String(err) }));
    }
  }
}

/** The time a row's callback deadline has passed, for the cron. */
export const deadlinePassed = (job: Pick<ScanJobRow, "callbackDeadline">, now: Date) =>
  job.callbackDeadline !== null && Date.parse(job.callbackDeadline) <= now.getTime();
