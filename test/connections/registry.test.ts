import { describe, expect, it } from "vitest";
import { GROUP_TYPES, LIGHT_SCAN_TYPES, sourceGroupOf, typeList } from "../../src/connections";
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
});
