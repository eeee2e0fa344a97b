/**
 * One local HTTP server playing four warehouse SQL APIs on path prefixes, each checking requests
 * as its provider documents them and answering in its shapes:
 *   /snowflake  Snowflake SQL API v2 (key-pair JWT or programmatic access token)
 *   /bigquery   BigQuery REST v2 jobs.query / getQueryResults / jobs.cancel, /google/token (JWT bearer grant)
 *   /databricks Databricks SQL Statement Execution API 2.0 (bearer token)
 *   /redshift   Redshift Data API, JSON 1.1 with SigV4
 * SQL runs on PostgreSQL (127.0.0.1:5432, database test) in a schema of this run, after the
 * provider's parameter markers and quoting are turned into PostgreSQL's. The two schema queries
 * PostgreSQL cannot run (BigQuery's `dataset`.INFORMATION_SCHEMA and Databricks' full_data_type)
 * are recognised by shape and answered from the fixture table's definition.
 *
 * Behaviour is chosen by the warehouse / project / cluster a test names (async, hang, down,
 * busy); pages are 3 rows, so any result beyond 3 rows is paged.
 */

import { createHash, createHmac, createPublicKey, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer } from "node:net";
import { decodeProtectedHeader, exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import postgres from "postgres";
import type { TestProject } from "vitest/node";

export interface WarehouseFixtures {
  /** PostgreSQL schema (= BigQuery dataset, Databricks/Redshift/Snowflake schema) holding table `items`. */
  schema: string;
  /** Base of the test-only endpoints (/_test/seen, /_test/cancelled). */
  control: string;
  closedPort: number;
  snowflake: {
    endpoint: string;
    account: string;
    database: string;
    user: string;
    privateKey: string;
    pat: string;
    strangerKey: string;
  };
  bigquery: {
    endpoint: string;
    project: string;
    reader: { client_email: string; private_key: string; private_key_id: string; token_uri: string };
    forged: { client_email: string; private_key: string; private_key_id: string; token_uri: string };
  };
  databricks: { endpoint: string; host: string; token: string };
  redshift: { endpoint: string; endpointPrefix: string; accessKey: string; secretKey: string; user: string };
}

declare module "vitest" {
  export interface ProvidedContext {
    warehouses: WarehouseFixtures;
  }
}

const HOST = "127.0.0.1";
const PAGE = 3;

/** The fixture table, as each provider would describe it. */
const ITEMS = [
  { name: "id", pg: "bigint NOT NULL", bigquery: "INT64", databricks: "bigint", nullable: false },
  { name: "name", pg: "text", bigquery: "STRING", databricks: "string", nullable: true },
  { name: "price", pg: "double precision", bigquery: "FLOAT64", databricks: "double", nullable: true },
  { name: "active", pg: "boolean", bigquery: "BOOL", databricks: "boolean", nullable: true },
  { name: "created_at", pg: "timestamp", bigquery: "TIMESTAMP", databricks: "timestamp", nullable: true },
];
const ITEM_ROWS = [
  "(1, 'apple', 1.5, true, '2024-01-01 10:00:00')",
  "(2, 'banana', 0.25, false, '2024-01-02 10:00:00')",
  "(3, 'cherry', NULL, true, '2024-01-03 10:00:00')",
  "(4, NULL, 2.75, NULL, '2024-01-04 10:00:00')",
  "(5, 'date', 3, false, '2024-01-05 10:00:00')",
  "(6, 'elder', 4.5, true, '2024-01-06 10:00:00')",
  "(7, 'fig', 5.25, true, '2024-01-07 10:00:00')",
];

export default async function setup(project: TestProject) {
  const schema = `wh_${process.pid}_${randomBytes(3).toString("hex")}`;
  const pg = postgres({
    host: HOST,
    port: 5432,
    database: "test",
    username: "postgres",
    max: 4,
    onnotice: () => {},
    // timestamp without time zone as UTC, whatever the machine's zone.
    types: {
      // Parameters arrive as the providers' text; postgres.js would turn any string but true into false.
      textBoolean: {
        to: 16,
        from: [16],
        serialize: (x: unknown) => (typeof x === "string" ? x : x ? "t" : "f"),
        parse: (x: string) => x === "t",
      },
      utcTimestamp: {
        to: 1114,
        from: [1114],
        serialize: (x: unknown) => String(x),
        parse: (x: string) => new Date(`${x.replace(" ", "T")}Z`),
      },
    },
  });
  await pg.unsafe(`CREATE SCHEMA "${schema}"`);
  await pg.unsafe(`CREATE TABLE "${schema}".items (${ITEMS.map((c) => `${c.name} ${c.pg}`).join(", ")})`);
  await pg.unsafe(`INSERT INTO "${schema}".items VALUES ${ITEM_ROWS.join(", ")}`);
  const fake = await startFake(pg, schema);
  project.provide("warehouses", { ...fake.fixtures, schema, closedPort: await freePort() });
  return async () => {
    await fake.close();
    await pg.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pg.end({ timeout: 5 });
  };
}

// ---------------------------------------------------------------------------------------------
// Shared machinery

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function send(res: ServerResponse, status: number, body: unknown, type = "application/json") {
  res.writeHead(status, { "content-type": type });
  res.end(JSON.stringify(body));
}

/** A refusal of the request shape: the provider's 400 with what is wrong. */
class BadRequest extends Error {}
const need = (ok: unknown, what: string) => {
  if (!ok) throw new BadRequest(what);
};

/** A statement's result as PostgreSQL gave it: columns (name, type oid) and rows of JS values. */
interface Result {
  columns: { name: string; type: number }[];
  rows: unknown[][];
}

/** An SQL error, with the PostgreSQL SQLSTATE that the providers' shapes are chosen by. */
interface SqlFailure {
  code: string;
  message: string;
}

type Outcome = { ok: true; result: Result } | { ok: false; error: SqlFailure };

/**
 * Provider SQL to PostgreSQL: `?` (positional) or `:name` (named) markers become $n, backtick
 * identifiers become double-quoted; string literals, quoted identifiers and comments are kept.
 * Returns the text and, for named markers, the names in $n order.
 */
function toPostgres(text: string, markers: "positional" | "named"): { sql: string; count: number; names: string[] } {
  let out = "";
  let count = 0;
  const names: string[] = [];
  for (let i = 0; i < text.length; ) {
    const ch = text[i]!;
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < text.length) {
        if (text[j] === "\\" && ch === "'") j += 2;
        else if (text[j] === ch && text[j + 1] === ch) j += 2;
        else if (text[j] === ch) break;
        else j++;
      }
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (ch === "`") {
      const j = text.indexOf("`", i + 1);
      out += `"${text.slice(i + 1, j).replaceAll('"', '""')}"`;
      i = j + 1;
    } else if (ch === "-" && text[i + 1] === "-") {
      const j = text.indexOf("\n", i);
      i = j < 0 ? text.length : j;
    } else if (ch === "/" && text[i + 1] === "*") {
      const j = text.indexOf("*/", i + 2);
      i = j < 0 ? text.length : j + 2;
    } else if (markers === "positional" && ch === "?") {
      out += `$${++count}`;
      i++;
    } else if (markers === "named" && ch === ":" && text[i + 1] === ":") {
      out += "::";
      i += 2;
    } else if (markers === "named" && ch === ":" && /[A-Za-z_]/.test(text[i + 1] ?? "")) {
      const m = /^[A-Za-z0-9_]+/.exec(text.slice(i + 1))!;
      let k = names.indexOf(m[0]);
      if (k < 0) k = names.push(m[0]) - 1;
      out += `$${k + 1}`;
      count++;
      i += 1 + m[0].length;
    } else {
      out += ch;
      i++;
    }
  }
  return { sql: out, count, names };
}

interface Statement {
  id: string;
  provider: string;
  text: string;
  /** Status polls still answered "running"; Infinity for a statement that never finishes. */
  pending: number;
  cancelled: boolean;
  outcome?: Outcome;
  /** Provider-specific extras (BigQuery location, Snowflake database…). */
  meta: Record<string, unknown>;
}

async function startFake(pg: postgres.Sql, schema: string) {
  const statements = new Map<string, Statement>();
  const seenWaiters: { marker: string; resolve: () => void }[] = [];

  async function run(sqlText: string, params: (string | null)[]): Promise<Outcome> {
    try {
      const rows = await pg.unsafe(sqlText, params as string[]).values();
      const columns = (rows.columns ?? []).map((c) => ({ name: c.name, type: c.type }));
      return { ok: true, result: { columns, rows: [...rows] as unknown[][] } };
    } catch (err) {
      const e = err as { code?: string; message?: string };
      return { ok: false, error: { code: String(e.code ?? "XX000"), message: String(e.message ?? err) } };
    }
  }

  function remember(provider: string, text: string, pending: number, meta: Record<string, unknown> = {}): Statement {
    const st: Statement = { id: randomUUID(), provider, text, pending, cancelled: false, meta };
    statements.set(st.id, st);
    for (const w of [...seenWaiters]) {
      if (text.includes(w.marker)) {
        seenWaiters.splice(seenWaiters.indexOf(w), 1);
        w.resolve();
      }
    }
    return st;
  }

  /** One status poll: true once the statement has finished (never for a cancelled one). */
  function poll(st: Statement): boolean {
    if (st.cancelled) return false;
    if (st.pending > 0) {
      st.pending--;
      return false;
    }
    return true;
  }

  const handlers: Record<string, (req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer) => Promise<void>> =
    {
      snowflake: (req, res, url, body) => snowflake(req, res, url, body),
      bigquery: (req, res, url, body) => bigquery(req, res, url, body),
      google: (req, res, url, body) => googleToken(req, res, url, body),
      databricks: (req, res, url, body) => databricks(req, res, url, body),
      redshift: (req, res, url, body) => redshift(req, res, url, body),
    };

  const server: Server = createServer((req, res) => {
    (async () => {
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      const body = await readBody(req);
      if (url.pathname === "/_test/seen") {
        // Answers once a statement carrying the marker was submitted (no polling in the tests).
        const marker = url.searchParams.get("marker") ?? "";
        const already = [...statements.values()].some((s) => s.text.includes(marker));
        if (!already) await new Promise<void>((resolve) => seenWaiters.push({ marker, resolve }));
        return send(res, 200, { seen: true });
      }
      if (url.pathname === "/_test/cancelled") {
        const marker = url.searchParams.get("marker") ?? "";
        const st = [...statements.values()].find((s) => s.text.includes(marker));
        return send(res, 200, { cancelled: st?.cancelled ?? false });
      }
      const prefix = url.pathname.split("/")[1] ?? "";
      const handler = handlers[prefix];
      if (!handler) return send(res, 404, { message: "no such provider" });
      await handler(req, res, url, body);
    })().catch((err) => {
      if (!res.headersSent) send(res, 500, { message: String(err) });
      else res.destroy();
    });
  });

  // ------------------------------------------------------------------------------------------
  // Snowflake SQL API v2 ("Submitting a request", "Handling responses", "Authenticating to the server")

  const sfAccount = "dqtest";
  const sfDatabase = "DQ_DB";
  const sfUser = "dq_reader";
  const sfPat = `pat_${randomBytes(24).toString("base64url")}`;
  const sfKeys = await generateKeyPair("RS256", { extractable: true });
  const sfPrivate = await exportPKCS8(sfKeys.privateKey);
  const sfStranger = await exportPKCS8((await generateKeyPair("RS256", { extractable: true })).privateKey);
  const sfFingerprint = `SHA256:${createHash("sha256")
    .update(createPublicKey(sfPrivate).export({ type: "spki", format: "der" }))
    .digest("base64")}`;
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

  async function snowflakeAuth(req: IncomingMessage): Promise<string | undefined> {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const type = String(req.headers["x-snowflake-authorization-token-type"] ?? "");
    if (!token) return "Missing authorization header.";
    if (type === "PROGRAMMATIC_ACCESS_TOKEN")
      return token === sfPat ? undefined : "Programmatic access token is invalid.";
    if (type !== "KEYPAIR_JWT") return "Unsupported authorization token type.";
    const qualified = `${sfAccount.toUpperCase()}.${sfUser.toUpperCase()}`;
    try {
      const { payload } = await jwtVerify(token, sfKeys.publicKey, {
        algorithms: ["RS256"],
        issuer: `${qualified}.${sfFingerprint}`,
        subject: qualified,
        requiredClaims: ["iat", "exp"],
      });
      if (payload.exp! - payload.iat! > 3600) return "JWT token is invalid: exp more than an hour after iat.";
      return undefined;
    } catch {
      return "JWT token is invalid.";
    }
  }

  const SF_BEHAVIOUR: Record<string, { pending: number } | { status: number }> = {
    DQ_WH: { pending: 0 },
    ASYNC_WH: { pending: 2 },
    HANG_WH: { pending: Number.POSITIVE_INFINITY },
    DOWN_WH: { status: 503 },
    BUSY_WH: { status: 429 },
  };

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

  async function snowflake(req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer) {
    const path = url.pathname.slice("/snowflake".length);
    if (!req.headers["user-agent"]) {
      return send(res, 400, { code: "391903", message: "User-Agent header is required." });
    }
    const refusal = await snowflakeAuth(req);
    if (refusal) return send(res, 401, { code: "390144", message: refusal });
    if (!String(req.headers.accept ?? "").includes("application/json")) {
      return send(res, 406, { code: "391901", message: "Accept header must include application/json." });
    }
    if (req.method === "POST" && path === "/api/v2/statements") {
      try {
        need(
          String(req.headers["content-type"]).startsWith("application/json"),
          "Content-Type must be application/json",
        );
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
        const st = remember("snowflake", body.statement as string, behaviour.pending);
        st.outcome = await run(text, params);
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
    const m = /^\/api\/v2\/statements\/([0-9a-f-]{36})(\/cancel)?$/.exec(path);
    const st = m ? statements.get(m[1]!) : undefined;
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

  // ------------------------------------------------------------------------------------------
  // Google OAuth token endpoint ("Using OAuth 2.0 for Server to Server Applications")

  const googleAccounts = new Map<string, { keyId: string; publicKey: CryptoKey }>();
  const googleTokens = new Map<string, { email: string; expiresAt: number }>();
  const BQ_SCOPES = new Set([
    "https://www.googleapis.com/auth/bigquery",
    "https://www.googleapis.com/auth/cloud-platform",
  ]);

  async function googleToken(req: IncomingMessage, res: ServerResponse, _url: URL, raw: Buffer) {
    const oauthError = (error: string, description: string) =>
      send(res, 400, { error, error_description: description });
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
    const account = googleAccounts.get(issuer);
    if (!account || kid !== account.keyId) return oauthError("invalid_grant", "Invalid JWT Signature.");
    try {
      const { payload } = await jwtVerify(assertion, account.publicKey, {
        algorithms: ["RS256"],
        issuer,
        audience: tokenUri,
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
    googleTokens.set(accessToken, { email: issuer, expiresAt: Date.now() + 3600_000 });
    return send(res, 200, { access_token: accessToken, expires_in: 3599, token_type: "Bearer" });
  }

  // ------------------------------------------------------------------------------------------
  // BigQuery REST v2 (jobs.query, jobs.getQueryResults, jobs.cancel)

  const BQ_BEHAVIOUR: Record<string, { pending: number } | { status: number; reason: string; message: string }> = {
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
  function bqSchemaQuery(text: string, params: (string | null)[]): Result | undefined {
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

  async function bigquery(req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer) {
    const path = url.pathname.slice("/bigquery".length);
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const session = bearer ? googleTokens.get(bearer) : undefined;
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
    if (m[2] === "queries" && !m[3]) {
      if (req.method !== "POST") return bqError(res, 405, "badRequest", "POST only", "INVALID_ARGUMENT");
      try {
        need(
          String(req.headers["content-type"]).startsWith("application/json"),
          "Content-Type must be application/json",
        );
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
        const st = remember("bigquery", body.query as string, behaviour.pending, {
          int64Timestamp: formatOptions.useInt64Timestamp === true,
        });
        const canned = bqSchemaQuery(body.query as string, params);
        st.outcome = canned ? { ok: true, result: canned } : await run(text, params);
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
    const st = m[3] ? statements.get(decodeURIComponent(m[3])) : undefined;
    const location = url.searchParams.get("location");
    if (st?.provider !== "bigquery" || (location !== null && location !== "US")) {
      return bqError(res, 404, "notFound", `Not found: Job ${project}:${location ?? "US"}.${m[3] ?? ""}`, "NOT_FOUND");
    }
    if (m[2] === "jobs" && m[4]) {
      if (req.method !== "POST") return bqError(res, 405, "badRequest", "POST only", "INVALID_ARGUMENT");
      st.cancelled = true;
      return send(res, 200, {
        kind: "bigquery#jobCancelResponse",
        job: { jobReference: { projectId: project, jobId: st.id, location: "US" }, status: { state: "DONE" } },
      });
    }
    if (m[2] !== "queries" || req.method !== "GET") return bqError(res, 404, "notFound", "Not Found", "NOT_FOUND");
    if (st.cancelled)
      return bqError(
        res,
        400,
        "stopped",
        "Job execution was cancelled: User requested cancellation",
        "INVALID_ARGUMENT",
      );
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

  // ------------------------------------------------------------------------------------------
  // Databricks SQL Statement Execution API 2.0

  const dbxToken = `dapi${randomBytes(16).toString("hex")}`;
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
  function dbxSchemaQuery(text: string, params: Map<string, string | null>): Result | undefined {
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

  function dbxStatement(st: Statement) {
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

  async function databricks(req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer) {
    const path = url.pathname.slice("/databricks".length);
    const fail = (status: number, error_code: string, message: string) => send(res, status, { error_code, message });
    if (req.headers.authorization !== `Bearer ${dbxToken}`) {
      return fail(401, "UNAUTHENTICATED", "Invalid access token.");
    }
    if (req.method === "POST" && path === "/api/2.0/sql/statements") {
      try {
        need(
          String(req.headers["content-type"]).startsWith("application/json"),
          "Content-Type must be application/json",
        );
        const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
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
        need(
          body.format === undefined || ["JSON_ARRAY", "ARROW_STREAM", "CSV"].includes(String(body.format)),
          "format",
        );
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
            return fail(400, "INVALID_PARAMETER_VALUE", `[UNBOUND_SQL_PARAMETER] Found the unbound parameter: ${n}.`);
        }
        const behaviour = DBX_BEHAVIOUR[body.warehouse_id as string];
        if (!behaviour)
          return fail(404, "RESOURCE_DOES_NOT_EXIST", `Warehouse ${String(body.warehouse_id)} does not exist.`);
        if ("status" in behaviour)
          return fail(behaviour.status, behaviour.code, "The service is temporarily unavailable.");
        const st = remember("databricks", body.statement as string, behaviour.pending);
        const canned = dbxSchemaQuery(body.statement as string, byName);
        st.outcome = canned
          ? { ok: true, result: canned }
          : await run(
              text,
              names.map((n) => byName.get(n) ?? null),
            );
        return send(res, 200, dbxStatement(st));
      } catch (err) {
        if (err instanceof BadRequest || err instanceof SyntaxError)
          return fail(400, "INVALID_PARAMETER_VALUE", err.message);
        throw err;
      }
    }
    const m = /^\/api\/2\.0\/sql\/statements\/([0-9a-f-]{36})(?:\/(cancel)|\/result\/chunks\/(\d+))?$/.exec(path);
    const st = m ? statements.get(m[1]!) : undefined;
    if (!m || !st || st.provider !== "databricks") return fail(404, "RESOURCE_DOES_NOT_EXIST", "Statement not found.");
    if (m[2]) {
      if (req.method !== "POST") return fail(405, "BAD_REQUEST", "POST only");
      st.cancelled = true;
      return send(res, 200, {});
    }
    if (req.method !== "GET") return fail(405, "BAD_REQUEST", "GET only");
    if (m[3] !== undefined) {
      const index = Number(m[3]);
      const { rows } = (st.outcome as { result: Result }).result;
      if (index >= Math.max(1, Math.ceil(rows.length / PAGE)))
        return fail(400, "INVALID_PARAMETER_VALUE", "chunk index out of range");
      return send(res, 200, dbxChunk(st, index));
    }
    st.meta.polled = true;
    return send(res, 200, dbxStatement(st));
  }

  // ------------------------------------------------------------------------------------------
  // Redshift Data API (JSON 1.1, SigV4)

  const rsRegion = "eu-west-1";
  const rsAccessKey = "AKIADQREDSHIFT000001";
  const rsSecret = randomBytes(30).toString("base64");
  const rsUser = "dq_reader";
  const RS_BEHAVIOUR: Record<string, { pending: number } | { status: number; type: string }> = {
    dqcluster: { pending: 1 },
    dqasync: { pending: 3 },
    dqhang: { pending: Number.POSITIVE_INFINITY },
    dqdown: { status: 500, type: "InternalServerException" },
    dqbusy: { status: 400, type: "ThrottlingException" },
  };

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

  async function redshift(req: IncomingMessage, res: ServerResponse, _url: URL, raw: Buffer) {
    const fail = (status: number, type: string, message: string) =>
      send(res, status, { __type: type, message }, "application/x-amz-json-1.1");
    const refusal = checkSigV4(req, raw, {
      accessKeyId: rsAccessKey,
      secretAccessKey: rsSecret,
      region: rsRegion,
      service: "redshift-data",
    });
    if (refusal) return fail(refusal.status, refusal.type, refusal.message);
    if (req.method !== "POST") return fail(405, "UnknownOperationException", "POST only");
    if (req.headers["content-type"] !== "application/x-amz-json-1.1") {
      return fail(400, "SerializationException", "Content-Type must be application/x-amz-json-1.1");
    }
    const action = /^RedshiftData\.(\w+)$/.exec(String(req.headers["x-amz-target"] ?? ""))?.[1];
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return fail(400, "SerializationException", "Malformed JSON");
    }
    try {
      if (action === "ExecuteStatement") {
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
        if (!behaviour) return fail(400, "ValidationException", `Cluster ${String(cluster)} not found.`);
        if ("status" in behaviour)
          return fail(behaviour.status, behaviour.type, "The service is busy. Try again later.");
        const { sql: text, names } = toPostgres(body.Sql as string, "named");
        for (const n of names) need(byName.has(n), `Parameter ${n} is missing from Parameters`);
        const st = remember("redshift", body.Sql as string, behaviour.pending, { dbUser: body.DbUser });
        st.outcome =
          body.DbUser === rsUser || body.DbUser === undefined
            ? await run(
                text,
                names.map((n) => byName.get(n)!),
              )
            : { ok: false, error: { code: "28000", message: `permission denied for user ${String(body.DbUser)}` } };
        return send(
          res,
          200,
          {
            Id: st.id,
            ClusterIdentifier: cluster,
            CreatedAt: Date.now() / 1000,
            Database: body.Database,
            DbUser: body.DbUser,
          },
          "application/x-amz-json-1.1",
        );
      }
      const st = typeof body.Id === "string" ? statements.get(body.Id) : undefined;
      if (st?.provider !== "redshift") return fail(400, "ResourceNotFoundException", "Query does not exist.");
      if (action === "DescribeStatement") {
        const outcome = st.outcome!;
        const status = st.cancelled ? "ABORTED" : poll(st) ? (outcome.ok ? "FINISHED" : "FAILED") : "STARTED";
        const result = outcome.ok ? outcome.result : undefined;
        return send(
          res,
          200,
          {
            Id: st.id,
            Status: status,
            QueryString: st.text,
            HasResultSet: status === "FINISHED" && (result?.columns.length ?? 0) > 0,
            ResultRows: status === "FINISHED" ? (result?.rows.length ?? 0) : -1,
            ...(status === "FAILED" ? { Error: `ERROR: ${(st.outcome as { error: SqlFailure }).error.message}` } : {}),
          },
          "application/x-amz-json-1.1",
        );
      }
      if (action === "GetStatementResult") {
        const outcome = st.outcome!;
        if (st.cancelled || st.pending > 0 || !outcome.ok)
          return fail(
            400,
            "ValidationException",
            "Query does not have result. Please check query status with DescribeStatement.",
          );
        const { columns, rows } = outcome.result;
        const start =
          typeof body.NextToken === "string" ? Number(Buffer.from(body.NextToken, "base64url").toString()) : 0;
        const page = rows.slice(start, start + PAGE);
        return send(
          res,
          200,
          {
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
            ...(start + PAGE < rows.length
              ? { NextToken: Buffer.from(String(start + PAGE)).toString("base64url") }
              : {}),
          },
          "application/x-amz-json-1.1",
        );
      }
      if (action === "CancelStatement") {
        st.cancelled = true;
        return send(res, 200, { Status: true }, "application/x-amz-json-1.1");
      }
      return fail(400, "UnknownOperationException", `Unknown operation ${String(action)}`);
    } catch (err) {
      if (err instanceof BadRequest) return fail(400, "ValidationException", err.message);
      throw err;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => resolve());
  });
  const base = `http://${HOST}:${(server.address() as { port: number }).port}`;
  const tokenUri = `${base}/google/token`;

  // BigQuery service accounts: one the fake knows, and one signing with a key Google never registered.
  const reader = await generateKeyPair("RS256", { extractable: true });
  const impostor = await generateKeyPair("RS256", { extractable: true });
  const readerAccount = {
    client_email: "bq-reader@dq-test-project.iam.gserviceaccount.com",
    private_key: await exportPKCS8(reader.privateKey),
    private_key_id: randomBytes(20).toString("hex"),
    token_uri: tokenUri,
  };
  googleAccounts.set(readerAccount.client_email, { keyId: readerAccount.private_key_id, publicKey: reader.publicKey });

  const fixtures: Omit<WarehouseFixtures, "schema" | "closedPort"> = {
    control: `${base}/_test`,
    snowflake: {
      endpoint: `${base}/snowflake`,
      account: sfAccount,
      database: sfDatabase,
      user: sfUser,
      privateKey: sfPrivate,
      pat: sfPat,
      strangerKey: sfStranger,
    },
    bigquery: {
      endpoint: `${base}/bigquery`,
      project: "dq-test-project",
      reader: readerAccount,
      forged: { ...readerAccount, private_key: await exportPKCS8(impostor.privateKey) },
    },
    databricks: { endpoint: `${base}/databricks`, host: "dbc-dqtest.cloud.databricks.com", token: dbxToken },
    redshift: {
      endpoint: `${base}/redshift`,
      endpointPrefix: `dqcluster.abc123xyz789.${rsRegion}.redshift.amazonaws.com:5439/dev`,
      accessKey: rsAccessKey,
      secretKey: rsSecret,
      user: rsUser,
    },
  };
  return {
    fixtures,
    close: () =>
      new Promise<void>((resolve) => {
        for (const w of seenWaiters) w.resolve();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// SigV4 ("Authenticating requests (AWS Signature Version 4)"), with the body's own hash

const sha256Hex = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();
const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function checkSigV4(
  req: IncomingMessage,
  body: Buffer,
  account: { accessKeyId: string; secretAccessKey: string; region: string; service: string },
): { status: number; type: string; message: string } | undefined {
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      req.headers.authorization ?? "",
    );
  if (!m) return { status: 400, type: "MissingAuthenticationTokenException", message: "Missing Authentication Token" };
  const [, keyId, date, region, service, signedHeaders, signature] = m as unknown as string[];
  if (keyId !== account.accessKeyId) {
    return {
      status: 400,
      type: "UnrecognizedClientException",
      message: "The security token included in the request is invalid.",
    };
  }
  if (region !== account.region || service !== account.service) {
    return {
      status: 400,
      type: "InvalidSignatureException",
      message: `Credential should be scoped to a valid region and service ${account.service}.`,
    };
  }
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (!amzDate.startsWith(date!) || !(Math.abs(Date.now() - signedAt) < 5 * 60 * 1000)) {
    return { status: 400, type: "InvalidSignatureException", message: "Signature expired." };
  }
  const names = signedHeaders!.split(";");
  for (const h of ["host", "x-amz-date", "x-amz-target"]) {
    if (!names.includes(h)) return { status: 400, type: "InvalidSignatureException", message: `${h} must be signed` };
  }
  const url = new URL(req.url ?? "/", "http://placeholder");
  const canonicalUri = url.pathname
    .split("/")
    .map((seg) => rfc3986(rfc3986(decodeURIComponent(seg))))
    .join("/");
  const canonicalHeaders = names
    .map(
      (n) =>
        `${n}:${String(req.headers[n] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const canonicalRequest = [req.method, canonicalUri, "", canonicalHeaders, signedHeaders, sha256Hex(body)].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${account.secretAccessKey}`, date!), region!), service!), "aws4_request");
  const expected = createHmac("sha256", key).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature!, "hex"))) {
    return {
      status: 400,
      type: "InvalidSignatureException",
      message: "The request signature we calculated does not match the signature you provided.",
    };
  }
  return undefined;
}
