import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { GROUP_TYPES, LIGHT_SCAN_TYPES, openIcebergTable, sourceGroupOf, typeList } from "../../src/connections";
import { SOURCE_GROUP_TYPES } from "../../src/db/schema";

describe("the connection registry and the interface's enums", () => {
  it("gives each source group type of the interface its group, and no other type one", () => {
    expect([...GROUP_TYPES].sort()).toEqual([...SOURCE_GROUP_TYPES].sort());
    for (const type of SOURCE_GROUP_TYPES) expect(sourceGroupOf(type)?.payload.safeParse({}).success).toBe(false);
  });

  it("names types as a sentence does", () => {
    expect(typeList([])).toBe("");
    expect(typeList(["S3"])).toBe("S3");
    expect(typeList(["S3", "GCS"])).toBe("S3 and GCS");
    expect(typeList(LIGHT_SCAN_TYPES)).toBe("BIGQUERY, DELTALAKE and SNOWFLAKE");
  });

  it("parses an Iceberg asset's payload with its type's module before the metastore is called", async () => {
    const connection = {
      type: "HIVE_ICEBERG",
      payload: {
        thrift_uri: "thrift://metastore.example.com:9083",
        location_type: "S3",
        region: "eu-west-1",
        bucket: "b",
      },
    };
    const credential = { type: "AWS", payload: { access_key: "AKIA", secret_key: "secret" } };
    await expect(openIcebergTable(connection, credential, env, { table: "orders" })).rejects.toMatchObject({
      kind: "invalid",
      message: "a HIVE_ICEBERG asset's payload must be {database, table}",
    });
  });
});
