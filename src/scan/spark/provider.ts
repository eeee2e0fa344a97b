/**
 * What every Spark provider client does (Databricks Jobs, EMR, Dataproc workflow templates):
 * submit one run of the PySpark driver, read its state, cancel it. One HTTP helper turns a
 * provider's error answer into a ConnectorError with the provider's own message, never a secret.
 */

import type { SparkProvider } from "../../db/schema";
import type { OutboundPolicy } from "../../lib/outbound";
import { outboundFetch } from "../../lib/outbound-fetch";
import { ConnectorError, fetchOrUnreachable, kindForStatus, logProviderFailure, safeDetail } from "../connectors/types";
import { parseJson } from "../sql/warehouse-api";

/** One run of the driver, as the provider is asked for it. */
export interface SparkRunSpec {
  /** Our job id: the run's name and the provider's idempotency token where it has one. */
  jobId: string;
  /** Where the driver is deployed (dbfs:/…, s3://…, gs://…). */
  driverUri: string;
  /** The driver's command-line arguments (spark/dq_profile.py --help). */
  args: string[];
  /** spark_properties of the tenant's Spark job configuration. */
  sparkConf: Record<string, string>;
  /** The provider stops the run after this long (the callback deadline). */
  timeoutSeconds: number;
  /** The source is an Iceberg table: the provider puts the Iceberg Spark runtime on the cluster (iceberg-runtime.ts). */
  iceberg?: boolean;
}

/** A submitted run: the provider's id, its page where it has one, its first state. */
export interface SubmittedRun {
  runId: string;
  runUrl?: string;
  state: string;
}

/** The provider's view of a run: its own state name, whether it ended, and how. */
export interface RunStatus {
  state: string;
  ended: boolean;
  /** The provider's own message when the run failed or was cancelled. */
  failure?: string;
  runUrl?: string;
}

export interface SparkProviderClient {
  readonly provider: SparkProvider;
  submit(spec: SparkRunSpec): Promise<SubmittedRun>;
  status(runId: string): Promise<RunStatus>;
  cancel(runId: string): Promise<void>;
}

/** How a provider answers errors: where its message and error code sit in the JSON. */
export interface ErrorShape {
  provider: string;
  secrets: readonly (string | undefined)[];
  /** The message and code of an error body. */
  read(body: Record<string, unknown>): { code?: string; message?: string };
  /** Codes that mean "slow down / try later" although the status is not 429 or 5xx (AWS ThrottlingException). */
  busy?: RegExp;
}

/** Sends one API call through the outbound policy and returns its JSON, or throws the provider's message. */
export async function providerCall<T>(
  url: string,
  init: RequestInit,
  shape: ErrorShape,
  policy?: OutboundPolicy,
): Promise<T> {
  const res = await fetchOrUnreachable(url, () => outboundFetch(url, init, policy ? { policy } : {}), shape.secrets);
  // Decoded by hand: AWS answers application/x-amz-json-1.1, which Response.text() warns about.
  const text = new TextDecoder().decode(await res.arrayBuffer().catch(() => new ArrayBuffer(0)));
  const body = (parseJson(text) ?? {}) as Record<string, unknown>;
  if (res.ok) return body as T;
  logProviderFailure(shape.provider.toLowerCase(), res.status, url, text, shape.secrets);
  const { code, message } = shape.read(body);
  const detail = safeDetail([code, message].filter(Boolean).join(": "), shape.secrets);
  const busy = res.status === 429 || res.status >= 500 || (code !== undefined && shape.busy?.test(code) === true);
  throw new ConnectorError(
    `${shape.provider} answered ${res.status}${detail ? ` (${detail})` : ""}`,
    busy ? "transient" : kindForStatus(res.status),
  );
}

/** A provider's message for a failed run, cleaned like any error detail. */
export function runFailure(message: unknown, secrets: readonly (string | undefined)[]): string {
  return safeDetail(message, secrets) || "the provider gave no reason";
}
