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

const sf = () => fixtures().snowflake;

function runner(
  overrides: { payload?: Record<string, unknown>; credential?: Record<string, unknown> } = {},
  options: WarehouseRunnerOptions = FAST,
) {
  const f = sf();
  return createWarehouseRunner(
    {
      type: "SNOWFLAKE",
      payload: {
        account: f.account,
        warehouse: "DQ_WH",
        role: "DQ_READER",
        database: f.database,
        endpoint: f.endpoint,
        ...overrides.payload,
      },
    },
    {
      type: "SIMPLE",
      payload: { username: f.user, password: "not-a-token", private_key: f.privateKey, ...overrides.credential },
    },
    options,
  );
}

const secrets = () => [sf().privateKey, sf().pat, sf().strangerKey];
const itemsQuery = () =>
  `SELECT id, name, price, active, created_at FROM "${fixtures().schema}".items WHERE id >= ? AND name <> ? ORDER BY id`;

describe("Snowflake SQL API runner", () => {
  it("runs a statement with key-pair JWT auth, binds ? parameters and reads every partition", async () => {
    const r = await runner();
    // 5 rows: partition 0 inline, partition 1 fetched with ?partition=1 (the fake's partitions hold 3 rows).
    expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
    expect(r.dialect).toBe("snowflake");
    await r.close();
  });

  it("authenticates with a programmatic access token in the password field when there is no private key", async () => {
    const r = await runner({ credential: { password: sf().pat, private_key: undefined } });
    expect(await r.query(`SELECT COUNT(*) AS n FROM "${fixtures().schema}".items WHERE active = ?`, [true])).toEqual([
      { n: 4 },
    ]);
    await r.close();
  });

  itReadsTheSchemaFromTheData(() => runner());

  it("loads the schema through INFORMATION_SCHEMA with the connection's database", async () => {
    const r = await runner();
    const fields = await loadSchema(r, { schema: fixtures().schema, name: "items" }, CATALOG);
    expect(fields).toEqual([
      { name: "id", type: "bigint", nullable: false },
      { name: "name", type: "text", nullable: true },
      { name: "price", type: "double precision", nullable: true },
      { name: "active", type: "boolean", nullable: true },
      { name: "created_at", type: "timestamp without time zone", nullable: true },
    ]);
    await expectFailure(loadSchema(r, { schema: fixtures().schema, name: "nope" }, CATALOG), "not_found", secrets());
    await r.close();
  });

  it("without a database, an unqualified INFORMATION_SCHEMA query fails as Snowflake says", async () => {
    const r = await runner({ payload: { database: undefined } });
    const e = await expectFailure(
      loadSchema(r, { schema: fixtures().schema, name: "items" }, CATALOG),
      "invalid",
      secrets(),
    );
    expect(e.message).toMatch(/current database/);
    await r.close();
  });

  it("polls an asynchronous (202) statement until it finishes", async () => {
    const r = await runner({ payload: { warehouse: "ASYNC_WH" } });
    expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
    await r.close();
  });

  it("maps refusals and failures to connector error kinds without leaking secrets", async () => {
    const schema = fixtures().schema;
    const forged = await runner({ credential: { private_key: sf().strangerKey } });
    await expectFailure(forged.query("SELECT 1 AS one"), "auth", secrets());
    const badToken = await runner({ credential: { password: "pat_wrong", private_key: undefined } });
    await expectFailure(badToken.query("SELECT 1 AS one"), "auth", [...secrets(), "pat_wrong"]);
    const r = await runner();
    await expectFailure(r.query(`SELECT * FROM "${schema}".missing_table`), "not_found", secrets());
    await expectFailure(
      (await runner({ payload: { warehouse: "DOWN_WH" } })).query("SELECT 1 AS one"),
      "transient",
      secrets(),
    );
    await expectFailure(
      (await runner({ payload: { warehouse: "BUSY_WH" } })).query("SELECT 1 AS one"),
      "transient",
      secrets(),
    );
    const closed = await runner({ payload: { endpoint: `http://127.0.0.1:${fixtures().closedPort}` } });
    await expectFailure(closed.query("SELECT 1 AS one"), "unreachable", secrets());
  });

  itCancels("cancel", (options) => runner({ payload: { warehouse: "HANG_WH" } }, options), secrets);
});
