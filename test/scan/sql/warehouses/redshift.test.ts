import { describe, expect, it } from "vitest";
import { createWarehouseRunner, type WarehouseRunnerOptions } from "../../../../src/connections";
import { loadSchema } from "../../../../src/scan/sql";
import { redshiftTarget } from "../../../../src/scan/sql/redshift";
import {
  CATALOG,
  EXPECTED_ROWS,
  expectFailure,
  FAST,
  fixtures,
  itCancels,
  itReadsTheSchemaFromTheData,
} from "./support";

const rs = () => fixtures().redshift;

function runner(
  overrides: { payload?: Record<string, unknown>; credential?: Record<string, unknown> } = {},
  options: WarehouseRunnerOptions = FAST,
) {
  const f = rs();
  return createWarehouseRunner(
    { type: "REDSHIFT", payload: { endpoint_prefix: f.endpointPrefix, endpoint: f.endpoint, ...overrides.payload } },
    {
      type: "SIMPLE",
      payload: {
        username: f.user,
        password: "unused-db-password",
        access_key: f.accessKey,
        secret_key: f.secretKey,
        ...overrides.credential,
      },
    },
    options,
  );
}

const secrets = () => [rs().secretKey, "unused-db-password"];
const itemsQuery = () =>
  `SELECT id, name, price, active, created_at FROM "${fixtures().schema}".items WHERE id >= :p0 AND name <> :p1 ORDER BY id`;
const prefix = (cluster: string) => rs().endpointPrefix.replace(/^dqcluster/, cluster);

describe("Redshift Data API runner", () => {
  it("reads cluster, region and database from the endpoint", () => {
    expect(redshiftTarget("dqcluster.abc123xyz789.eu-west-1.redshift.amazonaws.com:5439/dev")).toEqual({
      clusterIdentifier: "dqcluster",
      region: "eu-west-1",
      database: "dev",
    });
    expect(redshiftTarget("wg.123456789012.us-east-1.redshift-serverless.amazonaws.com")).toEqual({
      workgroupName: "wg",
      region: "us-east-1",
      database: undefined,
    });
  });

  it("signs with SigV4, binds named parameters, polls DescribeStatement and pages GetStatementResult", async () => {
    const r = await runner();
    expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
    expect(r.dialect).toBe("redshift");
    await r.close();
  });

  itReadsTheSchemaFromTheData(() => runner());

  it("loads the schema from information_schema.columns", async () => {
    const r = await runner();
    expect(await loadSchema(r, { schema: fixtures().schema, name: "items" }, CATALOG)).toEqual([
      { name: "id", type: "bigint", nullable: false },
      { name: "name", type: "text", nullable: true },
      { name: "price", type: "double precision", nullable: true },
      { name: "active", type: "boolean", nullable: true },
      { name: "created_at", type: "timestamp without time zone", nullable: true },
    ]);
    await expectFailure(loadSchema(r, { schema: fixtures().schema, name: "nope" }, CATALOG), "not_found", secrets());
    await r.close();
  });

  it("waits through several STARTED answers", async () => {
    const r = await runner({ payload: { endpoint_prefix: prefix("dqasync") } });
    expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
    await r.close();
  });

  it("maps refusals and failures to connector error kinds without leaking secrets", async () => {
    const wrongSecret = await runner({ credential: { secret_key: "c2VjcmV0LXRoYXQtaXMtd3Jvbmc=" } });
    await expectFailure(wrongSecret.query("SELECT 1 AS one"), "auth", [...secrets(), "c2VjcmV0LXRoYXQtaXMtd3Jvbmc="]);
    await expectFailure(runner({ credential: { access_key: undefined, secret_key: undefined } }), "auth", secrets());
    const r = await runner();
    await expectFailure(r.query(`SELECT * FROM "${fixtures().schema}".missing_table`), "not_found", secrets());
    await expectFailure(r.query("SELECT :p0 AS v", [""]), "invalid", secrets());
    await expectFailure(
      (await runner({ payload: { endpoint_prefix: prefix("dqdown") } })).query("SELECT 1 AS one"),
      "transient",
      secrets(),
    );
    await expectFailure(
      (await runner({ payload: { endpoint_prefix: prefix("dqbusy") } })).query("SELECT 1 AS one"),
      "transient",
      secrets(),
    );
    const closed = await runner({ payload: { endpoint: `http://127.0.0.1:${fixtures().closedPort}` } });
    await expectFailure(closed.query("SELECT 1 AS one"), "unreachable", secrets());
  });

  itCancels(
    "CancelStatement",
    (options) => runner({ payload: { endpoint_prefix: prefix("dqhang") } }, options),
    secrets,
  );
});
