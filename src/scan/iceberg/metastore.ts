/**
 * A Hive Metastore client for one call: `get_table_req(GetTableRequest {dbName, tblName})` of the
 * Hive Metastore IDL (hive_metastore.thrift), in the Thrift binary protocol over a plain TCP socket
 * (cloudflare:sockets), as Iceberg's HiveCatalog and Spark reach a metastore on thrift://host:9083.
 * No SASL/Kerberos: a metastore that requires it closes the connection, which is reported.
 *
 * get_table_req is answered by Hive 3.x and 4.x alike; the older `get_table(dbname, tbl_name)` was
 * removed in Hive 4.0.1 (HIVE-26537). Only the two required fields of GetTableRequest are sent, so
 * the catalog is the metastore's default ("hive").
 */

import { connect } from "cloudflare:sockets";
import { logNetworkFailure, networkFailure } from "../../lib/network-errors";
import { checkOutboundHost, type OutboundPolicy, OutboundTargetError } from "../../lib/outbound";
import { withTimeout } from "../../lib/time";
import { ConnectorError, refusedTarget, safeDetail } from "../connectors/types";
import {
  decodeMessage,
  encodeCall,
  IncompleteMessage,
  stringField,
  stringMapField,
  structField,
  type ThriftMessage,
  ThriftProtocolError,
  TMessageType,
} from "./thrift";

/** The parts of a metastore Table that locate an Iceberg table. */
export interface MetastoreTable {
  /** sd.location: the table's root (s3://bucket/warehouse/db.db/table). */
  location: string | undefined;
  /** Table.parameters: for Iceberg, table_type=ICEBERG and metadata_location. */
  parameters: Record<string, string>;
  /** Table.tableType (EXTERNAL_TABLE, MANAGED_TABLE, VIRTUAL_VIEW…). */
  tableType: string | undefined;
}

/** Where the metastore listens, from the connection's thrift://host:port. */
export interface MetastoreAddress {
  host: string;
  port: number;
}

/** A reply larger than this is refused: a Table is a few KB (its columns and parameters). */
const MAX_REPLY_BYTES = 8 * 1024 * 1024;
/** The one method called: GetTableResult get_table_req(1: GetTableRequest req). */
const METHOD = "get_table_req";
/** The whole call (connect, send, answer) must finish within this. */
const CALL_TIMEOUT_MS = 30_000;

/** The host and port of a thrift://host:port URI (the connection payload's form). */
export function metastoreAddress(thriftUri: string): MetastoreAddress {
  const m = /^thrift:\/\/(\[[0-9A-Fa-f:.]+\]|[^:/]+):(\d{1,5})$/.exec(thriftUri);
  if (!m) throw new ConnectorError(`the metastore URI ${thriftUri} is not thrift://<host>:<port>`, "invalid");
  return { host: m[1]!.replace(/^\[|\]$/g, ""), port: Number(m[2]) };
}

/**
 * Table `database.table` from the metastore. An unknown table or database is a "not_found"
 * ConnectorError with the metastore's message; a host the outbound policy refuses (a private
 * address, deployed) is refused before any connection is opened.
 */
export async function getMetastoreTable(
  address: MetastoreAddress,
  database: string,
  table: string,
  policy: OutboundPolicy,
): Promise<MetastoreTable> {
  const where = `the Hive metastore at ${address.host}:${address.port}`;
  try {
    // Nothing secret travels to the metastore (plain Thrift, no SASL): the host check is the guard.
    checkOutboundHost(address.host, policy, { credentials: false });
  } catch (err) {
    if (err instanceof OutboundTargetError) throw refusedTarget(err);
    throw err;
  }
  const reply = await withTimeout(call(address, database, table, where), CALL_TIMEOUT_MS, () => {
    return new ConnectorError(`${where} did not answer within ${CALL_TIMEOUT_MS / 1000} s`, "unreachable");
  });
  return tableOf(reply, where, `${database}.${table}`);
}

async function call(address: MetastoreAddress, database: string, table: string, where: string) {
  let socket: ReturnType<typeof connect>;
  try {
    socket = connect({ hostname: address.host, port: address.port }, { secureTransport: "off", allowHalfOpen: false });
    // Its end is handled below; a rejection here must not surface as an unhandled one.
    socket.closed.catch(() => {});
    await socket.opened;
  } catch (err) {
    throw unreachable(where, err);
  }
  const writer = socket.writable.getWriter();
  const reader = socket.readable.getReader();
  try {
    await writer.write(
      encodeCall(METHOD, 1, [
        {
          id: 1,
          fields: [
            { id: 1, value: database },
            { id: 2, value: table },
          ],
        },
      ]),
    );
    let received: Uint8Array = new Uint8Array(0);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        throw new ConnectorError(
          `${where} closed the connection without an answer (does it require SASL or TLS?)`,
          "unreachable",
        );
      }
      received = concat(received, value);
      if (received.byteLength > MAX_REPLY_BYTES) {
        throw new ConnectorError(`${where} answered more than ${MAX_REPLY_BYTES} bytes for one table`, "invalid");
      }
      try {
        return decodeMessage(received);
      } catch (err) {
        if (err instanceof IncompleteMessage) continue;
        if (err instanceof ThriftProtocolError) {
          throw new ConnectorError(`${where} did not answer in the Thrift binary protocol: ${err.message}`, "invalid");
        }
        throw err;
      }
    }
  } catch (err) {
    if (err instanceof ConnectorError) throw err;
    throw unreachable(where, err);
  } finally {
    reader.cancel().catch(() => {});
    writer.close().catch(() => {});
    socket.close().catch(() => {});
  }
}

/** The Table of a get_table_req reply, or the error its exception (or a TApplicationException) says. */
function tableOf(reply: ThriftMessage, where: string, name: string): MetastoreTable {
  if (reply.type === TMessageType.EXCEPTION) {
    // TApplicationException { 1: string message, 2: i32 type }
    const message = stringField(reply.body, 1) ?? "unknown error";
    throw new ConnectorError(`${where} refused ${METHOD}: ${safeDetail(message)}`, "invalid");
  }
  if (reply.type !== TMessageType.REPLY || reply.name !== METHOD || reply.seqid !== 1) {
    throw new ConnectorError(`${where} answered another call than ${METHOD}`, "invalid");
  }
  // get_table_req_result { 0: GetTableResult success, 1: MetaException o1, 2: NoSuchObjectException o2 }
  const noSuchObject = structField(reply.body, 2);
  if (noSuchObject) {
    const message = stringField(noSuchObject, 1);
    throw new ConnectorError(
      `the table ${name} does not exist in ${where}${message ? `: ${safeDetail(message)}` : ""}`,
      "not_found",
    );
  }
  const metaException = structField(reply.body, 1);
  if (metaException) {
    throw new ConnectorError(
      `${where} failed: ${safeDetail(stringField(metaException, 1) ?? "MetaException")}`,
      "invalid",
    );
  }
  // GetTableResult { 1: required Table table }
  const table = structField(structField(reply.body, 0), 1);
  if (!table) throw new ConnectorError(`${where} answered ${METHOD} without a table`, "invalid");
  // Table { 7: StorageDescriptor sd, 9: map<string,string> parameters, 12: string tableType }
  // StorageDescriptor { 2: string location }
  return {
    location: stringField(structField(table, 7), 2),
    parameters: stringMapField(table, 9),
    tableType: stringField(table, 12),
  };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

/** A socket that failed to open, or failed mid-call: said in our words, the runtime's text logged. */
function unreachable(where: string, err: unknown): ConnectorError {
  logNetworkFailure({ source: "hive_metastore", target: where }, err);
  return new ConnectorError(`${where} is unreachable: ${networkFailure(err)}`, "unreachable");
}
