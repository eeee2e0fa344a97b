import { describe, expect, it, vi } from "vitest";
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
  overrides: { payload?: Record<string, unknown>; token?: string; credential?: Record<string, string> } = {},
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
    { type: "TOKEN", payload: overrides.credential ?? { token: overrides.token ?? f.token } },
    options,
  );
}

const secrets = () => [dbx().token];

/** The service principal's credential, as a DELTALAKE connection holds it. */
const servicePrincipal = (secret?: string) => ({
  client_id: dbx().oauth.clientId,
  client_secret: secret ?? dbx().oauth.clientSecret,
});

/** How many token requests the workspace's /oidc/v1/token has had. */
async function tokenRequests(): Promise<number> {
  const res = await fetch(`${dbx().endpoint}/_test/oauth`);
  return ((await res.json()) as { requests: number }).requests;
}
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

  describe("with a service principal (OAuth M2M)", () => {
    const query = async () => {
      const r = await runner({ credential: servicePrincipal() });
      expect(await r.query(itemsQuery(), [2, "zzz"])).toEqual(EXPECTED_ROWS);
      await r.close();
    };

    it("gets a workspace token from /oidc/v1/token once and uses it for every statement until shortly before it expires", async () => {
      const before = await tokenRequests();
      await query();
      await query();
      expect(await tokenRequests()).toBe(before + 1);
      vi.useFakeTimers({ toFake: ["Date"] });
      try {
        // The token lasts 3600 s: still used 54 minutes on, renewed after 55 (5 minutes' margin).
        vi.setSystemTime(Date.now() + 54 * 60_000);
        await query();
        expect(await tokenRequests()).toBe(before + 1);
        vi.setSystemTime(Date.now() + 2 * 60_000);
        await query();
        expect(await tokenRequests()).toBe(before + 2);
      } finally {
        vi.useRealTimers();
      }
    });

    it("asks for a new token once when the workspace refuses a revoked one", async () => {
      await query();
      expect((await fetch(`${dbx().endpoint}/_test/oauth/revoke`, { method: "POST" })).status).toBe(200);
      const before = await tokenRequests();
      await query();
      expect(await tokenRequests()).toBe(before + 1);
    });

    it("a wrong secret is an auth error that shows neither secret", async () => {
      const err = await expectFailure(
        (await runner({ credential: servicePrincipal("dose-wrong-secret-0123456789") })).query("SELECT 1 AS one"),
        "auth",
        [dbx().oauth.clientSecret, "dose-wrong-secret-0123456789"],
      );
      expect(err.message).toContain("Databricks refused to sign in the service principal");
      expect(err.message).toContain("invalid_client");
    });
  });
});
