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

const bq = () => fixtures().bigquery;

function runner(
  overrides: { payload?: Record<string, unknown>; account?: Record<string, unknown> } = {},
  options: WarehouseRunnerOptions = FAST,
) {
  const f = bq();
  return createWarehouseRunner(
    { type: "BIGQUERY", payload: { project: f.project, endpoint: f.endpoint, ...overrides.payload } },
    {
      type: "GCP",
      payload: { ...f.reader, project_id: f.project, client_id: "1234567890", ...overrides.account },
    },
    options,
  );
}

const secrets = () => [bq().reader.private_key, bq().forged.private_key];
const itemsQuery = () =>
  `SELECT id, name, price, active, created_at FROM \`${fixtures().schema}\`.\`items\` WHERE id >= ? AND name <> ? ORDER BY id`;

describe("BigQuery jobs.query runner", () => {
  it("signs in as the service account, binds positional parameters and follows pageToken", async () => {
    const r = await runner();
    // 5 rows in pages of 3: the second page comes from jobs.getQueryResults with the pageToken.
    expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
    expect(r.dialect).toBe("bigquery");
    await r.close();
  });

  it("binds booleans and floats with their GoogleSQL types", async () => {
    const r = await runner();
    const rows = await r.query(
      `SELECT COUNT(*) AS n FROM \`${fixtures().schema}\`.items WHERE active = ? AND price > ?`,
      [true, 1.25],
    );
    expect(rows).toEqual([{ n: 3 }]);
    await r.close();
  });

  itReadsTheSchemaFromTheData(() => runner());

  it("loads the schema from the dataset's INFORMATION_SCHEMA.COLUMNS", async () => {
    const r = await runner();
    expect(await loadSchema(r, { schema: fixtures().schema, name: "items" }, CATALOG)).toEqual([
      { name: "id", type: "INT64", nullable: false },
      { name: "name", type: "STRING", nullable: true },
      { name: "price", type: "FLOAT64", nullable: true },
      { name: "active", type: "BOOL", nullable: true },
      { name: "created_at", type: "TIMESTAMP", nullable: true },
    ]);
    await expectFailure(loadSchema(r, { schema: fixtures().schema, name: "nope" }, CATALOG), "not_found", secrets());
    await r.close();
  });

  it("polls jobs.getQueryResults while jobComplete is false", async () => {
    const r = await runner({ payload: { project: "dq-slow-project" } });
    expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
    await r.close();
  });

  it("maps refusals and failures to connector error kinds without leaking secrets", async () => {
    const forged = await runner({ account: { private_key: bq().forged.private_key } });
    await expectFailure(forged.query("SELECT 1 AS one"), "auth", secrets());
    const stranger = await runner({ payload: { project: "someone-elses-project" } });
    await expectFailure(stranger.query("SELECT 1 AS one"), "auth", secrets());
    const r = await runner();
    await expectFailure(r.query(`SELECT * FROM \`${fixtures().schema}\`.missing_table`), "not_found", secrets());
    await expectFailure(
      (await runner({ payload: { project: "dq-down-project" } })).query("SELECT 1 AS one"),
      "transient",
      secrets(),
    );
    // BigQuery answers rate limits with 403 rateLimitExceeded: transient, not an auth failure.
    await expectFailure(
      (await runner({ payload: { project: "dq-busy-project" } })).query("SELECT 1 AS one"),
      "transient",
      secrets(),
    );
    const closed = await runner({ payload: { endpoint: `http://127.0.0.1:${fixtures().closedPort}` } });
    await expectFailure(closed.query("SELECT 1 AS one"), "unreachable", secrets());
  });

  itCancels("jobs.cancel", (options) => runner({ payload: { project: "dq-hang-project" } }, options), secrets);
});
