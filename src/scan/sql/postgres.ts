/**
 * PostgreSQL over TCP from the Worker (`postgres` package, cloudflare:sockets).
 *
 * The package's own Workers socket shim emits an 'error' after `sql.end()` (its read loop sees
 * the stream it just cancelled, when nobody listens any more), which surfaces as an unhandled
 * rejection. So the runner hands the package a socket of its own (the package's `socket`
 * option): the same EventEmitter surface, with teardown that treats the cancelled read and the
 * close promise as the end it asked for. TLS is negotiated here too (SSLRequest, then startTls).
 */

import { connect } from "cloudflare:sockets";
import { Buffer } from "node:buffer";
import { EventEmitter } from "node:events";
import postgres from "postgres";
import { logNetworkFailure, networkFailure, recognisedNetworkFailure } from "../../lib/network-errors";
import type { OutboundPolicy } from "../../lib/outbound";
import { withTimeout } from "../../lib/time";
import { ConnectorError, logProviderFailure, safeDetail } from "../connectors/types";
import { checkDatabaseHost, type JdbcConfig } from "./jdbc-config";
import type { ResultColumn, SqlRunner } from "./runner";

/**
 * Built-in type OIDs (pg_type.dat) by the name information_schema.columns gives them, so a schema
 * read from a result's metadata reads like one from the catalog. Others show as "oid <n>".
 */
const PG_TYPE_NAMES: Record<number, string> = {
  16: "boolean",
  17: "bytea",
  18: '"char"',
  19: "name",
  20: "bigint",
  21: "smallint",
  23: "integer",
  25: "text",
  26: "oid",
  114: "json",
  700: "real",
  701: "double precision",
  790: "money",
  1042: "character",
  1043: "character varying",
  1082: "date",
  1083: "time without time zone",
  1114: "timestamp without time zone",
  1184: "timestamp with time zone",
  1186: "interval",
  1266: "time with time zone",
  1700: "numeric",
  2950: "uuid",
  3802: "jsonb",
};

type Socket = ReturnType<typeof connect>;

/** The socket surface the `postgres` package uses (as its Node net.Socket). */
class WorkerSocket extends EventEmitter {
  readyState: "open" | "closed" = "open";
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private ending = false;
  private closed = false;

  constructor(
    private readonly raw: Socket,
    readonly host: string,
    readonly port: number,
  ) {
    super();
    this.writer = raw.writable.getWriter();
    this.reader = raw.readable.getReader();
    raw.closed.then(
      () => this.finish(false),
      (err: unknown) => this.fail(err),
    );
    void this.pump();
  }

  write(data: Uint8Array, callback?: () => void): boolean {
    this.writer.write(data).then(
      () => callback?.(),
      (err) => this.fail(err),
    );
    return true;
  }

  /** Sends the last bytes (the Terminate message) and closes. */
  end(data?: Uint8Array): void {
    if (this.ending) return;
    this.ending = true;
    (data ? this.writer.write(data) : Promise.resolve())
      .then(() => this.raw.close())
      // Failing to close a socket we are done with changes nothing.
      .catch(() => {})
      .finally(() => this.finish(false));
  }

  destroy(): void {
    this.end();
  }

  private async pump(): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await this.reader.read();
        if (done) break;
        this.emit("data", Buffer.from(value));
      }
      this.finish(false);
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): void {
    // After end() the read loop and close promise report the cancellation we caused: not an error.
    if (!this.ending && !this.closed && this.listenerCount("error") > 0) this.emit("error", err);
    this.finish(true);
  }

  private finish(hadError: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.readyState = "closed";
    this.emit("close", hadError);
  }
}

const SSL_REQUEST = new Uint8Array([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** Opens the TCP connection and, unless the connection says `ssl: disable`, TLS (or fails). */
async function openSocket(config: JdbcConfig, policy: OutboundPolicy | undefined): Promise<WorkerSocket> {
  checkDatabaseHost(config, policy);
  const where = safeDetail(`${config.host}:${config.port}`, config.secrets);
  const unreachable = (err: unknown) => {
    logNetworkFailure({ source: "postgres", target: where }, err, config.secrets);
    return new ConnectorError(`PostgreSQL at ${where} is unreachable: ${networkFailure(err)}`, "unreachable");
  };
  let raw: Socket;
  try {
    raw = connect(
      { hostname: config.host, port: config.port },
      { secureTransport: config.tls === "disable" ? "off" : "starttls", allowHalfOpen: false },
    );
    await withTimeout(raw.opened, config.connectTimeoutSeconds * 1000, () => new Error("connect timeout"));
  } catch (err) {
    throw unreachable(err);
  }
  if (config.tls !== "disable") {
    try {
      const writer = raw.writable.getWriter();
      const reader = raw.readable.getReader();
      await writer.write(SSL_REQUEST);
      const { value } = await reader.read();
      writer.releaseLock();
      reader.releaseLock();
      if (value?.[0] === 0x53) raw = raw.startTls({ expectedServerHostname: config.host });
      else {
        // Never fall back to plain TCP: a server that declines TLS could ask for the password in clear.
        raw.close().catch(() => {});
        throw new ConnectorError(
          `PostgreSQL at ${where} declined TLS; the password is only sent over TLS (set connection_properties.ssl to disable for a server without it)`,
          "invalid",
        );
      }
    } catch (err) {
      if (err instanceof ConnectorError) throw err;
      raw.close().catch(() => {});
      throw unreachable(err);
    }
  }
  return new WorkerSocket(raw, config.host, config.port);
}

/** SQLSTATE → error kind (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
function kindOf(code: string): ConnectorError["kind"] {
  if (code === "28P01" || code === "28000" || code === "42501") return "auth";
  if (code === "3D000" || code === "42P01" || code === "3F000" || code === "42703" || code === "42883")
    return "not_found";
  // A protocol violation (e.g. a NUL in a statement's text) is the statement's, not the network's:
  // sent again, it fails again.
  if (code === "08P01") return "invalid";
  if (
    code === "40001" ||
    code === "40P01" ||
    code === "55P03" ||
    code === "57014" ||
    code.startsWith("53") ||
    code.startsWith("57P") ||
    code.startsWith("08")
  ) {
    return "transient";
  }
  // The package's own connection errors.
  if (code === "CONNECT_TIMEOUT" || code.startsWith("CONNECTION_")) return "transient";
  return "invalid";
}

/** A driver or server message, logged in full and cut short, without the password, user name or any credential. */
function errorText(err: unknown, config: Pick<JdbcConfig, "secrets">): string {
  const text = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown })?.code;
  logProviderFailure("postgres", typeof code === "string" ? code : null, undefined, text, config.secrets);
  return safeDetail(text, config.secrets);
}

/** A SQLSTATE: what the server answered (anything else is the driver's or the runtime's). */
const SQLSTATE = /^[0-9A-Z]{5}$/;

/** Server answers about the statement the scan sent, not about the user's data: said in our words. */
const STATEMENT_FAULTS: Record<string, string> = {
  "08P01": "the server could not read the statement the scan sent (a protocol violation)",
  "42601": "the server could not parse the statement the scan generated",
};

/**
 * A driver error as a ConnectorError with a readable message and no secret in it (the
 * server's messages quote the user name: it is removed like the password). A failure with no
 * answer from the server, and an answer about the statement's own form, are said in our words
 * (the original is logged); an answer about the user's objects keeps its redacted excerpt.
 */
export function postgresError(err: unknown, config: Pick<JdbcConfig, "secrets">): ConnectorError {
  if (err instanceof ConnectorError) return err;
  const code = String((err as { code?: unknown })?.code ?? "");
  const lost = code.startsWith("CONNECT") || (code === "" && recognisedNetworkFailure(err) !== undefined);
  if (lost) {
    // The socket or the connection failed: no answer from the server.
    logNetworkFailure({ source: "postgres", status: code || null }, err, config.secrets);
    return new ConnectorError(`PostgreSQL: ${networkFailure(err)}`, "transient");
  }
  if (!SQLSTATE.test(code)) {
    errorText(err, config);
    return new ConnectorError("PostgreSQL: the driver failed on the statement (details in the logs)", "invalid");
  }
  const fault = STATEMENT_FAULTS[code];
  if (fault) {
    errorText(err, config);
    return new ConnectorError(`PostgreSQL: ${fault} (details in the logs)`, kindOf(code));
  }
  return new ConnectorError(`PostgreSQL: ${errorText(err, config)}`, kindOf(code));
}

/**
 * A runner on one PostgreSQL connection (opened at the first query). `policy` decides which
 * hosts may be reached (default: the deployment's).
 */
export function createPostgresRunner(config: JdbcConfig, policy?: OutboundPolicy): SqlRunner {
  // Checked now as well as at connect: a refused host fails before the runner is handed out.
  checkDatabaseHost(config, policy);
  const options = {
    host: config.host,
    port: config.port,
    user: config.user,
    password: config.password,
    database: config.database,
    max: 1,
    ssl: false, // negotiated in openSocket
    fetch_types: false,
    idle_timeout: 0,
    connect_timeout: config.connectTimeoutSeconds,
    onnotice: () => {},
    connection: { application_name: "dq-monitor", ...(config.schema ? { search_path: config.schema } : {}) },
    socket: () => openSocket(config, policy),
  };
  // `socket` is a documented option the package's types leave out.
  const sql = postgres(options as unknown as postgres.Options<Record<string, postgres.PostgresType>>);
  let closing: Promise<void> | undefined;
  return {
    dialect: "postgres",
    async query<T>(text: string, params: unknown[] = []): Promise<T[]> {
      try {
        const rows = await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
        return [...rows] as T[];
      } catch (err) {
        throw postgresError(err, config);
      }
    },
    async columns(text: string, params: unknown[] = []): Promise<ResultColumn[]> {
      try {
        const rows = await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
        return (rows.columns ?? []).map((c) => ({ name: c.name, type: PG_TYPE_NAMES[c.type] ?? `oid ${c.type}` }));
      } catch (err) {
        throw postgresError(err, config);
      }
    },
    close() {
      closing ??= sql.end({ timeout: 5 }).catch(() => {});
      return closing;
    },
  };
}
