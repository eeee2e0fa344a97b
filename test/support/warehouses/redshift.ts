/**
 * Fake Redshift Data API under /redshift (JSON 1.1, SigV4): ExecuteStatement, DescribeStatement,
 * GetStatementResult and CancelStatement; the cluster or workgroup named picks the behaviour.
 */

import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { MODELS, shapeErrors } from "../dts-shapes";
import type { FakeContext, Handler, SqlFailure, Statement } from "./shared";
import { BadRequest, need, PAGE, poll, send, toPostgres } from "./shared";
import { checkSigV4 } from "./sigv4";

const rsRegion = "eu-west-1";
const rsAccessKey = "AKIADQREDSHIFT000001";
const rsUser = "dq_reader";
const RS_BEHAVIOUR: Record<string, { pending: number } | { status: number; type: string }> = {
  dqcluster: { pending: 1 },
  dqasync: { pending: 3 },
  dqhang: { pending: Number.POSITIVE_INFINITY },
  dqdown: { status: 500, type: "InternalServerException" },
  dqbusy: { status: 400, type: "ThrottlingException" },
};

/** The IAM credentials the fake accepts, its secret minted per run. */
interface Account {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  service: string;
}

/** The Redshift Data API fake: its handler, and the cluster and credentials the tests connect with. */
export function createRedshiftFake(ctx: FakeContext) {
  const rsSecret = randomBytes(30).toString("base64");
  const account: Account = {
    accessKeyId: rsAccessKey,
    secretAccessKey: rsSecret,
    region: rsRegion,
    service: "redshift-data",
  };
  const handle: Handler = (req, res, _url, body) => redshift(ctx, account, req, res, body);
  return {
    handle,
    fixtures: {
      endpoint: `${ctx.base}/redshift`,
      endpointPrefix: `dqcluster.abc123xyz789.${rsRegion}.redshift.amazonaws.com:5439/dev`,
      accessKey: rsAccessKey,
      secretKey: rsSecret,
      user: rsUser,
    },
  };
}

const fail = (res: ServerResponse, status: number, type: string, message: string) =>
  send(res, status, { __type: type, message }, "application/x-amz-json-1.1");

function rsTypeName(oid: number): string {
  const names: Record<number, string> = {
    20: "int8",
    21: "int2",
    23: "int4",
    700: "float4",
    701: "float8",
    1700: "numeric",
    16: "bool",
    1114: "timestamp",
    1184: "timestamptz",
    1082: "date",
  };
  return names[oid] ?? "varchar";
}

function rsField(v: unknown, oid: number): Record<string, unknown> {
  if (v === null || v === undefined) return { isNull: true };
  const t = rsTypeName(oid);
  if (t === "bool") return { booleanValue: v === true };
  if (t.startsWith("int")) return { longValue: Number(v) };
  if (t.startsWith("float")) return { doubleValue: Number(v) };
  if (v instanceof Date)
    return {
      stringValue:
        t === "date"
          ? v.toISOString().slice(0, 10)
          : v
              .toISOString()
              .replace("T", " ")
              .replace(/\.000Z$|Z$/, ""),
    };
  return { stringValue: String(v) };
}

async function redshift(ctx: FakeContext, account: Account, req: IncomingMessage, res: ServerResponse, raw: Buffer) {
  const refusal = checkSigV4(req, raw, account);
  if (refusal) return fail(res, refusal.status, refusal.type, refusal.message);
  if (req.method !== "POST") return fail(res, 405, "UnknownOperationException", "POST only");
  if (req.headers["content-type"] !== "application/x-amz-json-1.1") {
    return fail(res, 400, "SerializationException", "Content-Type must be application/x-amz-json-1.1");
  }
  const action = /^RedshiftData\.(\w+)$/.exec(String(req.headers["x-amz-target"] ?? ""))?.[1];
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch {
    return fail(res, 400, "SerializationException", "Malformed JSON");
  }
  const model = action ? REDSHIFT_MODELS[action] : undefined;
  if (!model) return fail(res, 400, "UnknownOperationException", `Unknown operation ${String(action)}`);
  // The request as the AWS SDK's model of the Data API defines it: no unknown field, none missing.
  const refused = shapeErrors(MODELS.redshiftData, model.input, body);
  if (refused.length) return fail(res, 400, "ValidationException", refused.join("; "));
  // And the answer: a fake that drifted from the model fails its test (a 500), not silently.
  const answer = (r: ServerResponse, status: number, out: Record<string, unknown>) => {
    const drift = status === 200 ? shapeErrors(MODELS.redshiftData, model.output, out) : [];
    if (drift.length) throw new Error(`the fake's ${action} answer is not the SDK's: ${drift.join("; ")}`);
    return send(r, status, out, "application/x-amz-json-1.1");
  };
  try {
    if (action === "ExecuteStatement") return await executeStatement(ctx, res, body, answer);
    const st = typeof body.Id === "string" ? ctx.statements.get(body.Id) : undefined;
    if (st?.provider !== "redshift") return fail(res, 400, "ResourceNotFoundException", "Query does not exist.");
    if (action === "DescribeStatement") return describeStatement(res, st, answer);
    if (action === "GetStatementResult") return getStatementResult(res, st, body, answer);
    if (action === "CancelStatement") {
      st.cancelled = true;
      return answer(res, 200, { Status: true });
    }
    return fail(res, 400, "UnknownOperationException", `Unknown operation ${String(action)}`);
  } catch (err) {
    if (err instanceof BadRequest) return fail(res, 400, "ValidationException", err.message);
    throw err;
  }
}

/** ExecuteStatement: checks the request and its named parameters, then runs it as DbUser. */
type Answer = (res: ServerResponse, status: number, out: Record<string, unknown>) => void;

/** Each operation's request and answer in the AWS SDK's model (dist-types/models/models_0.d.ts). */
const REDSHIFT_MODELS: Record<string, { input: string; output: string }> = {
  ExecuteStatement: { input: "ExecuteStatementInput", output: "ExecuteStatementOutput" },
  DescribeStatement: { input: "DescribeStatementRequest", output: "DescribeStatementResponse" },
  GetStatementResult: { input: "GetStatementResultRequest", output: "GetStatementResultResponse" },
  CancelStatement: { input: "CancelStatementRequest", output: "CancelStatementResponse" },
};

async function executeStatement(ctx: FakeContext, res: ServerResponse, body: Record<string, unknown>, answer: Answer) {
  need(typeof body.Sql === "string" && body.Sql !== "", "Sql is required");
  need(typeof body.Database === "string", "Database is required");
  need(body.ClientToken === undefined || typeof body.ClientToken === "string", "ClientToken");
  const cluster = body.ClusterIdentifier;
  need(
    (cluster === undefined) !== (body.WorkgroupName === undefined),
    "Either ClusterIdentifier or WorkgroupName is required",
  );
  need(
    cluster === undefined || typeof body.DbUser === "string" || typeof body.SecretArn === "string",
    "DbUser or SecretArn is required with ClusterIdentifier",
  );
  need(body.WorkgroupName === undefined || body.DbUser === undefined, "DbUser cannot be used with WorkgroupName");
  const parameters = (body.Parameters ?? []) as { name?: unknown; value?: unknown }[];
  need(Array.isArray(parameters) && parameters.length <= 2000, "Parameters");
  const byName = new Map<string, string>();
  for (const p of parameters) {
    need(typeof p.name === "string" && /^[0-9a-zA-Z_]+$/.test(p.name), "Parameter name must match [0-9a-zA-Z_]+");
    need(
      typeof p.value === "string" && p.value.length >= 1,
      `Parameter ${String(p.name)}: value must be a non-empty string`,
    );
    byName.set(p.name as string, p.value as string);
  }
  const behaviour = RS_BEHAVIOUR[String(cluster ?? body.WorkgroupName)];
  if (!behaviour) return fail(res, 400, "ValidationException", `Cluster ${String(cluster)} not found.`);
  if ("status" in behaviour)
    return fail(res, behaviour.status, behaviour.type, "The service is busy. Try again later.");
  const { sql: text, names } = toPostgres(body.Sql as string, "named");
  for (const n of names) need(byName.has(n), `Parameter ${n} is missing from Parameters`);
  const st = ctx.statements.remember("redshift", body.Sql as string, behaviour.pending, { dbUser: body.DbUser });
  st.outcome =
    body.DbUser === rsUser || body.DbUser === undefined
      ? await ctx.run(
          text,
          names.map((n) => byName.get(n)!),
        )
      : { ok: false, error: { code: "28000", message: `permission denied for user ${String(body.DbUser)}` } };
  return answer(res, 200, {
    Id: st.id,
    ...(cluster !== undefined ? { ClusterIdentifier: cluster } : { WorkgroupName: body.WorkgroupName }),
    CreatedAt: Date.now() / 1000,
    Database: body.Database,
    ...(body.DbUser !== undefined ? { DbUser: body.DbUser } : {}),
  });
}

/** DescribeStatement: one status poll. */
function describeStatement(res: ServerResponse, st: Statement, answer: Answer) {
  const outcome = st.outcome!;
  const status = st.cancelled ? "ABORTED" : poll(st) ? (outcome.ok ? "FINISHED" : "FAILED") : "STARTED";
  const result = outcome.ok ? outcome.result : undefined;
  return answer(res, 200, {
    Id: st.id,
    Status: status,
    QueryString: st.text,
    HasResultSet: status === "FINISHED" && (result?.columns.length ?? 0) > 0,
    ResultRows: status === "FINISHED" ? (result?.rows.length ?? 0) : -1,
    ...(status === "FAILED" ? { Error: `ERROR: ${(st.outcome as { error: SqlFailure }).error.message}` } : {}),
  });
}

/** GetStatementResult: a page of a finished statement's records, NextToken for the rest. */
function getStatementResult(res: ServerResponse, st: Statement, body: Record<string, unknown>, answer: Answer) {
  const outcome = st.outcome!;
  if (st.cancelled || st.pending > 0 || !outcome.ok)
    return fail(
      res,
      400,
      "ValidationException",
      "Query does not have result. Please check query status with DescribeStatement.",
    );
  const { columns, rows } = outcome.result;
  const start = typeof body.NextToken === "string" ? Number(Buffer.from(body.NextToken, "base64url").toString()) : 0;
  const page = rows.slice(start, start + PAGE);
  return answer(res, 200, {
    ColumnMetadata: columns.map((c) => ({
      name: c.name,
      label: c.name,
      typeName: rsTypeName(c.type),
      nullable: 1,
      isCaseSensitive: false,
      isSigned: true,
      schemaName: "",
      tableName: "",
    })),
    Records: page.map((r) => r.map((v, i) => rsField(v, columns[i]!.type))),
    TotalNumRows: rows.length,
    ...(start + PAGE < rows.length ? { NextToken: Buffer.from(String(start + PAGE)).toString("base64url") } : {}),
  });
}
