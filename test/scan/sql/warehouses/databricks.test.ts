import { describe, expect, it } from "vitest";
import { createWarehouseRunner, type WarehouseRunnerOptions } from "../../../../src/connections";
import { loadSchema } from "../../../../src/scan/sql";
import {
  CATALOG,
  EXPECTED_ROWS,
  expectFailure,
  FAST,
  fixtures,
  itCancels,
  itReadsTheSchemaFromTheData,
} from "./support";

const dbx = () => fixtures().databricks;

function runner(
  overrides: { payload?: Record<string, unknown>; token?: string } = {},
  options: WarehouseRunnerOptions = FAST,
) {
  const f = dbx();
  return createWarehouseRunner(
    {
      type: "DELTALAKE",
      payload: {
        host: f.host,
        port: "443",
        httppath: "/sql/1.0/warehouses/dqwh01",
        endpoint: f.endpoint,
        ...overrides.payload,
      },
    },
    { type: "TOKEN", payload: { token: overrides.token ?? f.token } },
    options,
  );
}

const secrets = () => [dbx().token];
const itemsQuery = () =>
  `SELECT id, name, price, active, created_at FROM \`${fixtures().schema}\`.\`items\` WHERE id >= :p0 AND name <> :p1 ORDER BY id`;

describe("Databricks Statement Execution API runner", () => {
  it("runs on the warehouse of the HTTP path, binds named parameters and follows chunk links", async () => {
    const r = await runner();
    expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
    expect(r.dialect).toBe("databricks");
    await r.close();
  });

  itReadsTheSchemaFromTheData(() => runner());

  it("loads the schema from information_schema.columns (full_data_type)", async () => {
    const r = await runner();
    expect(await loadSchema(r, { schema: fixtures().schema, name: "items" }, CATALOG)).toEqual([
      { name: "id", type: "bigint", nullable: false },
      { name: "name", type: "string", nullable: true },
      { name: "price", type: "double", nullable: true },
      { name: "active", type: "boolean", nullable: true },
      { name: "created_at", type: "timestamp", nullable: true },
    ]);
    await expectFailure(loadSchema(r, { schema: fixtures().schema, name: "nope" }, CATALOG), "not_found", secrets());
    await r.close();
  });

  it("polls a PENDING/RUNNING statement until it SUCCEEDED", async () => {
    const r = await runner({ payload: { httppath: "/sql/1.0/warehouses/dqasync" } });
    expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
    await r.close();
  });

  it("refuses an HTTP path that is not a SQL warehouse", async () => {
    await expectFailure(
      runner({ payload: { httppath: "sql/protocolv1/o/123/0123-456789-abc" } }),
      "invalid",
      secrets(),
    );
  });

  it("maps refusals and failures to connector error kinds without leaking the token", async () => {
    await expectFailure((await runner({ token: "dapi-wrong-token" })).query("SELECT 1 AS one"), "auth", [
      ...secrets(),
      "dapi-wrong-token",
    ]);
    const r = await runner();
    await expectFailure(r.query(`SELECT * FROM \`${fixtures().schema}\`.missing_table`), "not_found", secrets());
    await expectFailure(r.query("SELEC nonsense"), "invalid", secrets());
    await expectFailure(
      (await runner({ payload: { httppath: "/sql/1.0/warehouses/dqdown" } })).query("SELECT 1 AS one"),
      "transient",
      secrets(),
    );
    await expectFailure(
      (await runner({ payload: { httppath: "/sql/1.0/warehouses/dqbusy" } })).query("SELECT 1 AS one"),
      "transient",
      secrets(),
    );
    const closed = await runner({ payload: { endpoint: `http://127.0.0.1:${fixtures().closedPort}` } });
    await expectFailure(closed.query("SELECT 1 AS one"), "unreachable", secrets());
  });

  itCancels("cancel", (options) => runner({ payload: { httppath: "/sql/1.0/warehouses/dqhang" } }, options), secrets);
});
