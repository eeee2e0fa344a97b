/**
 * Databricks SQL over the Statement Execution API 2.0 (POST /api/2.0/sql/statements) on the SQL
 * warehouse named by the connection's HTTP path, with a personal access token or a service
 * principal's OAuth token (src/scan/connectors/databricks-auth.ts). Parameters are
 * named markers (`:p0`, `:p1`, …, see dialects.ts); results come inline as JSON arrays, in
 * chunks followed through `next_chunk_internal_link`.
 */

import { outboundFetch } from "../../lib/outbound-fetch";
import { type DatabricksAuth, databricksBearer } from "../connectors/databricks-auth";
import { ConnectorError, fetchOrUnreachable, kindForStatus, logProviderFailure } from "../connectors/types";
import type { SqlRunner } from "./runner";
import { statementRunner } from "./statement-lifecycle";
import { cleanDetail, exactNumber, parseJson, trimSlash, type WarehouseRunnerOptions } from "./warehouse-api";

export interface DatabricksConfig {
  /** Workspace host, e.g. dbc-a1b2c3d4-e5f6.cloud.databricks.com. */
  host: string;
  port?: string | undefined;
  /** The warehouse's HTTP path, /sql/1.0/warehouses/{id}. */
  httpPath: string;
  auth: DatabricksAuth;
}

interface Column {
  name: string;
  type_name?: string;
  /** The full type, e.g. DECIMAL(10,2). */
  type_text?: string;
}

interface Chunk {
  data_array?: (string | null)[][];
  next_chunk_internal_link?: string;
}

interface StatementAnswer {
  statement_id?: string;
  status?: { state?: string; error?: { error_code?: string; message?: string } };
  manifest?: { schema?: { columns?: Column[] } };
  result?: Chunk;
  error_code?: string;
  message?: string;
}

/** The warehouse id of an HTTP path; the API runs statements on SQL warehouses only, not clusters. */
export function warehouseIdOf(httpPath: string): string {
  const m = /^\/?sql\/1\.0\/(?:warehouses|endpoints)\/([A-Za-z0-9]+)\/?$/.exec(httpPath.trim());
  if (!m?.[1]) {
    throw new ConnectorError(
      "the DELTALAKE httppath must name a SQL warehouse (/sql/1.0/warehouses/<id>): the Statement Execution API does not run on clusters",
      "invalid",
    );
  }
  return m[1];
}

const NOT_FOUND = /TABLE_OR_VIEW_NOT_FOUND|SCHEMA_NOT_FOUND|CATALOG_NOT_FOUND|NO_SUCH_CATALOG|RESOURCE_DOES_NOT_EXIST/;
const DENIED = /PERMISSION_DENIED|INSUFFICIENT_PERMISSIONS|UNAUTHORIZED|UNAUTHENTICATED/;
const BUSY = /TEMPORARILY_UNAVAILABLE|REQUEST_LIMIT_EXCEEDED|RESOURCE_EXHAUSTED|DEADLINE_EXCEEDED/;

/** A runner on one Databricks SQL warehouse. */
export async function createDatabricksRunner(
  config: DatabricksConfig,
  options: WarehouseRunnerOptions = {},
): Promise<SqlRunner> {
  const warehouseId = warehouseIdOf(config.httpPath);
  if (!/^[A-Za-z0-9.-]+$/.test(config.host))
    throw new ConnectorError("the DELTALAKE host is not a host name", "invalid");
  const port = config.port && config.port !== "443" ? `:${config.port}` : "";
  const base = trimSlash(options.endpoint ?? `https://${config.host}${port}`);
  const bearer = databricksBearer(base, config.auth, options.policy);
  // Grows with each OAuth token the bearer is issued.
  const secrets = bearer.secrets;

  async function call(method: string, path: string, body?: unknown, attempt = 0): Promise<StatementAnswer> {
    const url = `${base}${path}`;
    const init: RequestInit = {
      method,
      headers: { authorization: await bearer.authorization(), "content-type": "application/json" },
    };
    if (body !== undefined) init.body = JSON.stringify(body);
    const res = await fetchOrUnreachable(url, () => outboundFetch(url, init, { policy: options.policy }), secrets);
    if (res.status === 401 && bearer.renews && attempt === 0) {
      // An OAuth token revoked before its expiry: forget it and try once more with a new one.
      await res.body?.cancel();
      bearer.refused();
      return call(method, path, body, 1);
    }
    const text = await res.text().catch(() => "");
    const parsed = (parseJson(text) ?? {}) as StatementAnswer;
    if (res.ok) return parsed;
    logProviderFailure("databricks", res.status, url, text, secrets);
    const detail = cleanDetail(parsed.message, secrets);
    const suffix = detail ? `: ${detail}` : "";
    const kind = kindForStatus(res.status);
    if (kind === "auth") {
      bearer.refused();
      return Promise.reject(new ConnectorError(`Databricks refused ${bearer.who} for ${config.host}${suffix}`, "auth"));
    }
    const code = parsed.error_code ?? "";
    return Promise.reject(
      new ConnectorError(
        `Databricks answered ${res.status}${code ? ` ${code}` : ""}${suffix}`,
        BUSY.test(code) ? "transient" : kind,
      ),
    );
  }

  /** A statement that ended without a result, as an error of the right kind. */
  function ended(answer: StatementAnswer): ConnectorError {
    const state = answer.status?.state ?? "UNKNOWN";
    const error = answer.status?.error;
    const text = `${error?.error_code ?? ""} ${error?.message ?? ""}`;
    logProviderFailure("databricks", state, base, text, secrets);
    const detail = cleanDetail(error?.message, secrets);
    const suffix = detail ? `: ${detail}` : "";
    if (state !== "FAILED") {
      // Cancelled or closed by someone else (or the warehouse stopping): try again later.
      return new ConnectorError(`the Databricks statement ended ${state}${suffix}`, "transient");
    }
    const kind = NOT_FOUND.test(text)
      ? "not_found"
      : DENIED.test(text)
        ? "auth"
        : BUSY.test(text)
          ? "transient"
          : "invalid";
    return new ConnectorError(`Databricks statement failed${suffix}`, kind);
  }

  const statementPath = (id: string) => `/api/2.0/sql/statements/${encodeURIComponent(id)}`;

  return statementRunner<string, StatementAnswer>("databricks", options, {
    provider: "Databricks",
    what: "the Databricks statement",
    noHandle: "Databricks returned a running statement without an id",
    async submit(sql, params, _budget, started) {
      const answer = await call("POST", "/api/2.0/sql/statements", statementRequest(warehouseId, sql, params));
      if (answer.statement_id) started(answer.statement_id);
      return { handle: answer.statement_id, answer };
    },
    running: (answer) => answer.status?.state === "PENDING" || answer.status?.state === "RUNNING",
    poll: (id) => call("GET", statementPath(id)),
    async result(answer, _id, checkOpen) {
      if (answer.status?.state !== "SUCCEEDED") throw ended(answer);
      const columns = answer.manifest?.schema?.columns ?? [];
      const rows: Record<string, unknown>[] = [];
      let chunk: Chunk | undefined = answer.result;
      while (chunk) {
        for (const r of chunk.data_array ?? []) rows.push(toObject(columns, r));
        const next = chunk.next_chunk_internal_link;
        if (!next) break;
        checkOpen();
        // The link is a path on the workspace; never follow it anywhere else.
        if (!next.startsWith("/api/2.0/sql/statements/")) {
          throw new ConnectorError("Databricks returned an unexpected chunk link", "invalid");
        }
        chunk = (await call("GET", next)) as Chunk;
      }
      return { rows, columns: columns.map((c) => ({ name: c.name, type: c.type_text ?? c.type_name ?? "" })) };
    },
    cancel: async (id) => {
      await call("POST", `${statementPath(id)}/cancel`).catch(() => {});
    },
  });
}

/** The body of POST /api/2.0/sql/statements: inline JSON arrays, waited on 30 s then polled. */
export function statementRequest(warehouseId: string, sql: string, params: readonly unknown[]) {
  return {
    statement: sql,
    warehouse_id: warehouseId,
    // Wait on the server first; a longer statement continues and is polled.
    wait_timeout: "30s",
    on_wait_timeout: "CONTINUE" as const,
    format: "JSON_ARRAY" as const,
    disposition: "INLINE" as const,
    ...(params.length ? { parameters: params.map((v, i) => parameter(`p${i}`, v)) } : {}),
  };
}

/** A named parameter: the value as text with its SQL type (no value = NULL). */
function parameter(name: string, v: unknown): { name: string; value?: string; type: string } {
  if (v === null || v === undefined) return { name, type: "STRING" };
  if (typeof v === "boolean") return { name, value: String(v), type: "BOOLEAN" };
  if (typeof v === "bigint") return { name, value: String(v), type: "BIGINT" };
  if (typeof v === "number") return { name, value: String(v), type: Number.isInteger(v) ? "BIGINT" : "DOUBLE" };
  if (v instanceof Date) return { name, value: v.toISOString(), type: "TIMESTAMP" };
  return { name, value: String(v), type: "STRING" };
}

function toObject(columns: Column[], row: (string | null)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  columns.forEach((col, i) => {
    const v = row[i] ?? null;
    out[col.name] = v === null ? null : value(col.type_name ?? "", v);
  });
  return out;
}

function value(type: string, v: string): unknown {
  switch (type.toUpperCase()) {
    case "BYTE":
    case "SHORT":
    case "INT":
    case "LONG":
    case "FLOAT":
    case "DOUBLE":
    case "DECIMAL":
      return exactNumber(v);
    case "BOOLEAN":
      return v === "true";
    default:
      return v;
  }
}
