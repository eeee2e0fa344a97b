import { describe, expect, inject, it } from "vitest";
import { ConnectorError } from "../../../src/scan/connectors/types";
import { createJdbcRunner, type SqlRunner } from "../../../src/scan/sql";
import { DATABASES, type TestDatabase } from "./support/databases";

const SECRET = "s3cret-Pa55word!";

/** The error of opening a runner and running one query with it (closing it either way). */
async function failure(run: () => Promise<SqlRunner>): Promise<ConnectorError> {
  let runner: SqlRunner | undefined;
  try {
    runner = await run();
    await runner.query("SELECT 1");
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectorError);
    return err as ConnectorError;
  } finally {
    await runner?.close();
  }
  throw new Error("expected a failure");
}

const withProps = (db: TestDatabase, props: Record<string, string>) => ({
  ...DATABASES[db].payload,
  connection_properties: { ...DATABASES[db].payload.connection_properties, ...props },
});

describe.each(["postgres", "mysql"] as const)("connection errors on %s", (db) => {
  it("maps a refused connection to unreachable", async () => {
    const err = await failure(() => createJdbcRunner(withProps(db, { port: "1" }), { user: "root", password: SECRET }));
    expect(err.kind).toBe("unreachable");
    expect(err.transient).toBe(true);
    expect(err.message).not.toContain(SECRET);
  });

  it("maps an unknown database to not_found", async () => {
    const payload = { ...DATABASES[db].payload, db_or_schema: "dq_no_such_database" };
    const err = await failure(() => createJdbcRunner(payload, { ...DATABASES[db].credential }));
    expect(err.kind).toBe("not_found");
  });

  it("maps an unknown table to not_found and a syntax error to invalid", async () => {
    const runner = await createJdbcRunner(DATABASES[db].payload, { ...DATABASES[db].credential });
    try {
      await expect(runner.query("SELECT * FROM dq_no_such_table")).rejects.toMatchObject({ kind: "not_found" });
      await expect(runner.query("SELEC 1")).rejects.toMatchObject({ kind: "invalid" });
      // The connection is still usable after a failed statement.
      expect(await runner.query<{ x: number }>("SELECT 1 AS x")).toEqual([{ x: 1 }]);
    } finally {
      await runner.close();
    }
  });

  it("closes twice without error", async () => {
    const runner = await createJdbcRunner(DATABASES[db].payload, { ...DATABASES[db].credential });
    await runner.query("SELECT 1");
    await runner.close();
    await runner.close();
  });
});

describe("authentication errors", () => {
  it("maps a wrong password to auth, without the password in the message (MariaDB)", async () => {
    const err = await failure(() => createJdbcRunner(DATABASES.mysql.payload, { user: "root", password: SECRET }));
    expect(err.kind).toBe("auth");
    expect(err.message).not.toContain(SECRET);
    // "Access denied for user 'root'@…": the user name is part of the credential too.
    expect(err.message).not.toMatch(/\broot\b/);
  });

  it("maps an unknown role to auth (PostgreSQL; the local server trusts any password)", async () => {
    const err = await failure(() =>
      createJdbcRunner(DATABASES.postgres.payload, { user: "dq_no_such_role", password: SECRET }),
    );
    expect(err.kind).toBe("auth");
    expect(err.message).not.toContain(SECRET);
    expect(err.message).not.toContain("dq_no_such_role");
  });
});

describe("TLS", () => {
  it.each(["postgres", "mysql"] as const)(
    "refuses a %s server that declines TLS unless the connection says ssl: disable",
    async (db) => {
      for (const ssl of [undefined, "prefer", "require"]) {
        const { ssl: _, ...props } = DATABASES[db].payload.connection_properties;
        const payload = { ...DATABASES[db].payload, connection_properties: ssl ? { ...props, ssl } : props };
        const err = await failure(() => createJdbcRunner(payload, { ...DATABASES[db].credential, password: SECRET }));
        expect(err.kind).toBe("invalid");
        expect(err.message).toMatch(/declined TLS/);
        expect(err.message).not.toContain(SECRET);
      }
    },
  );

  it("never sends the password to a server that declines TLS and asks for it in clear text", async () => {
    const trap = inject("cleartextPostgres");
    const payload = {
      db_type: "postgresql",
      db_or_schema: "sales",
      connection_properties: { host: trap.host, port: String(trap.port) },
    };
    // A password of this run: other files' tests talk to the same trap at the same time.
    const password = `${SECRET}-${crypto.randomUUID()}`;
    const err = await failure(() => createJdbcRunner(payload, { user: "scanner", password }));
    expect(err.message).toMatch(/declined TLS/);
    expect(await (await fetch(trap.received)).json()).not.toContain(password);

    // The same server with TLS switched off does receive it: the trap works.
    const plain = { ...payload, connection_properties: { ...payload.connection_properties, ssl: "disable" } };
    await failure(() => createJdbcRunner(plain, { user: "scanner", password }));
    expect(await (await fetch(trap.received)).json()).toContain(password);
  });
});

describe("createJdbcRunner", () => {
  it("refuses SQL Server and Oracle in the Worker, saying that full scans on Spark read them", async () => {
    for (const db_type of ["oracle", "sqlserver"] as const) {
      await expect(
        createJdbcRunner({ db_type, db_or_schema: "x", connection_properties: { host: "h" } }, { user: "u" }),
      ).rejects.toMatchObject({ kind: "unsupported", message: expect.stringMatching(/only by full scans on Spark/) });
    }
  });

  it("needs a host and a user", async () => {
    await expect(createJdbcRunner({ db_type: "postgresql", db_or_schema: "x" }, { user: "u" })).rejects.toMatchObject({
      kind: "invalid",
    });
    await expect(
      createJdbcRunner({ db_type: "postgresql", db_or_schema: "x", connection_properties: { host: "h" } }, {}),
    ).rejects.toMatchObject({ kind: "invalid" });
  });

  it("reads host, port and database from a JDBC url in the credential", async () => {
    const runner = await createJdbcRunner(
      { db_type: "postgresql", db_or_schema: "ignored", connection_properties: { ssl: "disable" } },
      { url: "jdbc:postgresql://127.0.0.1:5432/test", user: "postgres" },
    );
    try {
      expect(await runner.query<{ db: string }>("SELECT current_database() AS db")).toEqual([{ db: "test" }]);
    } finally {
      await runner.close();
    }
  });
});
