/**
 * A Hive Metastore of the tests' own and the Iceberg tables it points to.
 *
 * The metastore answers `get_table_req(1: GetTableRequest req)` (and, like Hive 4.0.1+, not the
 * removed `get_table(1: string dbname, 2: string tbl_name)`) of the Hive Metastore
 * IDL (hive_metastore.thrift, ThriftHiveMetastore) in the Thrift binary protocol with the strict
 * message header, over the buffered (unframed) socket transport Hive uses by default; encoding
 * and decoding are Apache Thrift's own Node library. An unknown table is a NoSuchObjectException
 * (get_table_req_result field 2), an unknown method a TApplicationException, as Hive answers.
 *
 * The tables (test/support/iceberg-tables.ts) are written into the S3 server (s3rver behind its
 * SigV4 front) and Azurite started by object-stores.global.ts, which must run first.
 */

import { createServer as createHttpServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { AwsClient } from "aws4fetch";
import type { TestProject } from "vitest/node";
import { PYTHON_SAMPLE_SCHEMA, pythonSampleRecords, SAMPLE_SCHEMA, sampleRecords } from "./avro-sample";
import { pythonAvro, writeEvolvedTable, writeLegacyV1Table } from "./iceberg-evolved";
import { avroFile, orderRows, type WrittenTable, writeOrdersTable } from "./iceberg-tables";

const require = createRequire(import.meta.url);
// Apache Thrift's Node library ships no types.
const thrift = require("thrift") as any;

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * The test metastore on 127.0.0.1 and its tables. `calls` (HTTP GET) lists the get_table
     * calls it answered, as `database.table`. Tables: `s3Orders` and `azureOrders` (two
     * snapshots, the current one without file B), `mergeOnRead` (the same with a position-delete
     * file), `plainHive` (not Iceberg), `outsideBucket`
     * (metadata in another bucket), `evolved` and `legacyV1` (files from DuckDB and python3-avro:
     * test/support/iceberg-evolved.ts).
     */
    iceberg: {
      metastore: { host: string; port: number };
      calls: string;
      tables: Record<
        "s3Orders" | "azureOrders" | "mergeOnRead" | "plainHive" | "outsideBucket" | "evolved" | "legacyV1",
        { database: string; table: string }
      >;
      /** Avro container files of test/support/avro-sample.ts (base64), by codec: blocks of ~256 bytes. */
      avroSamples: { null: string; deflate: string; snappy: string };
      /** Container files of PYTHON_SAMPLE_SCHEMA written by Debian's python3-avro (base64), by codec. */
      pythonAvroSamples: Record<(typeof PYTHON_AVRO_CODECS)[number], string>;
      /** Rows of the current snapshots (files A and C), and of the deleted file B. */
      currentRows: number;
      deletedRows: number;
    };
  }
}

const HOST = "127.0.0.1";
const PYTHON_AVRO_CODECS = ["null", "deflate", "snappy", "zstandard"] as const;
const DATABASE = "lake";

interface MetastoreTable {
  location: string;
  parameters: Record<string, string>;
  tableType: string;
}

export default async function setup(project: TestProject) {
  const { objectStores } = project.getProvidedContext();
  const rows = { a: orderRows(1, 3), b: orderRows(100, 5, "void"), c: orderRows(10, 4, "closed") };
  const s3Table = await writeOrdersTable({
    location: `s3://${objectStores.s3.bucket}/warehouse/lake.db/orders`,
    keyPrefix: "warehouse/lake.db/orders",
    codec: "deflate",
    rows,
  });
  const azureTable = await writeOrdersTable({
    location: `abfss://${objectStores.azure.container}@${objectStores.azure.account}.dfs.core.windows.net/warehouse/lake.db/events`,
    keyPrefix: "warehouse/lake.db/events",
    codec: "null",
    rows,
  });
  const mergeOnRead = await writeOrdersTable({
    location: `s3://${objectStores.s3.bucket}/warehouse/lake.db/merge_on_read`,
    keyPrefix: "warehouse/lake.db/merge_on_read",
    codec: "deflate",
    rows,
    positionDeletes: true,
  });
  const evolved = await writeEvolvedTable(
    `s3://${objectStores.s3.bucket}/warehouse/lake.db/evolved`,
    "warehouse/lake.db/evolved",
  );
  const legacyV1 = await writeLegacyV1Table(
    `s3://${objectStores.s3.bucket}/warehouse/lake.db/legacy_v1`,
    "warehouse/lake.db/legacy_v1",
  );
  await putS3(objectStores.s3, s3Table);
  await putS3(objectStores.s3, mergeOnRead);
  await putS3(objectStores.s3, evolved);
  await putS3(objectStores.s3, legacyV1);
  await putAzure(objectStores.azure, azureTable);

  const iceberg = (t: WrittenTable): MetastoreTable => ({
    location: t.location,
    parameters: {
      EXTERNAL: "TRUE",
      table_type: "ICEBERG",
      metadata_location: t.metadataLocation,
      previous_metadata_location: t.metadataLocation.replace("00002-second", "00001-first"),
    },
    tableType: "EXTERNAL_TABLE",
  });
  const tables = new Map<string, MetastoreTable>([
    [`${DATABASE}.orders`, iceberg(s3Table)],
    [`${DATABASE}.events`, iceberg(azureTable)],
    [`${DATABASE}.merge_on_read`, iceberg(mergeOnRead)],
    [`${DATABASE}.evolved`, iceberg(evolved)],
    [`${DATABASE}.legacy_v1`, iceberg(legacyV1)],
    [
      `${DATABASE}.plain_hive`,
      {
        location: `s3://${objectStores.s3.bucket}/warehouse/lake.db/plain_hive`,
        parameters: {},
        tableType: "MANAGED_TABLE",
      },
    ],
    [
      `${DATABASE}.outside`,
      {
        ...iceberg(s3Table),
        parameters: {
          table_type: "ICEBERG",
          metadata_location: "s3://someone-elses-bucket/warehouse/outside/metadata/00001-x.metadata.json",
        },
      },
    ],
  ]);

  const calls: string[] = [];
  const metastore = thrift.createMultiplexServer(metastoreProcessor(tables, calls), {
    transport: thrift.TBufferedTransport,
    protocol: StrictBinaryProtocol,
  });
  metastore.on("error", () => {});
  await new Promise<void>((resolve) => metastore.listen(0, HOST, resolve));
  const callLog: Server = createHttpServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(calls));
  });
  await new Promise<void>((resolve) => callLog.listen(0, HOST, resolve));

  project.provide("iceberg", {
    metastore: { host: HOST, port: (metastore.address() as { port: number }).port },
    calls: `http://${HOST}:${(callLog.address() as { port: number }).port}/calls`,
    tables: {
      s3Orders: { database: DATABASE, table: "orders" },
      azureOrders: { database: DATABASE, table: "events" },
      mergeOnRead: { database: DATABASE, table: "merge_on_read" },
      plainHive: { database: DATABASE, table: "plain_hive" },
      outsideBucket: { database: DATABASE, table: "outside" },
      evolved: { database: DATABASE, table: "evolved" },
      legacyV1: { database: DATABASE, table: "legacy_v1" },
    },
    avroSamples: {
      null: Buffer.from(await avroFile(SAMPLE_SCHEMA, sampleRecords(), {}, "null", 256)).toString("base64"),
      deflate: Buffer.from(await avroFile(SAMPLE_SCHEMA, sampleRecords(), {}, "deflate", 256)).toString("base64"),
      snappy: Buffer.from(await avroFile(SAMPLE_SCHEMA, sampleRecords(), {}, "snappy", 256)).toString("base64"),
    },
    pythonAvroSamples: Object.fromEntries(
      PYTHON_AVRO_CODECS.map((codec) => [
        codec,
        Buffer.from(pythonAvro(PYTHON_SAMPLE_SCHEMA, pythonSampleRecords(), {}, codec)).toString("base64"),
      ]),
    ) as Record<(typeof PYTHON_AVRO_CODECS)[number], string>,
    currentRows: rows.a.length + rows.c.length,
    deletedRows: rows.b.length,
  });
  return async () => {
    await new Promise<void>((resolve) => metastore.close(() => resolve()));
    await new Promise<void>((resolve) => callLog.close(() => resolve()));
  };
}

/** TBinaryProtocol with strict read and write: a message without the version header is refused. */
function StrictBinaryProtocol(this: unknown, trans: unknown) {
  thrift.TBinaryProtocol.call(this, trans, true, true);
}
StrictBinaryProtocol.prototype = Object.create(thrift.TBinaryProtocol.prototype);

/**
 * The processor of ThriftHiveMetastore as Hive 4.0.1+ serves it, written against the IDL by hand:
 * `GetTableResult get_table_req(1: GetTableRequest req) throws (1: MetaException o1,
 * 2: NoSuchObjectException o2)` with GetTableRequest { 1: required string dbName, 2: required
 * string tblName, … optional fields } and GetTableResult { 1: required Table table }. The older
 * `get_table(dbname, tbl_name)` is gone (HIVE-26537): it is answered as Thrift answers any unknown
 * method, a TApplicationException UNKNOWN_METHOD.
 */
function metastoreProcessor(tables: Map<string, MetastoreTable>, calls: string[]) {
  const { Type, MessageType, TApplicationException, TApplicationExceptionType } = thrift.Thrift;
  /** A struct of string fields (nested structs one level down), other types skipped: the stream stays in step. */
  const readStruct = (input: any, depth = 0): Map<number, string | Map<number, string>> => {
    const fields = new Map<number, string | Map<number, string>>();
    input.readStructBegin();
    for (;;) {
      const { ftype, fid } = input.readFieldBegin();
      if (ftype === Type.STOP) break;
      if (ftype === Type.STRING) fields.set(fid, input.readString());
      else if (ftype === Type.STRUCT && depth === 0) fields.set(fid, readStruct(input, 1) as Map<number, string>);
      else input.skip(ftype);
      input.readFieldEnd();
    }
    input.readStructEnd();
    return fields;
  };
  return {
    process(input: any, output: any) {
      const { fname, mtype, rseqid } = input.readMessageBegin();
      const args = readStruct(input);
      input.readMessageEnd();

      const req = args.get(1);
      if (
        fname !== "get_table_req" ||
        mtype !== MessageType.CALL ||
        !(req instanceof Map) ||
        !req.has(1) ||
        !req.has(2)
      ) {
        const error = new TApplicationException(
          TApplicationExceptionType.UNKNOWN_METHOD,
          `Invalid method name: '${fname}' (or arguments)`,
        );
        output.writeMessageBegin(fname, MessageType.EXCEPTION, rseqid);
        error.write(output);
        output.writeMessageEnd();
        output.flush();
        return;
      }
      const name = `${req.get(1)}.${req.get(2)}`;
      calls.push(name);
      const table = tables.get(name);
      output.writeMessageBegin("get_table_req", MessageType.REPLY, rseqid);
      output.writeStructBegin("get_table_req_result");
      if (table) {
        output.writeFieldBegin("success", Type.STRUCT, 0);
        output.writeStructBegin("GetTableResult");
        output.writeFieldBegin("table", Type.STRUCT, 1);
        writeTable(output, String(req.get(1)), String(req.get(2)), table);
        output.writeFieldEnd();
        // Hive 4: GetTableResult { 2: optional bool isStatsCompliant }.
        output.writeFieldBegin("isStatsCompliant", Type.BOOL, 2);
        output.writeBool(true);
        output.writeFieldEnd();
        output.writeFieldStop();
        output.writeStructEnd();
      } else {
        output.writeFieldBegin("o2", Type.STRUCT, 2);
        output.writeStructBegin("NoSuchObjectException");
        output.writeFieldBegin("message", Type.STRING, 1);
        output.writeString(`hive.${name} table not found`);
        output.writeFieldEnd();
        output.writeFieldStop();
        output.writeStructEnd();
      }
      output.writeFieldEnd();
      output.writeFieldStop();
      output.writeStructEnd();
      output.writeMessageEnd();
      output.flush();
    },
  };
}

/** struct Table of hive_metastore.thrift, with the fields a Hive 3 and a Hive 4 metastore fill for an Iceberg table. */
function writeTable(out: any, database: string, name: string, table: MetastoreTable) {
  const { Type } = thrift.Thrift;
  const string = (id: number, fieldName: string, value: string) => {
    out.writeFieldBegin(fieldName, Type.STRING, id);
    out.writeString(value);
    out.writeFieldEnd();
  };
  const i32 = (id: number, fieldName: string, value: number) => {
    out.writeFieldBegin(fieldName, Type.I32, id);
    out.writeI32(value);
    out.writeFieldEnd();
  };
  const stringMap = (id: number, fieldName: string, map: Record<string, string>) => {
    out.writeFieldBegin(fieldName, Type.MAP, id);
    out.writeMapBegin(Type.STRING, Type.STRING, Object.keys(map).length);
    for (const [k, v] of Object.entries(map)) {
      out.writeString(k);
      out.writeString(v);
    }
    out.writeMapEnd();
    out.writeFieldEnd();
  };
  const fieldSchemas = (id: number, fieldName: string, cols: [string, string][]) => {
    out.writeFieldBegin(fieldName, Type.LIST, id);
    out.writeListBegin(Type.STRUCT, cols.length);
    for (const [col, type] of cols) {
      out.writeStructBegin("FieldSchema");
      string(1, "name", col);
      string(2, "type", type);
      string(3, "comment", "");
      out.writeFieldStop();
      out.writeStructEnd();
    }
    out.writeListEnd();
    out.writeFieldEnd();
  };
  out.writeStructBegin("Table");
  string(1, "tableName", name);
  string(2, "dbName", database);
  string(3, "owner", "hive");
  i32(4, "createTime", 1_717_000_000);
  i32(5, "lastAccessTime", 0);
  i32(6, "retention", 0);
  out.writeFieldBegin("sd", Type.STRUCT, 7);
  out.writeStructBegin("StorageDescriptor");
  fieldSchemas(1, "cols", [
    ["id", "bigint"],
    ["amount", "double"],
    ["status", "string"],
    ["created_at", "timestamp"],
  ]);
  string(2, "location", table.location);
  string(3, "inputFormat", "org.apache.iceberg.mr.hive.HiveIcebergInputFormat");
  string(4, "outputFormat", "org.apache.iceberg.mr.hive.HiveIcebergOutputFormat");
  out.writeFieldBegin("compressed", Type.BOOL, 5);
  out.writeBool(false);
  out.writeFieldEnd();
  i32(6, "numBuckets", -1);
  out.writeFieldBegin("serdeInfo", Type.STRUCT, 7);
  out.writeStructBegin("SerDeInfo");
  string(2, "serializationLib", "org.apache.iceberg.mr.hive.HiveIcebergSerDe");
  stringMap(3, "parameters", { "serialization.format": "1" });
  out.writeFieldStop();
  out.writeStructEnd();
  out.writeFieldEnd();
  out.writeFieldStop();
  out.writeStructEnd();
  out.writeFieldEnd();
  fieldSchemas(8, "partitionKeys", []);
  stringMap(9, "parameters", table.parameters);
  string(12, "tableType", table.tableType);
  // What a Hive 4 metastore adds (hive_metastore.thrift, struct Table fields 13-28; checked once
  // against a server thrift-compiler generated from Hive's IDL): containers and types the client
  // must step over without reading them.
  out.writeFieldBegin("privileges", Type.STRUCT, 13);
  out.writeStructBegin("PrincipalPrivilegeSet");
  out.writeFieldBegin("userPrivileges", Type.MAP, 1);
  out.writeMapBegin(Type.STRING, Type.LIST, 1);
  out.writeString("hive");
  out.writeListBegin(Type.STRUCT, 1);
  out.writeStructBegin("PrivilegeGrantInfo");
  string(1, "privilege", "ALL");
  i32(2, "createTime", 1_717_000_000);
  string(3, "grantor", "hive");
  i32(4, "grantorType", 1);
  out.writeFieldBegin("grantOption", Type.BOOL, 5);
  out.writeBool(true);
  out.writeFieldEnd();
  out.writeFieldStop();
  out.writeStructEnd();
  out.writeListEnd();
  out.writeMapEnd();
  out.writeFieldEnd();
  out.writeFieldStop();
  out.writeStructEnd();
  out.writeFieldEnd();
  string(17, "catName", "hive");
  i32(18, "ownerType", 1);
  out.writeFieldBegin("writeId", Type.I64, 19);
  out.writeI64(-1);
  out.writeFieldEnd();
  out.writeFieldBegin("accessType", Type.BYTE, 22);
  out.writeByte(8);
  out.writeFieldEnd();
  out.writeFieldBegin("requiredReadCapabilities", Type.LIST, 23);
  out.writeListBegin(Type.STRING, 1);
  out.writeString("HIVEFULLACIDREAD");
  out.writeListEnd();
  out.writeFieldEnd();
  out.writeFieldBegin("id", Type.I64, 25);
  out.writeI64(42);
  out.writeFieldEnd();
  out.writeFieldBegin("dictionary", Type.STRUCT, 27);
  out.writeStructBegin("ObjectDictionary");
  out.writeFieldBegin("values", Type.MAP, 1);
  out.writeMapBegin(Type.STRING, Type.LIST, 1);
  out.writeString("k");
  out.writeListBegin(Type.STRING, 1);
  out.writeBinary(Buffer.from([0, 255, 7]));
  out.writeListEnd();
  out.writeMapEnd();
  out.writeFieldEnd();
  out.writeFieldStop();
  out.writeStructEnd();
  out.writeFieldEnd();
  out.writeFieldStop();
  out.writeStructEnd();
}

async function putS3(
  s3: { endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string },
  table: WrittenTable,
) {
  const client = new AwsClient({ ...s3, service: "s3", retries: 0 });
  for (const [key, body] of table.objects) {
    const res = await client.fetch(`${s3.endpoint}/${s3.bucket}/${key}`, { method: "PUT", body });
    if (!res.ok) throw new Error(`PUT ${key}: ${res.status} ${await res.text()}`);
  }
}

async function putAzure(azure: { endpoint: string; container: string; writeSas: string }, table: WrittenTable) {
  for (const [key, body] of table.objects) {
    const res = await fetch(`${azure.endpoint}/${azure.container}/${key}?${azure.writeSas}`, {
      method: "PUT",
      headers: { "x-ms-version": "2021-08-06", "x-ms-blob-type": "BlockBlob" },
      body,
    });
    if (!res.ok) throw new Error(`PUT ${key}: ${res.status} ${await res.text()}`);
  }
}
