/**
 * Fake Databricks SQL Statement Execution API 2.0 under /databricks (a personal access token, or a
 * service principal's token from /databricks/oidc/v1/token: test/support/databricks-oauth.ts): the
 * warehouse id named picks the behaviour; results come as JSON_ARRAY chunks of 3 rows.
 */

import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createDatabricksOAuth } from "../databricks-oauth";
import { MODELS, shapeErrors } from "../dts-shapes";
import type { FakeContext, Handler, Result, Statement } from "./shared";
import { BadRequest, ITEMS, need, PAGE, poll, send, toPostgres } from "./shared";

const DBX_BEHAVIOUR: Record<string, { pending: number } | { status: number; code: string }> = {
  dqwh01: { pending: 0 },
  dqasync: { pending: 2 },
  dqhang: { pending: Number.POSITIVE_INFINITY },
  dqdown: { status: 503, code: "TEMPORARILY_UNAVAILABLE" },
  dqbusy: { status: 429, code: "REQUEST_LIMIT_EXCEEDED" },
};
const DBX_TYPES = new Set([
  "STRING",
  "BIGINT",
  "INT",
  "SMALLINT",
  "TINYINT",
  "DOUBLE",
  "FLOAT",
  "DECIMAL",
  "BOOLEAN",
  "DATE",
  "TIMESTAMP",
  "TIMESTAMP_NTZ",
  "BINARY",
  "VOID",
]);

/** The Databricks fake: its handler, and the workspace and token the tests connect with. */
export function createDatabricksFake(ctx: FakeContext) {
  const dbxToken = `dapi${randomBytes(16).toString("hex")}`;
  const oauth = createDatabricksOAuth(dbxToken);
  const handle: Handler = (req, res, url, body) => databricks(ctx, oauth, req, res, url, body);
  return {
    handle,
    fixtures: {
      endpoint: `${ctx.base}/databricks`,
      host: "dbc-dqtest.cloud.databricks.com",
      token: dbxToken,
      oauth: oauth.client,
    },
  };
}

const fail = (res: ServerResponse, status: number, error_code: string, message: string) =>
  send(res, status, { error_code, message });

function dbxType(oid: number): { name: string; text: string } {
  if (oid === 20) return { name: "LONG", text: "BIGINT" };
  if (oid === 21 || oid === 23) return { name: "INT", text: "INT" };
  if (oid === 700 || oid === 701) return { name: "DOUBLE", text: "DOUBLE" };
  if (oid === 1700) return { name: "DECIMAL", text: "DECIMAL(38,6)" };
  if (oid === 16) return { name: "BOOLEAN", text: "BOOLEAN" };
  if (oid === 1114 || oid === 1184) return { name: "TIMESTAMP", text: "TIMESTAMP" };
  if (oid === 1082) return { name: "DATE", text: "DATE" };
  return { name: "STRING", text: "STRING" };
}

/** information_schema.columns.full_data_type, which PostgreSQL has not: answered from the fixture. */
function dbxSchemaQuery(schema: string, text: string, params: Map<string, string | null>): Result | undefined {
  const m =
    /^SELECT column_name AS name, full_data_type AS type, is_nullable AS nullable FROM (?:`[^`]+`\.)?information_schema\.columns WHERE table_schema = :(\w+) AND table_name = :(\w+) ORDER BY ordinal_position LIMIT (\d+)$/.exec(
      text,
    );
  if (!m) return undefined;
  const known = params.get(m[1]!) === schema && params.get(m[2]!) === "items";
  return {
    columns: ["name", "type", "nullable"].map((name) => ({ name, type: 25 })),
    rows: known ? ITEMS.map((c) => [c.name, c.databricks, c.nullable ? "YES" : "NO"]) : [],
  };
}

function dbxChunk(st: Statement, index: number) {
  const { rows, columns } = (st.outcome as { result: Result }).result;
  const chunks = Math.max(1, Math.ceil(rows.length / PAGE));
  const slice = rows.slice(index * PAGE, (index + 1) * PAGE);
  const data = slice.map((r) =>
    r.map((v, i) => {
      if (v === null || v === undefined) return null;
      if (v instanceof Date)
        return dbxType(columns[i]!.type).name === "DATE" ? v.toISOString().slice(0, 10) : v.toISOString();
      return String(v);
    }),
  );
  return {
    chunk_index: index,
    row_offset: index * PAGE,
    row_count: slice.length,
    ...(slice.length ? { data_array: data } : {}),
    ...(index + 1 < chunks
      ? {
          next_chunk_index: index + 1,
          next_chunk_internal_link: `/api/2.0/sql/statements/${st.id}/result/chunks/${index + 1}`,
        }
      : {}),
  };
}

/** A statement's answer, checked against the SDK's StatementResponse: a fake that drifted fails its test. */
function dbxStatement(st: Statement) {
  const answer = statementAnswer(st);
  // JSON_ARRAY encodes a NULL as null (Databricks' reference), which the SDK's generated type
  // (data_array: string[][]) does not say: nulls aside, the answer is the SDK's.
  const result = answer.result as { data_array?: (string | null)[][] } | undefined;
  const data_array = result?.data_array?.map((row) => row.map((v) => v ?? ""));
  const checked = data_array ? { ...answer, result: { ...answer.result, data_array } } : answer;
  const drift = shapeErrors(MODELS.databricksSql, "StatementResponse", checked);
  if (drift.length) throw new Error(`the fake's statement answer is not the SDK's: ${drift.join("; ")}`);
  return answer;
}

function statementAnswer(st: Statement) {
  if (st.cancelled) return { statement_id: st.id, status: { state: "CANCELED" } };
  if (!poll(st)) return { statement_id: st.id, status: { state: st.meta.polled ? "RUNNING" : "PENDING" } };
  const outcome = st.outcome!;
  if (!outcome.ok) {
    const missing = outcome.error.code === "42P01" || outcome.error.code === "3F000";
    return {
      statement_id: st.id,
      status: {
        state: "FAILED",
        error: {
          error_code: "BAD_REQUEST",
          message: missing
            ? `[TABLE_OR_VIEW_NOT_FOUND] The table or view cannot be found (${outcome.error.message}). SQLSTATE: 42P01`
            : `[PARSE_SYNTAX_ERROR] ${outcome.error.message} SQLSTATE: 42601`,
        },
      },
    };
  }
  const { columns, rows } = outcome.result;
  const chunks = Math.max(1, Math.ceil(rows.length / PAGE));
  return {
    statement_id: st.id,
    status: { state: "SUCCEEDED" },
    manifest: {
      format: "JSON_ARRAY",
      schema: {
        column_count: columns.length,
        columns: columns.map((c, i) => ({
          name: c.name,
          type_name: dbxType(c.type).name,
          type_text: dbxType(c.type).text,
          position: i,
        })),
      },
      total_chunk_count: chunks,
      chunks: Array.from({ length: chunks }, (_, i) => ({
        chunk_index: i,
        row_offset: i * PAGE,
        row_count: rows.slice(i * PAGE, (i + 1) * PAGE).length,
      })),
      total_row_count: rows.length,
      truncated: false,
    },
    result: dbxChunk(st, 0),
  };
}

async function databricks(
  ctx: FakeContext,
  oauth: ReturnType<typeof createDatabricksOAuth>,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  raw: Buffer,
) {
  const path = url.pathname.slice("/databricks".length);
  if (oauth.handle(req, res, path, raw)) return;
  if (!oauth.accepts(req.headers.authorization)) {
    return fail(res, 401, "UNAUTHENTICATED", "Invalid access token.");
  }
  if (req.method === "POST" && path === "/api/2.0/sql/statements") return executeStatement(ctx, req, res, raw);
  return statementRequest(ctx, req, res, path);
}

/** POST /api/2.0/sql/statements: checks the request and its named parameters, then runs it. */
async function executeStatement(ctx: FakeContext, req: IncomingMessage, res: ServerResponse, raw: Buffer) {
  try {
    need(String(req.headers["content-type"]).startsWith("application/json"), "Content-Type must be application/json");
    const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
    // The request as the Databricks SDK's model (from Databricks' OpenAPI) defines it.
    const refused = shapeErrors(MODELS.databricksSql, "ExecuteStatementRequest", body);
    if (refused.length) return fail(res, 400, "INVALID_PARAMETER_VALUE", refused.join("; "));
    need(typeof body.statement === "string", "statement is required");
    need(typeof body.warehouse_id === "string", "warehouse_id is required");
    need(
      body.wait_timeout === undefined || /^(0|[5-9]|[1-4]\d|50)s$/.test(String(body.wait_timeout)),
      "wait_timeout must be 0s or 5s to 50s",
    );
    need(
      body.on_wait_timeout === undefined || ["CONTINUE", "CANCEL"].includes(String(body.on_wait_timeout)),
      "on_wait_timeout",
    );
    need(body.format === undefined || ["JSON_ARRAY", "ARROW_STREAM", "CSV"].includes(String(body.format)), "format");
    need(
      body.disposition === undefined || ["INLINE", "EXTERNAL_LINKS"].includes(String(body.disposition)),
      "disposition",
    );
    const parameters = (body.parameters ?? []) as { name?: unknown; value?: unknown; type?: unknown }[];
    need(Array.isArray(parameters), "parameters must be a list");
    const byName = new Map<string, string | null>();
    for (const p of parameters) {
      need(typeof p.name === "string" && /^\w+$/.test(p.name), "parameter name");
      need(
        p.value === undefined || p.value === null || typeof p.value === "string",
        `parameter ${String(p.name)}: value must be a string`,
      );
      need(
        p.type === undefined || (typeof p.type === "string" && DBX_TYPES.has(p.type)),
        `parameter ${String(p.name)}: unknown type`,
      );
      if (p.type === "BIGINT") need(/^-?\d+$/.test(String(p.value)), `parameter ${String(p.name)} is not a BIGINT`);
      byName.set(p.name as string, (p.value ?? null) as string | null);
    }
    const { sql: text, names } = toPostgres(body.statement as string, "named");
    for (const n of names) {
      if (!byName.has(n))
        return fail(res, 400, "INVALID_PARAMETER_VALUE", `[UNBOUND_SQL_PARAMETER] Found the unbound parameter: ${n}.`);
    }
    const behaviour = DBX_BEHAVIOUR[body.warehouse_id as string];
    if (!behaviour)
      return fail(res, 404, "RESOURCE_DOES_NOT_EXIST", `Warehouse ${String(body.warehouse_id)} does not exist.`);
    if ("status" in behaviour)
      return fail(res, behaviour.status, behaviour.code, "The service is temporarily unavailable.");
    const st = ctx.statements.remember("databricks", body.statement as string, behaviour.pending);
    const canned = dbxSchemaQuery(ctx.schema, body.statement as string, byName);
    st.outcome = canned
      ? { ok: true, result: canned }
      : await ctx.run(
          text,
          names.map((n) => byName.get(n) ?? null),
        );
    return send(res, 200, dbxStatement(st));
  } catch (err) {
    if (err instanceof BadRequest || err instanceof SyntaxError)
      return fail(res, 400, "INVALID_PARAMETER_VALUE", err.message);
    throw err;
  }
}

/** GET …/statements/{id} (status), GET …/result/chunks/{n} and POST …/cancel. */
function statementRequest(ctx: FakeContext, req: IncomingMessage, res: ServerResponse, path: string) {
  const m = /^\/api\/2\.0\/sql\/statements\/([0-9a-f-]{36})(?:\/(cancel)|\/result\/chunks\/(\d+))?$/.exec(path);
  const st = m ? ctx.statements.get(m[1]!) : undefined;
  if (!m || !st || st.provider !== "databricks")
    return fail(res, 404, "RESOURCE_DOES_NOT_EXIST", "Statement not found.");
  if (m[2]) {
    if (req.method !== "POST") return fail(res, 405, "BAD_REQUEST", "POST only");
    st.cancelled = true;
    return send(res, 200, {});
  }
  if (req.method !== "GET") return fail(res, 405, "BAD_REQUEST", "GET only");
  if (m[3] !== undefined) {
    const index = Number(m[3]);
    const { rows } = (st.outcome as { result: Result }).result;
    if (index >= Math.max(1, Math.ceil(rows.length / PAGE)))
      return fail(res, 400, "INVALID_PARAMETER_VALUE", "chunk index out of range");
    return send(res, 200, dbxChunk(st, index));
  }
  st.meta.polled = true;
  return send(res, 200, dbxStatement(st));
}
