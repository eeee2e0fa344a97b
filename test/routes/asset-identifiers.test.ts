/**
 * Names a database cannot hold (issue 42, point 3): a table, schema or attribute with a NUL or
 * another control character, a PostgreSQL name past 63 bytes, a MySQL one past 64 characters or
 * ending in a space, a NUL in a PostgreSQL filter value. Refused with a 400 naming the field when
 * the asset (or a source group, or a scan's table) is saved; and an asset saved before the rule
 * fails its scan at once with the reason — on the real PostgreSQL and MariaDB servers — instead
 * of waiting in QUEUED while it is retried.
 */

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createJdbcRunner } from "../../src/scan/sql";
import { DATABASES, runnerFor, type TestDatabase, uniqueTable } from "../scan/sql/support/databases";
import { admin, call } from "../support/api";
import { assetsPath, countRows } from "../support/assets";
import { createConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { scanJob } from "../support/scans";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

const CONTROL_CHARACTERS = ["\u0000", "\u0001", "\t", "\n", "\u001f", "\u007f", "\u009b"];

/** A tenant with a project and a GENERIC_JDBC connection to the local server of `db`. */
async function databaseProject(db: TestDatabase) {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const connection = await createConnection(tenant, {
    projectId,
    type: "GENERIC_JDBC",
    payload: DATABASES[db].payload,
    credential: { type: "GENERIC_MAP", payload: { ...DATABASES[db].credential } },
  });
  return { tenant, projectId, connectionId: connection.id };
}

/** A real table with two columns on the server of `db`. */
async function realTable(db: TestDatabase): Promise<string> {
  const table = uniqueTable("ident");
  const runner = await runnerFor(db);
  try {
    await runner.query(`CREATE TABLE ${table} (id integer, city varchar(20))`);
    await runner.query(`INSERT INTO ${table} VALUES (1, 'Oslo'), (2, 'Lima')`);
  } finally {
    await runner.close();
  }
  return table;
}

const assetBody = (db: TestDatabase, connectionId: number, payload: object, options: object = {}) => ({
  name: unique("asset"),
  type: "GENERIC_JDBC",
  connection_id: connectionId,
  payload: { schema: DATABASES[db].schema, ...payload },
  options,
});

describe.each(["postgres", "mysql"] as const)("names %s cannot hold", (db) => {
  it("are refused when the asset is saved, naming the field; nothing is written", async () => {
    const { tenant, projectId, connectionId } = await databaseProject(db);
    const table = await realTable(db);
    const post = (payload: object, options: object = {}) =>
      call("POST", assetsPath(tenant, projectId), { as: admin, body: assetBody(db, connectionId, payload, options) });
    for (const c of CONTROL_CHARACTERS) {
      const cases: [object, object, string][] = [
        [{ table: `can${c}ary` }, {}, "body.payload.table"],
        [{ table, schema: `pub${c}lic` }, {}, "body.payload.schema"],
        [{ table }, { id_attributes: ["id", `i${c}d`] }, "body.options.id_attributes.1"],
        [{ table }, { timestamp_attribute: `at${c}` }, "body.options.timestamp_attribute"],
        [{ table }, { filter: { [`ci${c}ty`]: ["Oslo"] } }, `body.options.filter.ci${c}ty`],
        [{ table }, { segments: { [`ci${c}ty`]: ["Oslo"] } }, `body.options.segments.ci${c}ty`],
      ];
      for (const [payload, options, field] of cases) {
        const res = await post(payload, options);
        const what = `${JSON.stringify(payload)} ${JSON.stringify(options)}`;
        expect(res.status, what).toBe(400);
        expect(
          res.body.errors.map((e: { path: string }) => e.path),
          what,
        ).toContain(field);
        expect(JSON.stringify(res.body.errors), what).toMatch(/NUL character|control character/);
      }
    }
    const beyond: [object, object, string, RegExp][] =
      db === "postgres"
        ? [
            [{ table: "é".repeat(32) }, {}, "body.payload.table", /63 bytes/],
            [{ table }, { id_attributes: ["c".repeat(64)] }, "body.options.id_attributes.0", /63 bytes/],
          ]
        : [
            [{ table: "t".repeat(65) }, {}, "body.payload.table", /64 characters/],
            [{ table: "ci😀ty" }, {}, "body.payload.table", /Basic Multilingual Plane/],
            [{ table }, { id_attributes: ["city "] }, "body.options.id_attributes.0", /ends with a space/],
          ];
    for (const [payload, options, path, message] of beyond) {
      const res = await post(payload, options);
      expect(res.status, path).toBe(400);
      expect(res.body.errors).toEqual([{ path, message: expect.stringMatching(message) }]);
    }
    if (db === "postgres") {
      const res = await post({ table }, { filter: { city: ["Os\u0000lo"] } });
      expect(res.body.errors).toEqual([
        { path: "body.options.filter.city.0", message: expect.stringMatching(/PostgreSQL text/) },
      ]);
    }
    expect(await countRows("assets", "tenant_id = ?", tenant)).toBe(0);
    // The names as the database holds them are fine.
    expect((await post({ table }, { id_attributes: ["id"], filter: { city: ["Oslo"] } })).status).toBe(201);
  });

  it("an update and a scan's own table are refused the same way", async () => {
    const { tenant, projectId, connectionId } = await databaseProject(db);
    const table = await realTable(db);
    const made = await call("POST", assetsPath(tenant, projectId), {
      as: admin,
      body: assetBody(db, connectionId, { table }),
    });
    expect(made.status).toBe(201);
    const put = await call("PUT", `${assetsPath(tenant, projectId)}/${made.body.id}`, {
      as: admin,
      body: { payload: { schema: DATABASES[db].schema, table: "canary\u0000" } },
    });
    expect(put.status).toBe(400);
    expect(put.body.errors[0].path).toBe("body.payload.table");
    const scans = `/api/backend/${tenant}/configuration/assets/${made.body.id}/scans`;
    for (const name of ["canary\u0000", "tab\there"]) {
      const scan = await call("POST", scans, { as: admin, body: { table: name } });
      expect(scan.status).toBe(400);
      expect(scan.body.errors[0].path).toBe("body.table");
    }
    expect(await countRows("scan_jobs", "tenant_id = ?", tenant)).toBe(0);
  });

  it("an asset saved before the rule fails its scan at once, with the reason, never left QUEUED", async () => {
    const { tenant, projectId, connectionId } = await databaseProject(db);
    const table = await realTable(db);
    const made = await call("POST", assetsPath(tenant, projectId), {
      as: admin,
      body: assetBody(db, connectionId, { table }),
    });
    const payload = { schema: DATABASES[db].schema, table: `${table}\u0000` };
    await env.DB.prepare("update assets set payload = ? where id = ?")
      .bind(JSON.stringify(payload), made.body.id)
      .run();
    const scan = await call("POST", `/api/backend/${tenant}/configuration/assets/${made.body.id}/scans`, {
      as: admin,
    });
    expect(scan.status).toBe(202);
    const job = await scanJob(tenant, made.body.id, scan.body.job_id);
    expect(job).toMatchObject({ status: "FAILED", attempts: 1 });
    expect(job.error).toMatch(/the table name holds a NUL character/);
    const schema = await call("POST", `/api/data/${tenant}/assets/${made.body.id}/schema`, { as: admin });
    expect(schema.status).toBe(422);
    expect(schema.body.detail).toMatch(/the table name holds a NUL character/);
  });
});

describe("source groups", () => {
  it("refuse a table with a control character, and a Redshift name past 127 bytes", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const base = `/api/backend/v2/${tenant}/configuration/projects/${projectId}/source_groups`;
    const connection = await createConnection(tenant, { projectId, type: "REDSHIFT" });
    const group = (payload: object, tableName: string) =>
      call("POST", base, {
        as: admin,
        body: {
          name: unique("g"),
          type: "REDSHIFT",
          connection_id: connection.id,
          payload,
          assets: [{ name: "orders", table_or_file_name: tableName }],
        },
      });
    const nul = await group({ database: "dev", schema: "public" }, "orders\u0000");
    expect(nul.status).toBe(400);
    expect(nul.body.errors[0].path).toBe("body.assets.0.table_or_file_name");
    const long = await group({ database: "dev", schema: "s".repeat(128) }, "orders");
    expect(long.status).toBe(400);
    expect(long.body.errors).toEqual([
      { path: "body.payload.schema", message: expect.stringMatching(/Redshift's 127 bytes/) },
    ]);
    expect(await countRows("source_groups", "tenant_id = ?", tenant)).toBe(0);
  });
});

describe("a statement PostgreSQL cannot read", () => {
  it("is not retried as a network fault: the protocol violation is the statement's", async () => {
    const runner = await createJdbcRunner(DATABASES.postgres.payload, { ...DATABASES.postgres.credential });
    try {
      await expect(runner.query('SELECT 1 FROM "canary\u0000"')).rejects.toMatchObject({ kind: "invalid" });
    } finally {
      await runner.close();
    }
  });
});
