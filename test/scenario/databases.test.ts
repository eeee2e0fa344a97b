import { afterAll, describe, expect, it } from "vitest";
import type { SqlRunner } from "../../src/scan/sql";
import { DATABASES, runnerFor, type TestDatabase, uniqueTable } from "../scan/sql/support/databases";
import { admin, call } from "../support/api";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";
import { type Order, orders, type Problem } from "./data";
import { alertKeys, EXPECTED, finishedJob } from "./support";

const DDL: Record<TestDatabase, (t: string) => string> = {
  postgres: (t) =>
    `CREATE TABLE ${t} (id BIGINT, email VARCHAR(200), amount DOUBLE PRECISION, country VARCHAR(2), updated_at TIMESTAMPTZ(3))`,
  mysql: (t) =>
    `CREATE TABLE ${t} (id BIGINT, email VARCHAR(200), amount DOUBLE, country VARCHAR(2), updated_at DATETIME(3))`,
};

/** Replaces the table's rows with one scan's, in multi-row INSERTs with bound values. */
async function load(db: TestDatabase, runner: SqlRunner, table: string, rows: Order[], problem?: Problem) {
  const columns =
    problem === "dropped_column"
      ? ["id", "email", "amount", "updated_at"]
      : ["id", "email", "amount", "country", "updated_at"];
  await runner.query(`DELETE FROM ${table}`);
  const hasCountry = await runner.query<{ n: number }>(
    db === "postgres"
      ? `SELECT count(*)::int AS n FROM information_schema.columns WHERE table_name = $1 AND column_name = 'country'`
      : `SELECT count(*) AS n FROM information_schema.columns WHERE table_schema = 'test' AND table_name = ? AND column_name = 'country'`,
    [table],
  );
  const present = Number(hasCountry[0]!.n) > 0;
  if (problem === "dropped_column" && present) await runner.query(`ALTER TABLE ${table} DROP COLUMN country`);
  if (problem !== "dropped_column" && !present)
    await runner.query(`ALTER TABLE ${table} ADD COLUMN country VARCHAR(2)`);
  for (let i = 0; i < rows.length; i += 200) {
    const chunk = rows.slice(i, i + 200);
    const params: unknown[] = [];
    const tuples = chunk.map((r) => {
      const values = columns.map((c) => {
        const v = r[c as keyof Order];
        // DATETIME takes no zone: store UTC wall-clock time, as the runner reads it back.
        return c === "updated_at" && db === "mysql" ? String(v).replace("T", " ").replace("Z", "") : v;
      });
      const marks = values.map((v) => {
        params.push(v);
        return db === "postgres" ? `$${params.length}` : "?";
      });
      return `(${marks.join(", ")})`;
    });
    await runner.query(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")}`, params);
  }
}

for (const db of ["postgres", "mysql"] as const) {
  describe(`scenario: ${db === "postgres" ? "PostgreSQL" : "MariaDB"} scans (SQL pushdown) find real problems`, () => {
    const table = uniqueTable("dq_scenario");
    let runner: SqlRunner;
    afterAll(async () => {
      await runner?.query(`DROP TABLE IF EXISTS ${table}`);
      await runner?.close();
    });

    it("trains on clean scans, then raises exactly the matching alert for each problem, and none when clean", async () => {
      runner = await runnerFor(db);
      await runner.query(DDL[db](table));
      const tenant = await createTenant();
      const projectId = await createProject(tenant);
      const connection = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/connections`, {
        as: admin,
        body: {
          name: unique("db"),
          type: "GENERIC_JDBC",
          payload: DATABASES[db].payload,
          credential: { type: "GENERIC_MAP", payload: DATABASES[db].credential },
        },
      });
      expect(connection.status, JSON.stringify(connection.body)).toBe(201);
      const asset = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/assets`, {
        as: admin,
        body: {
          name: "orders",
          type: "GENERIC_JDBC",
          connection_id: connection.body.id,
          payload: { schema: DATABASES[db].schema, table },
          options: { id_attributes: ["id"], timestamp_attribute: "updated_at" },
        },
      });
      expect(asset.status, JSON.stringify(asset.body)).toBe(201);
      const assetId: number = asset.body.id;

      let scan = 0;
      const scanWith = async (problem?: Problem) => {
        scan += 1;
        await load(db, runner, table, orders(scan, new Date(), problem), problem);
        const res = await call("POST", `/api/backend/${tenant}/configuration/assets/${assetId}/scans`, { as: admin });
        expect(res.status).toBe(202);
        const job = await finishedJob(tenant, assetId, res.body.job_id);
        return { job, alerts: await alertKeys(tenant, assetId, res.body.job_id) };
      };

      for (let i = 0; i < 8; i++) {
        const { job, alerts } = await scanWith();
        expect(alerts, `clean scan ${scan}`).toEqual([]);
        expect(job.progress.rows).toBeGreaterThan(900);
      }
      for (const [problem, expected] of EXPECTED) {
        expect((await scanWith(problem)).alerts, problem).toEqual(expected);
        const after = problem === "dropped_column" ? ["schema_change:country"] : [];
        expect((await scanWith()).alerts, `clean scan after ${problem}`).toEqual(after);
      }
    }, 300_000);
  });
}
