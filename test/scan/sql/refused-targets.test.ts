/**
 * Where SQL pushdown may connect (issue 12, finding 2) and what its errors may say (finding 3):
 * deployed (ALLOW_PRIVATE_TARGETS unset), JDBC hosts and warehouse endpoints on loopback,
 * private or metadata addresses are refused before anything is sent, as a 422 the user can act
 * on; and no error shows the connection's user name.
 */

import { describe, expect, inject, it } from "vitest";
import { createWarehouseRunner } from "../../../src/connections";
import type { OutboundPolicy } from "../../../src/lib/outbound";
import { ConnectorError } from "../../../src/scan/connectors/types";
import { createJdbcRunner } from "../../../src/scan/sql";
import { admin, call } from "../../support/api";
import { createAsset } from "../../support/assets";
import { createConnection } from "../../support/connections";
import { asDeployed } from "../../support/outbound";
import { createProject } from "../../support/projects";
import { createTenant } from "../../support/tenants";
import { unique } from "../../support/unique";
import { DATABASES } from "./support/databases";
import { FAST, fixtures } from "./warehouses/support";

const DEPLOYED: OutboundPolicy = { allowPrivateTargets: false };
const trap = inject("httpTrap");
const cleartext = inject("cleartextPostgres");

const schemaPath = (tenant: string, assetId: number) => `/api/data/${tenant}/assets/${assetId}/schema`;
const receivedIn = async (box: string) => (await (await fetch(`${trap.url}/__received/${box}`)).json()) as unknown[];
const passwordsReceived = async () => (await (await fetch(cleartext.received)).json()) as string[];

/** The error of a promise that must reject with a ConnectorError. */
async function connectorError(promise: Promise<unknown>): Promise<ConnectorError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  return err as ConnectorError;
}

async function world() {
  const tenant = await createTenant();
  return { tenant, projectId: await createProject(tenant) };
}

describe("deployed, SQL connections to private targets are refused (422, nothing sent)", () => {
  it("a GENERIC_JDBC host on loopback: refused before the password is sent", async () => {
    const { tenant, projectId } = await world();
    const password = unique("jdbc-pw");
    const conn = await createConnection(tenant, {
      projectId,
      type: "GENERIC_JDBC",
      payload: {
        db_type: "postgresql",
        db_or_schema: "sales",
        connection_properties: { host: cleartext.host, port: String(cleartext.port), ssl: "disable" },
      },
      credential: { type: "GENERIC_MAP", payload: { user: "scanner", password } },
    });
    const asset = await createAsset(tenant, projectId, conn.id, { type: "GENERIC_JDBC" });

    const refused = await asDeployed(() => call("POST", schemaPath(tenant, asset.id), { as: admin }));
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/^invalid: the host 127\.0\.0\.1 is refused: it is a loopback address/);
    expect(await passwordsReceived()).not.toContain(password);

    // The trap is real: allowed (local development), the same connection does hand it the password.
    const allowed = await call("POST", schemaPath(tenant, asset.id), { as: admin });
    expect(allowed.status).toBe(422);
    expect(await passwordsReceived()).toContain(password);
  });

  it("a DELTALAKE endpoint on loopback: refused, the token never reaches it", async () => {
    const { tenant, projectId } = await world();
    const box = unique("dbx");
    const token = unique("dapi-token");
    const conn = await createConnection(tenant, {
      projectId,
      type: "DELTALAKE",
      payload: {
        host: "adb-1.azuredatabricks.net",
        port: "443",
        httppath: "/sql/1.0/warehouses/abc",
        endpoint: `${trap.url}/${box}`,
      },
      credential: { type: "TOKEN", payload: { token } },
    });
    const asset = await createAsset(tenant, projectId, conn.id);
    const refused = await asDeployed(() => call("POST", schemaPath(tenant, asset.id), { as: admin }));
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(/^invalid: the endpoint http:\/\/127\.0\.0\.1:\d+ is refused/);
    expect(await receivedIn(box)).toEqual([]);
    // Allowed, the same request does reach the trap.
    await call("POST", schemaPath(tenant, asset.id), { as: admin });
    expect(JSON.stringify(await receivedIn(box))).toContain(token);
  });

  it("runners refuse loopback, private and mapped hosts given a deployed policy", async () => {
    for (const host of ["127.0.0.1", "::ffff:127.0.0.1", "10.0.0.8", "169.254.169.254", "localhost"]) {
      const payload = { ...DATABASES.postgres.payload, connection_properties: { host, port: "5432" } };
      const err = await connectorError(createJdbcRunner(payload, { user: "u", password: "p" }, DEPLOYED));
      expect(err.kind, host).toBe("invalid");
      expect(err.transient).toBe(false);
      const maria = { ...DATABASES.mysql.payload, connection_properties: { host, port: "3306" } };
      expect((await connectorError(createJdbcRunner(maria, { user: "u", password: "p" }, DEPLOYED))).kind).toBe(
        "invalid",
      );
    }
    const f = fixtures().databricks;
    const runner = await createWarehouseRunner(
      { type: "DELTALAKE", payload: { host: f.host, httppath: "/sql/1.0/warehouses/abc", endpoint: f.endpoint } },
      { type: "TOKEN", payload: { token: f.token } },
      { ...FAST, policy: DEPLOYED },
    );
    expect((await connectorError(runner.query("SELECT 1"))).kind).toBe("invalid");
    await runner.close();
  });

  it("a host held in the credential is not shown in the refusal", async () => {
    const payload = { db_type: "postgresql", db_or_schema: "x", connection_properties: { port: "5432" } };
    const err = await connectorError(
      createJdbcRunner(payload, { user: "u", password: "p", host: "10.20.30.40" }, DEPLOYED),
    );
    expect(err.kind).toBe("invalid");
    expect(err.message).not.toContain("10.20.30.40");
  });
});

describe("errors never show the connection's user name", () => {
  it("a warehouse refusing the user (Snowflake): the 422 does not name it", async () => {
    const { tenant, projectId } = await world();
    const f = fixtures().snowflake;
    const conn = await createConnection(tenant, {
      projectId,
      type: "SNOWFLAKE",
      payload: {
        account: f.account,
        warehouse: "DQ_WH",
        role: "DQ_READER",
        database: f.database,
        endpoint: f.endpoint,
      },
      credential: { type: "SIMPLE", payload: { username: f.user, password: "not-the-pat" } },
    });
    const asset = await createAsset(tenant, projectId, conn.id, {
      type: "SNOWFLAKE",
      payload: { database: f.database, schema: fixtures().schema, table: "items" },
    });
    const res = await call("POST", schemaPath(tenant, asset.id), { as: admin });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^auth: Snowflake refused/);
    expect(JSON.stringify(res.body)).not.toContain(f.user);
    expect(JSON.stringify(res.body).toLowerCase()).not.toContain(f.user.toLowerCase());
    expect(JSON.stringify(res.body)).not.toContain("not-the-pat");
  });

  it("a database quoting the user (PostgreSQL: role does not exist): the 422 does not name it", async () => {
    const { tenant, projectId } = await world();
    const user = unique("dq_no_such_role").replace(/-/g, "_");
    const conn = await createConnection(tenant, {
      projectId,
      type: "GENERIC_JDBC",
      payload: DATABASES.postgres.payload,
      credential: { type: "GENERIC_MAP", payload: { user, password: "pw-s3cret" } },
    });
    const asset = await createAsset(tenant, projectId, conn.id, { type: "GENERIC_JDBC" });
    const res = await call("POST", schemaPath(tenant, asset.id), { as: admin });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^auth: PostgreSQL: /);
    expect(JSON.stringify(res.body)).not.toContain(user);
  });

  it("runner errors of MariaDB and PostgreSQL quote no user name", async () => {
    const maria = await connectorError(
      createJdbcRunner(DATABASES.mysql.payload, { user: "dq_ghost_user", password: "wrong-pw-s3cret" }),
    );
    expect(maria.kind).toBe("auth");
    expect(maria.message).not.toContain("dq_ghost_user");
    expect(maria.message).not.toContain("wrong-pw-s3cret");
    const pg = createJdbcRunner(DATABASES.postgres.payload, { user: "dq_ghost_user", password: "x" });
    const runner = await pg;
    const err = await connectorError(runner.query("SELECT 1"));
    await runner.close();
    expect(err.kind).toBe("auth");
    expect(err.message).not.toContain("dq_ghost_user");
  });
});
