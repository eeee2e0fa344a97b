/**
 * Fake BigQuery REST v2 under /bigquery (jobs.query, jobs.getQueryResults, jobs.cancel), and the
 * Google OAuth token endpoint under /google/token that grants its bearer tokens ("Using OAuth 2.0
 * for Server to Server Applications"). The project named picks the behaviour.
 */

import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { decodeProtectedHeader, exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import type { FakeContext, Handler, Result, SqlFailure, Statement } from "./shared";
import { BadRequest, ITEMS, need, PAGE, poll, send, toPostgres } from "./shared";

/** The service accounts Google knows and the access tokens it has granted, per run. */
export interface Google {
  tokenUri: string;
  accounts: Map<string, { keyId: string; publicKey: CryptoKey }>;
  tokens: Map<string, { email: string; expiresAt: number }>;
}

/** The BigQuery fake: its handler, the token endpoint's, and the service accounts the tests sign with. */
export async function createBigQueryFake(ctx: FakeContext) {
  const google: Google = { tokenUri: `${ctx.base}/google/token`, accounts: new Map(), tokens: new Map() };

  // BigQuery service accounts: one the fake knows, and one signing with a key Google never registered.
  const reader = await generateKeyPair("RS256", { extractable: true });
  const impostor = await generateKeyPair("RS256", { extractable: true });
  const readerAccount = {
    client_email: "bq-reader@dq-test-project.iam.gserviceaccount.com",
    private_key: await exportPKCS8(reader.privateKey),
    private_key_id: randomBytes(20).toString("hex"),
    token_uri: google.tokenUri,
  };
  google.accounts.set(readerAccount.client_email, { keyId: readerAccount.private_key_id, publicKey: reader.publicKey });

  const handle: Handler = (req, res, url, body) => bigquery(ctx, google, req, res, url, body);
  const token: Handler = (req, res, _url, body) => googleToken(google, req, res, body);
  return {
    handle,
    token,
    fixtures: {
      endpoint: `${ctx.base}/bigquery`,
      project: "dq-test-project",
      reader: readerAccount,
      forged: { ...readerAccount, private_key: await exportPKCS8(impostor.privateKey) },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Google OAuth token endpoint ("Using OAuth 2.0 for Server to Server Applications")

const BQ_SCOPES = new Set([
  "https://www.googleapis.com/auth/bigquery",
  "https://www.googleapis.com/auth/cloud-platform",
]);

/** Google's token endpoint: a JWT bearer grant of a known account becomes a bearer token (shared with the Dataproc fake). */
export async function googleToken(google: Google, req: IncomingMessage, res: ServerResponse, raw: Buffer) {
  const oauthError = (error: string, description: string) => send(res, 400, { error, error_description: description });
  if (req.method !== "POST") return send(res, 405, { error: "invalid_request" });
  if (!String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded")) {
    return oauthError("invalid_request", "Content-Type must be application/x-www-form-urlencoded");
  }
  const form = new URLSearchParams(raw.toString("utf8"));
  if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
    return oauthError("unsupported_grant_type", "Invalid grant_type.");
  }
  const assertion = form.get("assertion") ?? "";
  let issuer = "";
  let kid: string | undefined;
  try {
    kid = decodeProtectedHeader(assertion).kid;
    issuer = String(JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString()).iss);
  } catch {
    return oauthError("invalid_grant", "Invalid JWT: malformed.");
  }
  const account = google.accounts.get(issuer);
  if (!account || kid !== account.keyId) return oauthError("invalid_grant", "Invalid JWT Signature.");
  try {
    const { payload } = await jwtVerify(assertion, account.publicKey, {
      algorithms: ["RS256"],
      issuer,
      audience: google.tokenUri,
      requiredClaims: ["iat", "exp", "scope"],
    });
    if (payload.exp! - payload.iat! > 3600) throw new Error("exp more than an hour after iat");
    if (
      !String(payload.scope)
        .split(" ")
        .some((s) => BQ_SCOPES.has(s))
    ) {
      return oauthError("invalid_scope", "No BigQuery scope was requested.");
    }
  } catch (err) {
    return oauthError("invalid_grant", `Invalid JWT: ${err instanceof Error ? err.message : String(err)}`);
  }
  const accessToken = `ya29.${randomBytes(24).toString("base64url")}`;
  google.tokens.set(accessToken, { email: issuer, expiresAt: Date.now() + 3600_000 });
  return send(res, 200, { access_token: accessToken, expires_in: 3599, token_type: "Bearer" });
}

// ---------------------------------------------------------------------------------------------
// BigQuery REST v2 (jobs.query, jobs.getQueryResults, jobs.cancel)

type Behaviour = { pending: number } | { status: number; reason: string; message: string };

const BQ_BEHAVIOUR: Record<string, Behaviour> = {
  "dq-test-project": { pending: 0 },
  "dq-slow-project": { pending: 2 },
  "dq-hang-project": { pending: Number.POSITIVE_INFINITY },
  "dq-down-project": {
    status: 503,
    reason: "backendError",
    message: "Error encountered during execution. Retrying may solve the problem.",
  },
  "dq-busy-project": {
    status: 403,
    reason: "rateLimitExceeded",
    message: "Exceeded rate limits: too many concurrent queries for this project_and_region.",
  },
};
const BQ_PARAM_TYPES = new Set(["STRING", "INT64", "FLOAT64", "BOOL", "TIMESTAMP", "DATE", "NUMERIC", "BYTES"]);

const bqError = (res: ServerResponse, code: number, reason: string, message: string, status: string) =>
  send(res, code, { error: { code, message, errors: [{ message, domain: "global", reason }], status } });

function bqType(oid: number): string {
  if ([20, 21, 23].includes(oid)) return "INTEGER";
  if (oid === 700 || oid === 701) return "FLOAT";
  if (oid === 1700) return "NUMERIC";
  if (oid === 16) return "BOOLEAN";
  if (oid === 1114 || oid === 1184) return "TIMESTAMP";
  if (oid === 1082) return "DATE";
  return "STRING";
}

function bqValue(v: unknown, type: string, int64Timestamp: boolean): unknown {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) {
    if (type === "DATE") return v.toISOString().slice(0, 10);
    return int64Timestamp ? String(v.getTime() * 1000) : (v.getTime() / 1000).toExponential().replace("e+", "E");
  }
  return String(v);
}

/** `dataset`.INFORMATION_SCHEMA.COLUMNS, which PostgreSQL cannot resolve: answered from the fixture. */
function bqSchemaQuery(schema: string, text: string, params: (string | null)[]): Result | undefined {
  const m =
    /^SELECT column_name AS name, data_type AS type, is_nullable AS nullable FROM `([^`]+)`\.INFORMATION_SCHEMA\.COLUMNS WHERE table_name = \? ORDER BY ordinal_position LIMIT (\d+)$/.exec(
      text,
    );
  if (!m) return undefined;
  const known = m[1] === schema && params[0] === "items";
  return {
    columns: ["name", "type", "nullable"].map((name) => ({ name, type: 25 })),
    rows: known ? ITEMS.map((c) => [c.name, c.bigquery, c.nullable ? "YES" : "NO"]) : [],
  };
}

function bqOutcomeError(res: ServerResponse, st: Statement, project: string) {
  const error = (st.outcome as { error: SqlFailure }).error;
  if (error.code === "42P01" || error.code === "3F000") {
    return bqError(
      res,
      404,
      "notFound",
      `Not found: Table ${project}:${error.message} was not found in location US`,
      "NOT_FOUND",
    );
  }
  return bqError(res, 400, "invalidQuery", `Syntax error: ${error.message}`, "INVALID_ARGUMENT");
}

function bqRows(st: Statement, project: string, pageToken: string | null, int64Timestamp: boolean) {
  const { columns, rows } = (st.outcome as { result: Result }).result;
  const start = pageToken ? Number(Buffer.from(pageToken, "base64url").toString()) : 0;
  const fields = columns.map((c) => ({ name: c.name, type: bqType(c.type), mode: "NULLABLE" }));
  const page = rows.slice(start, start + PAGE);
  return {
    schema: { fields },
    jobReference: { projectId: project, jobId: st.id, location: "US" },
    totalRows: String(rows.length),
    ...(page.length
      ? { rows: page.map((r) => ({ f: r.map((v, i) => ({ v: bqValue(v, fields[i]!.type, int64Timestamp) })) })) }
      : {}),
    ...(start + PAGE < rows.length ? { pageToken: Buffer.from(String(start + PAGE)).toString("base64url") } : {}),
    totalBytesProcessed: "0",
    jobComplete: true,
    cacheHit: false,
  };
}

async function bigquery(
  ctx: FakeContext,
  google: Google,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  raw: Buffer,
) {
  const path = url.pathname.slice("/bigquery".length);
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  const session = bearer ? google.tokens.get(bearer) : undefined;
  if (!session || session.expiresAt < Date.now()) {
    return bqError(res, 401, "authError", "Request had invalid authentication credentials.", "UNAUTHENTICATED");
  }
  const m = /^\/bigquery\/v2\/projects\/([^/]+)\/(queries|jobs)(?:\/([^/]+))?(\/cancel)?$/.exec(path);
  if (!m) return bqError(res, 404, "notFound", "Not Found", "NOT_FOUND");
  const project = decodeURIComponent(m[1]!);
  const behaviour = BQ_BEHAVIOUR[project];
  if (!behaviour) {
    return bqError(
      res,
      403,
      "accessDenied",
      `Access Denied: Project ${project}: User does not have bigquery.jobs.create permission in project ${project}.`,
      "PERMISSION_DENIED",
    );
  }
  if (m[2] === "queries" && !m[3]) return query(ctx, req, res, raw, project, behaviour);
  return jobRequest(ctx, req, res, url, project, { collection: m[2]!, jobId: m[3], cancel: m[4] });
}

/** POST …/queries (jobs.query): checks the request and its positional parameters, then runs it. */
async function query(
  ctx: FakeContext,
  req: IncomingMessage,
  res: ServerResponse,
  raw: Buffer,
  project: string,
  behaviour: Behaviour,
) {
  if (req.method !== "POST") return bqError(res, 405, "badRequest", "POST only", "INVALID_ARGUMENT");
  try {
    need(String(req.headers["content-type"]).startsWith("application/json"), "Content-Type must be application/json");
    const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
    need(typeof body.query === "string", "query must be a string");
    need(
      body.useLegacySql === false,
      "Query parameters cannot be used in legacy SQL queries (useLegacySql must be false)",
    );
    need(body.timeoutMs === undefined || Number.isInteger(body.timeoutMs), "timeoutMs must be an integer");
    need(body.location === undefined || typeof body.location === "string", "location must be a string");
    const formatOptions = (body.formatOptions ?? {}) as { useInt64Timestamp?: unknown };
    need(
      formatOptions.useInt64Timestamp === undefined || typeof formatOptions.useInt64Timestamp === "boolean",
      "formatOptions.useInt64Timestamp must be a boolean",
    );
    const { sql: text, count } = toPostgres(body.query as string, "positional");
    const qp = (body.queryParameters ?? []) as {
      name?: unknown;
      parameterType?: { type?: unknown };
      parameterValue?: { value?: unknown };
    }[];
    need(Array.isArray(qp), "queryParameters must be a list");
    need(qp.length === count, `Query has ${count} positional parameters but ${qp.length} were given`);
    if (count) need(body.parameterMode === "POSITIONAL", "parameterMode must be POSITIONAL for ? parameters");
    const params = qp.map((p, i) => {
      need(p.name === undefined, `positional parameter ${i} must not have a name`);
      need(
        typeof p.parameterType?.type === "string" && BQ_PARAM_TYPES.has(p.parameterType.type as string),
        `parameter ${i} has no valid type`,
      );
      const v = p.parameterValue?.value;
      need(v === undefined || typeof v === "string", `parameter ${i} value must be a string`);
      if (p.parameterType!.type === "INT64") need(/^-?\d+$/.test(String(v)), `parameter ${i} is not an INT64`);
      return (v ?? null) as string | null;
    });
    if ("status" in behaviour)
      return bqError(res, behaviour.status, behaviour.reason, behaviour.message, "UNAVAILABLE");
    const st = ctx.statements.remember("bigquery", body.query as string, behaviour.pending, {
      int64Timestamp: formatOptions.useInt64Timestamp === true,
    });
    const canned = bqSchemaQuery(ctx.schema, body.query as string, params);
    st.outcome = canned ? { ok: true, result: canned } : await ctx.run(text, params);
    if (!poll(st)) {
      return send(res, 200, {
        kind: "bigquery#queryResponse",
        jobReference: { projectId: project, jobId: st.id, location: "US" },
        jobComplete: false,
      });
    }
    if (!st.outcome.ok) return bqOutcomeError(res, st, project);
    return send(res, 200, {
      kind: "bigquery#queryResponse",
      ...bqRows(st, project, null, st.meta.int64Timestamp === true),
    });
  } catch (err) {
    if (err instanceof BadRequest || err instanceof SyntaxError)
      return bqError(res, 400, "invalid", err.message, "INVALID_ARGUMENT");
    throw err;
  }
}

/** GET …/queries/{jobId} (jobs.getQueryResults) and POST …/jobs/{jobId}/cancel (jobs.cancel). */
function jobRequest(
  ctx: FakeContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  project: string,
  job: { collection: string; jobId: string | undefined; cancel: string | undefined },
) {
  const st = job.jobId ? ctx.statements.get(decodeURIComponent(job.jobId)) : undefined;
  const location = url.searchParams.get("location");
  if (st?.provider !== "bigquery" || (location !== null && location !== "US")) {
    return bqError(
      res,
      404,
      "notFound",
      `Not found: Job ${project}:${location ?? "US"}.${job.jobId ?? ""}`,
      "NOT_FOUND",
    );
  }
  if (job.collection === "jobs" && job.cancel) {
    if (req.method !== "POST") return bqError(res, 405, "badRequest", "POST only", "INVALID_ARGUMENT");
    st.cancelled = true;
    return send(res, 200, {
      kind: "bigquery#jobCancelResponse",
      job: { jobReference: { projectId: project, jobId: st.id, location: "US" }, status: { state: "DONE" } },
    });
  }
  if (job.collection !== "queries" || req.method !== "GET")
    return bqError(res, 404, "notFound", "Not Found", "NOT_FOUND");
  if (st.cancelled)
    return bqError(res, 400, "stopped", "Job execution was cancelled: User requested cancellation", "INVALID_ARGUMENT");
  const pageToken = url.searchParams.get("pageToken");
  if (!pageToken && !poll(st)) {
    return send(res, 200, {
      kind: "bigquery#getQueryResultsResponse",
      jobReference: { projectId: project, jobId: st.id, location: "US" },
      jobComplete: false,
    });
  }
  if (!st.outcome!.ok) return bqOutcomeError(res, st, project);
  const int64 = url.searchParams.get("formatOptions.useInt64Timestamp") === "true";
  return send(res, 200, {
    kind: "bigquery#getQueryResultsResponse",
    etag: randomUUID(),
    ...bqRows(st, project, pageToken, int64),
  });
}
