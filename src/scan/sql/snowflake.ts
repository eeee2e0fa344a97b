/**
 * Snowflake over the SQL API v2 (POST /api/v2/statements). The SQL API takes no password: it
 * authenticates with key-pair JWTs, OAuth tokens or programmatic access tokens (PATs). So the
 * SIMPLE credential is read as: `private_key` (PKCS#8 PEM) present → a key-pair JWT for
 * `username`; otherwise `password` is a programmatic access token of that user (Snowflake
 * documents PATs as a password replacement, and the SQL API accepts them as bearer tokens).
 */

import { importPKCS8, SignJWT } from "jose";
import { outboundFetch } from "../../lib/outbound-fetch";
import { ConnectorError, fetchOrUnreachable, kindForStatus, logProviderFailure } from "../connectors/types";
import type { ResultColumn, SqlRunner } from "./runner";
import { statementRunner } from "./statement-lifecycle";
import { cleanDetail, exactNumber, parseJson, trimSlash, type WarehouseRunnerOptions } from "./warehouse-api";

export interface SnowflakeConfig {
  /** Account identifier as in the host name: `myorg-myaccount` or `xy12345.eu-west-1.aws`. */
  account: string;
  warehouse: string;
  role: string;
  /** Default database and schema of the statements (unqualified names, INFORMATION_SCHEMA). */
  database?: string | undefined;
  schema?: string | undefined;
  username: string;
  /** A programmatic access token when there is no private key. */
  password: string;
  privateKey?: string | undefined;
}

interface RowType {
  name: string;
  type: string;
  scale?: number;
  precision?: number | null;
}

/** A result column in the spelling of Snowflake's declared types: FIXED is NUMBER(precision, scale). */
function snowflakeColumn(c: RowType): ResultColumn {
  const type = c.type.toLowerCase() === "fixed" ? `NUMBER(${c.precision ?? 38},${c.scale ?? 0})` : c.type.toUpperCase();
  return { name: c.name, type };
}

interface SnowflakeBody {
  code?: string;
  message?: string;
  sqlState?: string;
  statementHandle?: string;
  resultSetMetaData?: { numRows?: number; rowType?: RowType[]; partitionInfo?: unknown[] };
  data?: (string | null)[][];
}

/** Snowflake's codes for a missing or invisible object (SQL compilation errors). */
const NOT_FOUND_CODES = new Set(["002003", "002043"]);
const JWT_LIFETIME_S = 3600;

/** A runner for one Snowflake user, warehouse and role. */
export async function createSnowflakeRunner(
  config: SnowflakeConfig,
  options: WarehouseRunnerOptions = {},
): Promise<SqlRunner> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(config.account)) {
    throw new ConnectorError(
      "the Snowflake account identifier may hold only letters, digits, '.', '_' and '-'",
      "invalid",
    );
  }
  const base = trimSlash(options.endpoint ?? `https://${config.account}.snowflakecomputing.com`);
  // The user name is part of the credential: no message shows it (Snowflake's own quote it).
  const secrets = [config.password, config.privateKey, config.username];
  const keyPair = config.privateKey ? await keyPairSigner(config) : undefined;
  let jwt: { token: string; expiresAt: number } | undefined;

  async function headers(): Promise<Record<string, string>> {
    let token = config.password;
    let type = "PROGRAMMATIC_ACCESS_TOKEN";
    if (keyPair) {
      if (!jwt || Date.now() > jwt.expiresAt - 60_000) jwt = await keyPair();
      token = jwt.token;
      type = "KEYPAIR_JWT";
    }
    return {
      authorization: `Bearer ${token}`,
      "x-snowflake-authorization-token-type": type,
      accept: "application/json",
      "content-type": "application/json",
      // The SQL API refuses requests without a User-Agent.
      "user-agent": "dq-monitor/1.0",
    };
  }

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: SnowflakeBody }> {
    const url = `${base}${path}`;
    const init: RequestInit = { method, headers: await headers() };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetchOrUnreachable(url, () => outboundFetch(url, init, { policy: options.policy }), [
      ...secrets,
      ...(jwt ? [jwt.token] : []),
    ]);
    const text = await res.text().catch(() => "");
    const parsed = (parseJson(text) ?? {}) as SnowflakeBody;
    if (res.status === 200 || res.status === 202) return { status: res.status, body: parsed };
    logProviderFailure("snowflake", res.status, url, text, [...secrets, ...(jwt ? [jwt.token] : [])]);
    throw failure(res.status, parsed);
  }

  function failure(status: number, body: SnowflakeBody): ConnectorError {
    const detail = cleanDetail(body.message, secrets);
    const suffix = detail ? `: ${detail}` : "";
    if (status === 401 || status === 403) {
      return new ConnectorError(
        `Snowflake refused the connection's user on account ${config.account}${suffix}`,
        "auth",
      );
    }
    if (status === 422) {
      // A statement that failed: compile errors name missing objects by code.
      const kind =
        NOT_FOUND_CODES.has(body.code ?? "") || /does not exist/i.test(body.message ?? "") ? "not_found" : "invalid";
      return new ConnectorError(`Snowflake statement failed${suffix}`, kind);
    }
    // 408: the statement ran into its timeout; worth another try later.
    const kind = status === 408 ? "transient" : kindForStatus(status);
    return new ConnectorError(`Snowflake answered ${status}${suffix}`, kind);
  }

  const statementPath = (handle: string) => `/api/v2/statements/${encodeURIComponent(handle)}`;

  return statementRunner<string, { status: number; body: SnowflakeBody }>("snowflake", options, {
    provider: "Snowflake",
    what: "the Snowflake statement",
    noHandle: "Snowflake accepted a statement without a handle",
    async submit(sql, params, budget, started) {
      const request: Record<string, unknown> = {
        statement: sql,
        timeout: Math.min(budget.secondsLeft, 604800),
        warehouse: config.warehouse,
        role: config.role,
      };
      if (config.database) request.database = config.database;
      if (config.schema) request.schema = config.schema;
      if (params.length) request.bindings = bindings(params);
      const answer = await call("POST", `/api/v2/statements?requestId=${crypto.randomUUID()}`, request);
      const handle = answer.body.statementHandle;
      if (handle) started(handle);
      return { handle, answer };
    },
    running: (answer) => answer.status === 202,
    poll: (handle) => call("GET", statementPath(handle)),
    async result({ body }, handle, checkOpen) {
      const rowType = body.resultSetMetaData?.rowType ?? [];
      const rows = (body.data ?? []).map((r) => toObject(rowType, r));
      // Partition 0 came with the result; the others are fetched one by one.
      const partitions = body.resultSetMetaData?.partitionInfo?.length ?? 1;
      for (let p = 1; p < partitions; p++) {
        checkOpen();
        const page = await call("GET", `${statementPath(handle ?? "")}?partition=${p}`);
        for (const r of page.body.data ?? []) rows.push(toObject(rowType, r));
      }
      return { rows, columns: rowType.map(snowflakeColumn) };
    },
    cancel: async (handle) => {
      await call("POST", `${statementPath(handle)}/cancel`).catch(() => {});
    },
  });
}

/** Bindings as the SQL API wants them: positions from "1", Snowflake types, values as text. */
function bindings(params: unknown[]): Record<string, { type: string; value: string | null }> {
  const out: Record<string, { type: string; value: string | null }> = {};
  params.forEach((v, i) => {
    let binding: { type: string; value: string | null };
    if (v === null || v === undefined) binding = { type: "TEXT", value: null };
    else if (typeof v === "boolean") binding = { type: "BOOLEAN", value: String(v) };
    else if (typeof v === "bigint") binding = { type: "FIXED", value: String(v) };
    else if (typeof v === "number") binding = { type: Number.isInteger(v) ? "FIXED" : "REAL", value: String(v) };
    else if (v instanceof Date) binding = { type: "TEXT", value: v.toISOString() };
    else binding = { type: "TEXT", value: String(v) };
    out[String(i + 1)] = binding;
  });
  return out;
}

/** A jsonv2 row (every value text) as an object, typed by the column's Snowflake type. */
function toObject(rowType: RowType[], row: (string | null)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  rowType.forEach((col, i) => {
    out[col.name] = value(col, row[i] ?? null);
  });
  return out;
}

function value(col: RowType, v: string | null): unknown {
  if (v === null) return null;
  switch (col.type.toLowerCase()) {
    case "fixed":
    case "real":
      return exactNumber(v);
    case "boolean":
      return v === "true" || v === "1";
    case "date":
      // Days since the epoch.
      return new Date(Number(v) * 86_400_000).toISOString().slice(0, 10);
    case "timestamp_ntz":
    case "timestamp_ltz":
    case "timestamp_tz": {
      // "seconds.nanoseconds", then for TIMESTAMP_TZ a time-zone index; the epoch part is UTC.
      const seconds = Number(v.split(" ")[0]);
      return Number.isFinite(seconds) ? new Date(Math.round(seconds * 1000)).toISOString() : v;
    }
    default:
      return v;
  }
}

/**
 * Signs key-pair JWTs as Snowflake documents them: iss = ACCOUNT.USER.SHA256:<fingerprint of
 * the public key>, sub = ACCOUNT.USER, at most an hour long. The account is the identifier
 * without region or cloud, upper-cased.
 */
async function keyPairSigner(config: SnowflakeConfig): Promise<() => Promise<{ token: string; expiresAt: number }>> {
  let key: CryptoKey;
  let fingerprint: string;
  try {
    key = await importPKCS8(config.privateKey ?? "", "RS256", { extractable: true });
    const jwk = (await crypto.subtle.exportKey("jwk", key)) as JsonWebKey;
    const publicKey = await crypto.subtle.importKey(
      "jwk",
      { kty: "RSA", n: jwk.n, e: jwk.e, alg: "RS256", ext: true },
      { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
      true,
      ["verify"],
    );
    const spki = (await crypto.subtle.exportKey("spki", publicKey)) as ArrayBuffer;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", spki));
    fingerprint = btoa(String.fromCharCode(...digest));
  } catch {
    throw new ConnectorError(
      "the private key of the Snowflake connection's user is not a valid PKCS#8 RSA key",
      "auth",
    );
  }
  const account = (config.account.split(".")[0] ?? config.account).toUpperCase();
  const user = `${account}.${config.username.toUpperCase()}`;
  return async () => {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", typ: "JWT" })
      .setIssuer(`${user}.SHA256:${fingerprint}`)
      .setSubject(user)
      .setIssuedAt(now)
      .setExpirationTime(now + JWT_LIFETIME_S)
      .sign(key);
    return { token, expiresAt: (now + JWT_LIFETIME_S) * 1000 };
  };
}
