/**
 * Fake Snowflake SQL API v2 under /snowflake ("Submitting a request", "Handling responses",
 * "Authenticating to the server"): key-pair JWT or programmatic access token; the warehouse named
 * picks the behaviour (DQ_WH at once, ASYNC_WH after polls, HANG_WH never, DOWN_WH, BUSY_WH).
 */

import { createHash, createPublicKey, randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import type { FakeContext, Handler, Statement } from "./shared";
import { BadRequest, need, PAGE, poll, send, toPostgres } from "./shared";

const sfAccount = "dqtest";
const sfDatabase = "DQ_DB";
const sfUser = "dq_reader";
const SF_TYPES = new Set([
  "FIXED",
  "REAL",
  "TEXT",
  "BOOLEAN",
  "DATE",
  "TIME",
  "TIMESTAMP_NTZ",
  "TIMESTAMP_LTZ",
  "TIMESTAMP_TZ",
  "BINARY",
]);

const SF_BEHAVIOUR: Record<string, { pending: number } | { status: number }> = {
  DQ_WH: { pending: 0 },
  ASYNC_WH: { pending: 2 },
  HANG_WH: { pending: Number.POSITIVE_INFINITY },
  DOWN_WH: { status: 503 },
  BUSY_WH: { status: 429 },
};

/** What the fake accepts as the user's credentials, minted per run. */
interface Credentials {
  pat: string;
  publicKey: CryptoKey;
  fingerprint: string;
}

/** The Snowflake fake: its handler, and the account, keys and token the tests sign in with. */
export async function createSnowflakeFake(ctx: FakeContext) {
  const sfPat = `pat_${randomBytes(24).toString("base64url")}`;
  const sfKeys = await generateKeyPair("RS256", { extractable: true });
  const sfPrivate = await exportPKCS8(sfKeys.privateKey);
  const sfStranger = await exportPKCS8((await generateKeyPair("RS256", { extractable: true })).privateKey);
  const sfFingerprint = `SHA256:${createHash("sha256")
    .update(createPublicKey(sfPrivate).export({ type: "spki", format: "der" }))
    .digest("base64")}`;
  const credentials: Credentials = { pat: sfPat, publicKey: sfKeys.publicKey, fingerprint: sfFingerprint };
  const handle: Handler = (req, res, url, body) => snowflake(ctx, credentials, req, res, url, body);
  return {
    handle,
    fixtures: {
      endpoint: `${ctx.base}/snowflake`,
      account: sfAccount,
      database: sfDatabase,
      user: sfUser,
      privateKey: sfPrivate,
      pat: sfPat,
      strangerKey: sfStranger,
    },
  };
}

async function snowflakeAuth(credentials: Credentials, req: IncomingMessage): Promise<string | undefined> {
  const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  const type = String(req.headers["x-snowflake-authorization-token-type"] ?? "");
  if (!token) return "Missing authorization header.";
  if (type === "PROGRAMMATIC_ACCESS_TOKEN")
    return token === credentials.pat ? undefined : "Programmatic access token is invalid.";
  if (type !== "KEYPAIR_JWT") return "Unsupported authorization token type.";
  const qualified = `${sfAccount.toUpperCase()}.${sfUser.toUpperCase()}`;
  try {
    const { payload } = await jwtVerify(token, credentials.publicKey, {
      algorithms: ["RS256"],
      issuer: `${qualified}.${credentials.fingerprint}`,
      subject: qualified,
      requiredClaims: ["iat", "exp"],
    });
    if (payload.exp! - payload.iat! > 3600) return "JWT token is invalid: exp more than an hour after iat.";
    return undefined;
  } catch {
    return "JWT token is invalid.";
  }
}

function sfType(oid: number): string {
  if ([20, 21, 23].includes(oid) || oid === 1700) return "fixed";
  if (oid === 700 || oid === 701) return "real";
  if (oid === 16) return "boolean";
  if (oid === 1114) return "timestamp_ntz";
  if (oid === 1184) return "timestamp_ltz";
  if (oid === 1082) return "date";
  return "text";
}

function sfValue(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) {
    const ms = v.getTime();
    return `${Math.floor(ms / 1000)}.${String((ms % 1000) * 1_000_000).padStart(9, "0")}`;
  }
  return String(v);
}

function sfResultSet(st: Statement): { status: number; body: unknown } {
  const outcome = st.outcome!;
  if (!outcome.ok) {
    const missing = outcome.error.code === "42P01" || outcome.error.code === "3F000";
    return {
      status: 422,
      body: {
        code: missing ? "002003" : "001003",
        message: missing
          ? `SQL compilation error:\nObject does not exist or not authorized. (${outcome.error.message})`
          : `SQL compilation error:\n${outcome.error.message}`,
        sqlState: missing ? "42S02" : "42000",
        statementHandle: st.id,
      },
    };
  }
  const { columns, rows } = outcome.result;
  const data = rows.map((r) =>
    r.map((v, i) =>
      sfType(columns[i]!.type) === "date" && v instanceof Date
        ? String(Math.floor(v.getTime() / 86_400_000))
        : sfValue(v),
    ),
  );
  const partitions = [];
  for (let p = 0; p * PAGE < Math.max(data.length, 1); p++) partitions.push(data.slice(p * PAGE, (p + 1) * PAGE));
  st.meta.partitions = partitions;
  return {
    status: 200,
    body: {
      resultSetMetaData: {
        numRows: data.length,
        format: "jsonv2",
        partitionInfo: partitions.map((p) => ({ rowCount: p.length, uncompressedSize: JSON.stringify(p).length })),
        rowType: columns.map((c) => ({
          name: c.name,
          database: sfDatabase,
          schema: "",
          table: "",
          type: sfType(c.type),
          scale: sfType(c.type) === "fixed" ? 0 : null,
          precision: sfType(c.type) === "fixed" ? 38 : null,
          length: null,
          byteLength: null,
          nullable: true,
          collation: null,
        })),
      },
      data: partitions[0],
      code: "090001",
      statementStatusUrl: `/api/v2/statements/${st.id}?requestId=${randomUUID()}`,
      requestId: randomUUID(),
      sqlState: "00000",
      statementHandle: st.id,
      message: "Statement executed successfully.",
      createdOn: Date.now(),
    },
  };
}

const sfRunning = (st: Statement) => ({
  code: "333334",
  message: "Asynchronous execution in progress. Use provided query id to perform query monitoring and management.",
  statementHandle: st.id,
  statementStatusUrl: `/api/v2/statements/${st.id}`,
});

async function snowflake(
  ctx: FakeContext,
  credentials: Credentials,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  raw: Buffer,
) {
  const path = url.pathname.slice("/snowflake".length);
  if (!req.headers["user-agent"]) {
    return send(res, 400, { code: "391903", message: "User-Agent header is required." });
  }
  const refusal = await snowflakeAuth(credentials, req);
  if (refusal) return send(res, 401, { code: "390144", message: refusal });
  if (!String(req.headers.accept ?? "").includes("application/json")) {
    return send(res, 406, { code: "391901", message: "Accept header must include application/json." });
  }
  if (req.method === "POST" && path === "/api/v2/statements") return submitStatement(ctx, req, res, url, raw);
  return statementRequest(ctx, req, res, url, path);
}

/** POST /api/v2/statements: checks the request and bindings, then runs it or answers 202. */
async function submitStatement(ctx: FakeContext, req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer) {
  try {
    need(String(req.headers["content-type"]).startsWith("application/json"), "Content-Type must be application/json");
    const requestId = url.searchParams.get("requestId");
    need(requestId === null || /^[0-9a-f-]{36}$/.test(requestId), "requestId must be a UUID");
    const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
    need(typeof body.statement === "string", "statement must be a string");
    need(
      body.timeout === undefined || (Number.isInteger(body.timeout) && (body.timeout as number) >= 0),
      "timeout must be a non-negative integer",
    );
    for (const k of ["warehouse", "role", "database", "schema"]) {
      need(body[k] === undefined || typeof body[k] === "string", `${k} must be a string`);
    }
    need(body.role === "DQ_READER", "role");
    const { sql: text, count } = toPostgres(body.statement as string, "positional");
    const bindings = (body.bindings ?? {}) as Record<string, { type?: unknown; value?: unknown }>;
    need(typeof bindings === "object", "bindings must be an object");
    const keys = Object.keys(bindings);
    need(keys.length === count, `the statement has ${count} bind variables, bindings has ${keys.length}`);
    const params: (string | null)[] = [];
    for (let i = 1; i <= count; i++) {
      const b = bindings[String(i)];
      need(b && typeof b.type === "string" && SF_TYPES.has(b.type), `binding ${i} needs a Snowflake type`);
      need(b!.value === null || typeof b!.value === "string", `binding ${i} value must be a string`);
      if (b!.type === "FIXED") need(/^-?\d+$/.test(String(b!.value)), `binding ${i} is not FIXED`);
      if (b!.type === "BOOLEAN") need(b!.value === "true" || b!.value === "false", `binding ${i} is not BOOLEAN`);
      params.push(b!.value as string | null);
    }
    const behaviour = SF_BEHAVIOUR[String(body.warehouse)];
    if (!behaviour) {
      return send(res, 422, {
        code: "000606",
        message: "No active warehouse selected in the current session.",
        sqlState: "57P03",
      });
    }
    if ("status" in behaviour)
      return send(res, behaviour.status, { code: "000000", message: "Service temporarily unavailable." });
    if (
      /INFORMATION_SCHEMA\.COLUMNS/i.test(body.statement as string) &&
      !/"\.INFORMATION_SCHEMA/i.test(body.statement as string)
    ) {
      if (body.database === undefined) {
        return send(res, 422, {
          code: "090105",
          message:
            "Cannot perform SELECT. This session does not have a current database. Call 'USE DATABASE', or use a qualified name.",
          sqlState: "22000",
        });
      }
    }
    if (body.database !== undefined && body.database !== sfDatabase) {
      return send(res, 422, {
        code: "002043",
        message: `SQL compilation error:\nObject does not exist, or operation cannot be performed.`,
        sqlState: "02000",
      });
    }
    const st = ctx.statements.remember("snowflake", body.statement as string, behaviour.pending);
    st.outcome = await ctx.run(text, params);
    if (poll(st)) {
      const answer = sfResultSet(st);
      return send(res, answer.status, answer.body);
    }
    return send(res, 202, sfRunning(st));
  } catch (err) {
    if (err instanceof BadRequest || err instanceof SyntaxError) {
      return send(res, 400, {
        code: "390142",
        message: `Incoming request does not contain a valid payload: ${err.message}`,
      });
    }
    throw err;
  }
}

/** GET /api/v2/statements/{handle} (status, or a partition) and POST …/cancel. */
function statementRequest(ctx: FakeContext, req: IncomingMessage, res: ServerResponse, url: URL, path: string) {
  const m = /^\/api\/v2\/statements\/([0-9a-f-]{36})(\/cancel)?$/.exec(path);
  const st = m ? ctx.statements.get(m[1]!) : undefined;
  if (!m || !st || st.provider !== "snowflake")
    return send(res, 404, { code: "333333", message: "Statement not found." });
  if (m[2]) {
    if (req.method !== "POST") return send(res, 405, { message: "POST only" });
    st.cancelled = true;
    return send(res, 200, {
      code: "000604",
      sqlState: "57014",
      message: "successfully canceled",
      statementHandle: st.id,
    });
  }
  if (req.method !== "GET") return send(res, 405, { message: "GET only" });
  if (st.cancelled) {
    return send(res, 422, {
      code: "000604",
      message: "SQL execution canceled",
      sqlState: "57014",
      statementHandle: st.id,
    });
  }
  const partition = url.searchParams.get("partition");
  if (partition !== null && partition !== "0") {
    const parts = st.meta.partitions as unknown[][] | undefined;
    const p = Number(partition);
    if (!parts || !Number.isInteger(p) || p < 0 || p >= parts.length) {
      return send(res, 422, { code: "000000", message: "Invalid partition.", statementHandle: st.id });
    }
    return send(res, 200, { data: parts[p] });
  }
  if (!poll(st)) return send(res, 202, sfRunning(st));
  const answer = sfResultSet(st);
  return send(res, answer.status, answer.body);
}
