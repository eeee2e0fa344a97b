import { describe, expect, it } from "vitest";
import { createWarehouseRunner } from "../../../../src/connections";
import { CreateConnectionBody } from "../../../../src/routes/connections/connections.schemas";
import { expectFailure, fakeWarehouseRunners, fixtures } from "./support";

describe("createWarehouseRunner", () => {
  it("gives each warehouse connection type the runner of its dialect", async () => {
    const runners = await fakeWarehouseRunners();
    expect(runners.map((r) => r.dialect)).toEqual(["snowflake", "bigquery", "databricks", "redshift"]);
    for (const r of runners) expect(await r.query("SELECT 41 + 1 AS answer")).toEqual([{ answer: 42 }]);
    await Promise.all(runners.map((r) => r.close()));
  });

  it("refuses a credential of the wrong type and connection types that are not warehouses", async () => {
    await expectFailure(
      createWarehouseRunner(
        { type: "DELTALAKE", payload: { host: "h", port: "443", httppath: "/sql/1.0/warehouses/x" } },
        { type: "SIMPLE", payload: {} },
      ),
      "invalid",
      [],
    );
    await expectFailure(
      createWarehouseRunner({ type: "S3", payload: {} }, { type: "AWS", payload: {} }),
      "unsupported",
      [],
    );
  });

  it("accepts the optional payload and credential fields the warehouse APIs need", () => {
    const endpoint = "https://sql.example.com";
    const bodies = [
      {
        name: "sf",
        type: "SNOWFLAKE",
        payload: { account: "myorg-acct", warehouse: "WH", role: "R", database: "DB", schema: "PUBLIC", endpoint },
        credential: {
          type: "SIMPLE",
          payload: { username: "u", password: "p", private_key: fixtures().snowflake.privateKey },
        },
      },
      {
        name: "bq",
        type: "BIGQUERY",
        payload: { project: "p", location: "EU", endpoint },
        credential: { type: "GCP", payload: { ...fixtures().bigquery.reader, project_id: "p", client_id: "1" } },
      },
      {
        name: "dbx",
        type: "DELTALAKE",
        payload: { host: "h", port: "443", httppath: "/sql/1.0/warehouses/x", endpoint },
        credential: { type: "TOKEN", payload: { token: "t" } },
      },
      {
        name: "rs",
        type: "REDSHIFT",
        payload: { endpoint_prefix: "c.id.eu-west-1", database: "dev", endpoint },
        credential: {
          type: "SIMPLE",
          payload: { username: "u", password: "p", access_key: "AKIA", secret_key: "s", region: "eu-west-1" },
        },
      },
    ];
    for (const body of bodies) expect(CreateConnectionBody.safeParse(body).error).toBeUndefined();
    const withQuery = { ...bodies[2], payload: { ...bodies[2]!.payload, endpoint: "https://h/?token=x" } };
    expect(CreateConnectionBody.safeParse(withQuery).success).toBe(false);
  });
});
