/**
 * MySQL and MariaDB over TCP from the Worker (`mysql2/promise` on node:net, which workerd
 * implements with cloudflare:sockets). Statements run as server-side prepared statements
 * (`execute`), so `?` inside the generator's regular expressions is never mistaken for a
 * placeholder, as client-side interpolation would.
 */

import mysql from "mysql2/promise";
import { networkFailure, recognisedNetworkFailure } from "../../lib/network-errors";
import type { OutboundPolicy } from "../../lib/outbound";
import { ConnectorError, logProviderFailure, safeDetail } from "../connectors/types";
import { checkDatabaseHost, type JdbcConfig } from "./jdbc-config";
import type { ResultColumn, SqlRunner } from "./runner";

/** MySQL protocol column types (MYSQL_TYPE_*, mysql_com.h) by the name information_schema gives them. */
const MYSQL_TYPE_NAMES: Record<number, string> = {
  0: "decimal",
  1: "tinyint",
  2: "smallint",
  3: "int",
  4: "float",
  5: "double",
  7: "timestamp",
  8: "bigint",
  9: "mediumint",
  10: "date",
  11: "time",
  12: "datetime",
  13: "year",
  15: "varchar",
  16: "bit",
  245: "json",
  246: "decimal",
  247: "enum",
  248: "set",
  249: "tinytext",
  250: "mediumtext",
  251: "longtext",
  252: "text",
  253: "varchar",
  254: "char",
  255: "geometry",
};

/** The column's type as information_schema.COLUMNS.COLUMN_TYPE spells it, as far as the metadata tells. */
function mysqlTypeName(f: {
  columnType?: number;
  type?: number;
  columnLength?: number;
  characterSet?: number;
}): string {
  const code = f.columnType ?? f.type ?? -1;
  const name = MYSQL_TYPE_NAMES[code] ?? `type ${code}`;
  // TINYINT(1) is how MySQL declares a boolean; charset 63 (binary) makes a text type a blob.
  if (code === 1 && f.columnLength === 1) return "tinyint(1)";
  if (f.characterSet === 63 && (code === 252 || code === 253 || code === 254))
    return code === 252 ? "blob" : "varbinary";
  return name;
}

const AUTH = new Set([
  "ER_ACCESS_DENIED_ERROR",
  "ER_DBACCESS_DENIED_ERROR",
  "ER_ACCESS_DENIED_NO_PASSWORD_ERROR",
  "ER_TABLEACCESS_DENIED_ERROR",
  "ER_NOT_SUPPORTED_AUTH_MODE",
]);
const NOT_FOUND = new Set([
  "ER_BAD_DB_ERROR",
  "ER_NO_SUCH_TABLE",
  "ER_BAD_FIELD_ERROR",
  "ER_BAD_TABLE_ERROR",
  "ER_SP_DOES_NOT_EXIST",
]);
const TRANSIENT = new Set([
  "ER_LOCK_DEADLOCK",
  "ER_LOCK_WAIT_TIMEOUT",
  "ER_QUERY_TIMEOUT",
  "ER_STATEMENT_TIMEOUT",
  "ER_QUERY_INTERRUPTED",
  "ER_CON_COUNT_ERROR",
  "ER_TOO_MANY_USER_CONNECTIONS",
  "ER_SERVER_SHUTDOWN",
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ETIMEDOUT",
  "ECONNRESET",
  "EPIPE",
]);
const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

function kindOf(err: { code?: unknown; errno?: unknown; message?: unknown }): ConnectorError["kind"] {
  const code = String(err.code ?? "");
  if (AUTH.has(code)) return "auth";
  if (NOT_FOUND.has(code)) return "not_found";
  if (TRANSIENT.has(code)) return "transient";
  if (UNREACHABLE.has(code)) return "unreachable";
  if (code === "HANDSHAKE_NO_SSL_SUPPORT") return "invalid";
  // workerd's sockets report a refused or failed connect without a Node error code.
  if (/connect|refused|network connection lost|socket/i.test(String(err.message ?? ""))) return "unreachable";
  return "invalid";
}

/**
 * A driver error as a ConnectorError with a readable message and no secret in it (the
 * server's "Access denied for user '…'" loses the user name like the password). A failure with
 * no answer from the server, and an answer about the statement's own form, are said in our
 * words (the original is logged); an answer about the user's objects keeps its redacted excerpt.
 */
export function mysqlError(err: unknown, config: Pick<JdbcConfig, "secrets">): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const e = (err ?? {}) as { code?: unknown; message?: unknown; sqlState?: unknown };
  const text = String(e.message ?? err);
  logProviderFailure("mysql", typeof e.code === "string" ? e.code : null, undefined, text, config.secrets);
  if (e.code === "HANDSHAKE_NO_SSL_SUPPORT") {
    return new ConnectorError(
      "MySQL: the server declined TLS; the password is only sent over TLS (set connection_properties.ssl to disable for a server without it)",
      "invalid",
    );
  }
  if (e.code === "ER_PARSE_ERROR") {
    return new ConnectorError(
      "MySQL: the server could not parse the statement the scan generated (details in the logs)",
      "invalid",
    );
  }
  const kind = kindOf(e);
  if (typeof e.sqlState !== "string") {
    // No answer from the server: the socket or the driver failed.
    const lost = kind === "transient" || kind === "unreachable" || recognisedNetworkFailure(err) !== undefined;
    if (lost) return new ConnectorError(`MySQL: ${networkFailure(err)}`, kind === "invalid" ? "transient" : kind);
    if (kind === "invalid") return new ConnectorError("MySQL: the driver failed (details in the logs)", "invalid");
  }
  return new ConnectorError(`MySQL: ${safeDetail(text, config.secrets)}`, kind);
}

/**
 * A runner on one MySQL/MariaDB connection, opened now (auth and reachability errors surface
 * here). `policy` decides which hosts may be reached (default: the deployment's).
 */
export async function createMysqlRunner(config: JdbcConfig, policy?: OutboundPolicy): Promise<SqlRunner> {
  checkDatabaseHost(config, policy);
  let conn: mysql.Connection;
  try {
    conn = await mysql.createConnection({
      host: config.host,
      port: config.port,
      user: config.user,
      password: config.password,
      database: config.database,
      connectTimeout: config.connectTimeoutSeconds * 1000,
      // Workers forbid code generation from strings; mysql2 then uses its static row parsers.
      disableEval: true,
      timezone: "Z",
      decimalNumbers: true,
      supportBigNumbers: true,
      multipleStatements: false,
      // TLS unless the connection says `ssl: disable`: a server without it is refused before any password is sent.
      ...(config.tls === "disable" ? {} : { ssl: {} }),
    });
  } catch (err) {
    throw mysqlError(err, config);
  }
  // A fatal error between queries is emitted as an event; without a listener it would throw.
  let broken: unknown;
  conn.on("error", (err) => {
    broken = err;
  });
  let closing: Promise<void> | undefined;
  return {
    dialect: "mysql",
    async query<T>(text: string, params: unknown[] = []): Promise<T[]> {
      if (broken) throw mysqlError(broken, config);
      try {
        const [rows] = await conn.execute(text, params as never[]);
        return rows as T[];
      } catch (err) {
        throw mysqlError(err, config);
      }
    },
    async columns(text: string, params: unknown[] = []): Promise<ResultColumn[]> {
      if (broken) throw mysqlError(broken, config);
      try {
        const [, fields] = await conn.execute(text, params as never[]);
        return (fields ?? []).map((f) => ({ name: f.name, type: mysqlTypeName(f) }));
      } catch (err) {
        throw mysqlError(err, config);
      }
    },
    close() {
      closing ??= conn.end().catch(() => conn.destroy());
      return closing;
    },
  };
}
