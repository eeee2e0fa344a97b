/**
 * What the driver is told to read (its --source argument) for each source type, as
 * spark/dq_profile.py resolves it: the table the user named, never another one.
 */

import { describe, expect, it } from "vitest";
import type { AssetHead, ConnectionRow } from "../../src/db/schema";
import { driverSource } from "../../src/pipeline/spark-dispatch";

const asset = (type: string, payload: Record<string, unknown>) => ({ type, payload }) as unknown as AssetHead;
const connection = (payload: Record<string, unknown>) => ({ payload }) as unknown as ConnectionRow;

describe("driverSource", () => {
  it("names a HIVE_ICEBERG table as <database>.<table>, which the driver reads as dq.<database>.<table>", () => {
    const source = driverSource(
      asset("HIVE_ICEBERG", { database: "lake", table: "orders" }),
      connection({ thrift_uri: "thrift://metastore:9083", location_type: "S3", bucket: "b", region: "eu-west-1" }),
      {},
      "s3",
    );
    expect(source).toEqual({ kind: "iceberg", metastore_uri: "thrift://metastore:9083", table: "lake.orders" });
  });

  it("names warehouse and JDBC tables in full", () => {
    expect(
      driverSource(
        asset("DELTALAKE", { catalog: "main", schema: "sales", table: "orders" }),
        connection({}),
        {},
        "s3a",
      ),
    ).toEqual({ kind: "table", format: "delta", table: "main.sales.orders" });
    expect(
      driverSource(asset("BIGQUERY", { dataset: "sales", table: "orders" }), connection({ project: "p-1" }), {}, "s3a"),
    ).toEqual({ kind: "table", format: "bigquery", table: "p-1.sales.orders" });
    expect(
      driverSource(asset("GENERIC_JDBC", { schema: "public", table: "orders" }), connection({}), {}, "s3a"),
    ).toEqual({ kind: "jdbc", table: "public.orders" });
    // The driver picks the JDBC driver class by db_type (SQL Server and Oracle are read only on Spark).
    expect(
      driverSource(
        asset("GENERIC_JDBC", { schema: "SALES", table: "ORDERS" }),
        connection({ db_type: "oracle" }),
        {},
        "s3a",
      ),
    ).toEqual({ kind: "jdbc", table: "SALES.ORDERS", db_type: "oracle" });
  });

  it("refuses a stored connection that lacks what the driver reads, and types whose full scans do not run on Spark", () => {
    const files = asset("S3", { path: "orders.csv", format: "csv" });
    expect(() => driverSource(files, connection({}), {}, "s3")).toThrow("the S3 connection's payload is not valid");
    expect(() => driverSource(asset("UPLOAD", {}), connection({}), {}, "s3a")).toThrow(
      "an UPLOAD asset's batches are scanned in the Worker as they arrive",
    );
    expect(() => driverSource(asset("SNOWFLAKE", { table: "t" }), connection({}), {}, "s3a")).toThrow(
      "full scans of SNOWFLAKE assets are not available on Spark",
    );
  });
});
