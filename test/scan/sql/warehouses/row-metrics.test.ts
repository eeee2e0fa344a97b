import { describe, expect, it } from "vitest";
import { loadSchema } from "../../../../src/scan/sql";
import { dialectSql } from "../../../../src/scan/sql/dialects";
import { alias, planColumns, renderFor, scalarQuery, sourceOf } from "../../../../src/scan/sql/generator";
import { toNumber } from "../../../../src/scan/sql/profile-table";
import type { SqlRunner } from "../../../../src/scan/sql/runner";
import { createWarehouseRunner } from "../../../../src/scan/sql/warehouses";
import { FAST, fixtures } from "./support";

/** A runner of each warehouse fake, able to read the schema (Snowflake with its database). */
function runners(): Promise<SqlRunner[]> {
  const f = fixtures();
  return Promise.all([
    createWarehouseRunner(
      {
        type: "SNOWFLAKE",
        payload: {
          account: f.snowflake.account,
          warehouse: "DQ_WH",
          role: "DQ_READER",
          database: f.snowflake.database,
          endpoint: f.snowflake.endpoint,
        },
      },
      { type: "SIMPLE", payload: { username: f.snowflake.user, password: f.snowflake.pat } },
      FAST,
    ),
    createWarehouseRunner(
      { type: "BIGQUERY", payload: { project: f.bigquery.project, endpoint: f.bigquery.endpoint } },
      { type: "GCP", payload: { ...f.bigquery.reader, project_id: f.bigquery.project, client_id: "1" } },
      FAST,
    ),
    createWarehouseRunner(
      {
        type: "DELTALAKE",
        payload: {
          host: f.databricks.host,
          port: "443",
          httppath: "/sql/1.0/warehouses/dqwh01",
          endpoint: f.databricks.endpoint,
        },
      },
      { type: "TOKEN", payload: { token: f.databricks.token } },
      FAST,
    ),
    createWarehouseRunner(
      { type: "REDSHIFT", payload: { endpoint_prefix: f.redshift.endpointPrefix, endpoint: f.redshift.endpoint } },
      {
        type: "SIMPLE",
        payload: {
          username: f.redshift.user,
          password: "x",
          access_key: f.redshift.accessKey,
          secret_key: f.redshift.secretKey,
        },
      },
      FAST,
    ),
  ]);
}

describe("row metrics through every warehouse API", () => {
  it("counts rows, id tuples and distinct whole rows with each dialect's SQL", async () => {
    const all = await runners();
    for (const runner of all) {
      const d = dialectSql(runner.dialect);
      const table = { schema: fixtures().schema, name: "items" };
      const plan = planColumns(await loadSchema(runner, table));
      expect(plan.map((c) => c.kind)).toEqual(["integer", "text", "number", "boolean", "timestamp"]);
      // apple, banana and fig: three distinct rows, two values of `active`.
      const source = sourceOf(d, table, { filter: { name: ["apple", "banana", "fig", "zzz"] } });
      const q = renderFor(d, scalarQuery(d, source, [], { id_attributes: ["active"] }, true, plan));
      const [row] = await runner.query<Record<string, unknown>>(q.sql, q.params);
      const value = (name: string) => toNumber(row?.[name] ?? row?.[name.toUpperCase()]);
      expect([value(alias.rowCount), value(alias.idGroups), value(alias.distinctRows)], runner.dialect).toEqual([
        3, 2, 3,
      ]);
    }
    await Promise.all(all.map((r) => r.close()));
  });
});
