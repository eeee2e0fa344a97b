/**
 * Where a GENERIC_JDBC connection's settings come from.
 *
 * Payload (visible): `db_type`, `db_or_schema` (the database to connect to: a PostgreSQL
 * database, a MySQL/MariaDB database = schema), `connection_properties` (non-secret: `host`,
 * `port`, `ssl` = disable | prefer | require (prefer and require both insist on TLS: a server that
 * declines it is refused, so a password never crosses plain TCP unless the connection says
 * `ssl: disable`), `connect_timeout` in seconds, `schema` (PostgreSQL
 * default schema of tables named without one), or a `url` such as
 * `jdbc:postgresql://db.example.com:5432/sales`).
 *
 * Credential (GENERIC_MAP, sealed): `user` (or `username`) and `password`; it may also carry
 * `host`, `port`, `database` or `url` when those are secret too. A key in the credential wins
 * over the same key in connection_properties; explicit keys win over the `url`.
 */

import { checkOutboundHost, type OutboundPolicy, OutboundTargetError } from "../../lib/outbound";
import { deploymentOutboundPolicy } from "../../lib/outbound-fetch";
import { ConnectorError, refusedTarget, safeDetail } from "../connectors/types";

/**
 * The connection_properties read here, each with its meaning (the OpenAPI document shows them);
 * any other property is kept with the connection and not read by a scan (a custom parameter).
 */
export const JDBC_CONNECTION_PROPERTIES = {
  host: "Database host name or address (a host in the credential wins, then this, then the url's)",
  port: "TCP port; default 5432 (postgresql), 3306 (mysql, mariadb)",
  database: "Database to connect to; default db_or_schema",
  url: "jdbc:<postgresql|mysql|mariadb>://host[:port]/database, in place of host, port and database (those keys win over it)",
  ssl:
    "TLS: prefer (the default) and require both insist on TLS, refusing a server that declines it before any " +
    "password is sent; disable talks plain TCP, which a scan accepts only where private targets are allowed " +
    "(ALLOW_PRIVATE_TARGETS=true, local development: a local PostgreSQL without TLS needs ssl: disable). " +
    "true means require, false disable; any other value counts as prefer",
  sslmode: "The same as ssl, read when ssl is absent",
  connect_timeout: "Seconds to wait for the connection; default 10",
  schema: "PostgreSQL: the schema of tables named without one",
  currentSchema: "The same as schema (the PostgreSQL JDBC driver's name for it)",
} as const;

export interface JdbcPayload {
  db_type: string;
  db_or_schema: string;
  connection_properties?: Record<string, string | undefined>;
}

export type TlsMode = "disable" | "prefer" | "require";

export interface JdbcConfig {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** PostgreSQL: schema of tables named without one. */
  schema?: string;
  tls: TlsMode;
  connectTimeoutSeconds: number;
  /**
   * What no message may show: the password, the user name, and whatever of host, port,
   * database and url the credential (not the visible payload) holds.
   */
  secrets: string[];
}

const JDBC_URL = /^jdbc:(?:postgresql|mysql|mariadb):\/\/([^/:?#]+|\[[^\]]+\])(?::(\d{1,5}))?(?:\/([^?#;]*))?/i;

/**
 * Where a JDBC URL points. `field` names where the URL came from in the user's words
 * (connection_properties.url, or the credential's url, which is never echoed).
 */
function fromUrl(url: string | undefined, field: string): { host?: string; port?: string; database?: string } {
  if (!url) return {};
  const m = JDBC_URL.exec(url.trim());
  if (!m) {
    throw new ConnectorError(
      `${field} must look like jdbc:<postgresql|mysql|mariadb>://host[:port]/database`,
      "invalid",
    );
  }
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port: m[2], database: m[3] ? decodeDatabase(m[3], field) : undefined };
}

/** The database name of a URL, percent-decoded; escapes that do not spell UTF-8 (`%ff`) are the user's to fix. */
function decodeDatabase(raw: string, field: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ConnectorError(
      `${field}: the database name is not valid percent-encoding (escapes must spell UTF-8, e.g. %C3%A9 for é)`,
      "invalid",
    );
  }
}

const PROPS_URL = "connection_properties.url";
const CREDENTIAL_URL = "the credential's url";

/**
 * The problem of a JDBC URL as a connection's `connection_properties.url`, or undefined when it
 * parses: for the validation of connections (a 400 at create and update, before any scan).
 */
export function jdbcUrlProblem(url: string): string | undefined {
  try {
    fromUrl(url, "url");
    return undefined;
  } catch (err) {
    if (err instanceof ConnectorError) return err.message.replace(/^url:? /, "");
    throw err;
  }
}

/** The settings of a JDBC connection, from its payload and decrypted credential. */
export function jdbcConfig(payload: JdbcPayload, credential: Record<string, string>, defaultPort: number): JdbcConfig {
  const props = payload.connection_properties ?? {};
  const url = { ...fromUrl(props.url, PROPS_URL), ...stripUndefined(fromUrl(credential.url, CREDENTIAL_URL)) };
  const pick = (key: "host" | "port" | "database") => credential[key] || props[key] || url[key];
  const host = pick("host");
  if (!host)
    throw new ConnectorError("The connection names no host (connection_properties.host or credential host)", "invalid");
  const port = Number(pick("port") ?? defaultPort);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConnectorError("port must be 1-65535", "invalid");
  const user = credential.user || credential.username;
  if (!user) throw new ConnectorError("The credential names no user (key user or username)", "invalid");
  const tls = (props.ssl ?? props.sslmode ?? "prefer").toLowerCase();
  const tlsMode: TlsMode =
    tls === "disable" || tls === "false" ? "disable" : tls === "require" || tls === "true" ? "require" : "prefer";
  const timeout = Number(props.connect_timeout ?? 10);
  return {
    host,
    port,
    user,
    password: credential.password ?? "",
    database: pick("database") || payload.db_or_schema,
    schema: props.schema || props.currentSchema || undefined,
    tls: tlsMode,
    connectTimeoutSeconds: Number.isFinite(timeout) && timeout > 0 ? timeout : 10,
    secrets: [
      credential.password,
      user,
      credential.user,
      credential.username,
      credential.url,
      credential.host,
      credential.database,
      ...Object.values(stripUndefined(fromUrl(credential.url, CREDENTIAL_URL))),
    ].filter((v): v is string => typeof v === "string" && v !== ""),
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The host of a JDBC connection, checked against the outbound policy before any connection is
 * opened (a public address; TLS unless private targets are allowed). A refusal is an "invalid"
 * ConnectorError naming the host (unless the credential holds it).
 */
export function checkDatabaseHost(config: JdbcConfig, policy: OutboundPolicy | undefined): void {
  try {
    checkOutboundHost(config.host, policy ?? deploymentOutboundPolicy(), { plaintext: config.tls === "disable" });
  } catch (err) {
    if (err instanceof OutboundTargetError) {
      throw refusedTarget(new OutboundTargetError(safeDetail(err.message, config.secrets, 500), err.target));
    }
    throw err;
  }
}
