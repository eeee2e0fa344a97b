/**
 * BigQuery over the REST API: jobs.query (POST …/projects/{project}/queries) runs a GoogleSQL
 * statement with positional (`?`) parameters; jobs.getQueryResults polls a job that did not
 * finish within timeoutMs and pages through its rows. Authenticated as the connection's
 * service account (JWT bearer grant, shared with the GCS connector).
 */

import { outboundFetch } from "../../lib/outbound-fetch";
import { accountSecrets, exchangeServiceAccountAssertion, type GcsServiceAccount } from "../connectors/gcs";
import { ConnectorError, fetchOrUnreachable, kindForStatus, logProviderFailure } from "../connectors/types";
import type { SqlRunner } from "./runner";
import { statementRunner } from "./statement-lifecycle";
import { cleanDetail, exactNumber, parseJson, trimSlash, type WarehouseRunnerOptions } from "./warehouse-api";

/** jobs.query creates a query job: it needs the bigquery scope (the read-only scopes cannot create jobs). */
export const BIGQUERY_SCOPE = "https://www.googleapis.com/auth/bigquery";

export interface BigQueryConfig {
  /** The project the jobs run (and are billed) in; unqualified datasets are looked up there. */
  project: string;
  /** Where the data lives (US, EU, europe-west1…); BigQuery infers it when unset. */
  location?: string | undefined;
  serviceAccount: GcsServiceAccount;
}

interface Field {
  name: string;
  type: string;
}

interface QueryAnswer {
  jobComplete?: boolean;
  jobReference?: { projectId?: string; jobId?: string; location?: string };
  schema?: { fields?: Field[] };
  rows?: { f: { v: unknown }[] }[];
  pageToken?: string;
  error?: { code?: number; message?: string; status?: string; errors?: { reason?: string; message?: string }[] };
}

/** Reasons BigQuery gives for errors that pass with time, whatever the HTTP status (403 included). */
const TRANSIENT_REASONS = new Set([
  "rateLimitExceeded",
  "quotaExceeded",
  "backendError",
  "internalError",
  "jobBackendError",
  "jobInternalError",
]);

/** How long each jobs.query / getQueryResults call may wait for the job on the server side. */
const SERVER_WAIT_MS = 10_000;

/** A runner for one BigQuery project as one service account. */
export async function createBigQueryRunner(
  config: BigQueryConfig,
  options: WarehouseRunnerOptions = {},
): Promise<SqlRunner> {
  const base = `${trimSlash(options.endpoint ?? "https://bigquery.googleapis.com")}/bigquery/v2/projects/${encodeURIComponent(config.project)}`;
  const account: GcsServiceAccount = {
    ...config.serviceAccount,
    ...(options.tokenUri ? { token_uri: options.tokenUri } : {}),
  };
  const secrets = accountSecrets(account);
  let token: { accessToken: string; refreshAt: number } | undefined;

  async function call(method: string, url: string, body?: unknown): Promise<QueryAnswer> {
    for (let attempt = 0; ; attempt++) {
      if (!token || attempt > 0 || Date.now() > token.refreshAt) {
        token = await exchangeServiceAccountAssertion(account, BIGQUERY_SCOPE, options.policy);
      }
      const init: RequestInit = {
        method,
        headers: { authorization: `Bearer ${token.accessToken}`, "content-type": "application/json" },
      };
      if (body !== undefined) init.body = JSON.stringify(body);
      const sent = [...secrets, token.accessToken];
      const res = await fetchOrUnreachable(url, () => outboundFetch(url, init, { policy: options.policy }), sent);
      const text = await res.text().catch(() => "");
      const parsed = (parseJson(text) ?? {}) as QueryAnswer;
      if (res.ok) return parsed;
      // A token revoked or expired early: sign in again once.
      if (res.status === 401 && attempt === 0) continue;
      logProviderFailure("bigquery", res.status, url, text, sent);
      throw failure(res.status, parsed);
    }
  }

  function failure(status: number, body: QueryAnswer): ConnectorError {
    const reason = body.error?.errors?.[0]?.reason ?? "";
    const detail = cleanDetail(body.error?.message, secrets);
    const suffix = detail ? `: ${detail}` : "";
    let kind = kindForStatus(status);
    if (TRANSIENT_REASONS.has(reason)) kind = "transient";
    else if (reason === "notFound") kind = "not_found";
    else if (reason === "accessDenied") kind = "auth";
    else if (reason === "invalidQuery" || reason === "invalid") kind = "invalid";
    if (kind === "auth") {
      return new ConnectorError(
        `BigQuery refused the connection's service account in project ${config.project}${suffix}`,
        "auth",
      );
    }
    return new ConnectorError(`BigQuery answered ${status}${suffix}`, kind);
  }

  function resultsUrl(jobId: string, location: string | undefined, pageToken?: string): string {
    const q = new URLSearchParams({ timeoutMs: String(SERVER_WAIT_MS), "formatOptions.useInt64Timestamp": "true" });
    if (location) q.set("location", location);
    if (pageToken) q.set("pageToken", pageToken);
    return `${base}/queries/${encodeURIComponent(jobId)}?${q}`;
  }

  type Job = { jobId: string; location?: string | undefined };

  return statementRunner<Job, QueryAnswer>("bigquery", options, {
    provider: "BigQuery",
    what: "the BigQuery job",
    noHandle: "BigQuery returned an unfinished job without an id",
    async submit(sql, params, _budget, started) {
      const request: Record<string, unknown> = {
        query: sql,
        useLegacySql: false,
        timeoutMs: SERVER_WAIT_MS,
        // Timestamps as microseconds since the epoch (exact), not as floating-point seconds.
        formatOptions: { useInt64Timestamp: true },
      };
      if (config.location) request.location = config.location;
      if (params.length) {
        // The generator writes `?` markers: positional parameters, in order.
        request.parameterMode = "POSITIONAL";
        request.queryParameters = params.map(parameter);
      }
      const answer = await call("POST", `${base}/queries`, request);
      const jobId = answer.jobReference?.jobId;
      const job = jobId ? { jobId, location: answer.jobReference?.location ?? config.location } : undefined;
      if (job) started(job);
      return { handle: job, answer };
    },
    running: (answer) => answer.jobComplete === false,
    poll: (job) => call("GET", resultsUrl(job.jobId, job.location)),
    async result(first, job, checkOpen) {
      let answer = first;
      const fields = answer.schema?.fields ?? [];
      const rows = (answer.rows ?? []).map((r) => toObject(fields, r));
      while (answer.pageToken) {
        checkOpen();
        if (!job) break;
        answer = await call("GET", resultsUrl(job.jobId, job.location, answer.pageToken));
        for (const r of answer.rows ?? []) rows.push(toObject(fields, r));
      }
      return { rows, columns: fields.map((f) => ({ name: f.name, type: f.type })) };
    },
    cancel: async (job) => {
      const q = job.location ? `?location=${encodeURIComponent(job.location)}` : "";
      await call("POST", `${base}/jobs/${encodeURIComponent(job.jobId)}/cancel${q}`).catch(() => {});
    },
  });
}

/** A positional query parameter: GoogleSQL type and the value as text (absent value = NULL). */
function parameter(v: unknown): { parameterType: { type: string }; parameterValue: { value?: string } } {
  if (v === null || v === undefined) return { parameterType: { type: "STRING" }, parameterValue: {} };
  if (typeof v === "boolean") return { parameterType: { type: "BOOL" }, parameterValue: { value: String(v) } };
  if (typeof v === "bigint") return { parameterType: { type: "INT64" }, parameterValue: { value: String(v) } };
  if (typeof v === "number") {
    return { parameterType: { type: Number.isInteger(v) ? "INT64" : "FLOAT64" }, parameterValue: { value: String(v) } };
  }
  if (v instanceof Date) return { parameterType: { type: "TIMESTAMP" }, parameterValue: { value: v.toISOString() } };
  return { parameterType: { type: "STRING" }, parameterValue: { value: String(v) } };
}

/** A row of `f`/`v` cells as an object keyed by the schema's field names. */
function toObject(fields: Field[], row: { f: { v: unknown }[] }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  fields.forEach((field, i) => {
    out[field.name] = value(field, row.f[i]?.v ?? null);
  });
  return out;
}

function value(field: Field, v: unknown): unknown {
  if (v === null || typeof v !== "string") return v;
  switch (field.type.toUpperCase()) {
    case "INTEGER":
    case "INT64":
    case "FLOAT":
    case "FLOAT64":
    case "NUMERIC":
    case "BIGNUMERIC":
      return exactNumber(v);
    case "BOOLEAN":
    case "BOOL":
      return v === "true";
    case "TIMESTAMP": {
      // Microseconds since the epoch (formatOptions.useInt64Timestamp).
      const micros = Number(v);
      return Number.isFinite(micros) ? new Date(Math.floor(micros / 1000)).toISOString() : v;
    }
    default:
      return v;
  }
}
