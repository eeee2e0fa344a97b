/**
 * One local HTTP server playing four warehouse SQL APIs on path prefixes, each checking requests
 * as its provider documents them and answering in its shapes:
 *   /snowflake  Snowflake SQL API v2 (key-pair JWT or programmatic access token)
 *   /bigquery   BigQuery REST v2 jobs.query / getQueryResults / jobs.cancel, /google/token (JWT bearer grant)
 *   /databricks Databricks SQL Statement Execution API 2.0 (a token, or a service principal's OAuth M2M token)
 *   /redshift   Redshift Data API, JSON 1.1 with SigV4
 * SQL runs on PostgreSQL (127.0.0.1:5432, database test) in a schema of this run, after the
 * provider's parameter markers and quoting are turned into PostgreSQL's. The two schema queries
 * PostgreSQL cannot run (BigQuery's `dataset`.INFORMATION_SCHEMA and Databricks' full_data_type)
 * are recognised by shape and answered from the fixture table's definition.
 *
 * Behaviour is chosen by the warehouse / project / cluster a test names (async, hang, down,
 * busy); pages are 3 rows, so any result beyond 3 rows is paged.
 *
 * Each provider is a module of warehouses/ (snowflake.ts, bigquery.ts, databricks.ts,
 * redshift.ts); what they share is in warehouses/shared.ts and warehouses/sigv4.ts.
 */

import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import postgres from "postgres";
import type { TestProject } from "vitest/node";
import type { DatabricksOAuthFixture } from "./databricks-oauth";
import { createBigQueryFake } from "./warehouses/bigquery";
import { createDatabricksFake } from "./warehouses/databricks";
import { createRedshiftFake } from "./warehouses/redshift";
import type { FakeContext, Handler } from "./warehouses/shared";
import { createRunner, createStatementStore, HOST, ITEM_ROWS, ITEMS, readBody, send } from "./warehouses/shared";
import { createSnowflakeFake } from "./warehouses/snowflake";

export interface WarehouseFixtures {
  /** PostgreSQL schema (= BigQuery dataset, Databricks/Redshift/Snowflake schema) holding table `items`. */
  schema: string;
  /** Base of the test-only endpoints (/_test/seen, /_test/cancelled). */
  control: string;
  closedPort: number;
  snowflake: {
    endpoint: string;
    account: string;
    database: string;
    user: string;
    privateKey: string;
    pat: string;
    strangerKey: string;
  };
  bigquery: {
    endpoint: string;
    project: string;
    reader: { client_email: string; private_key: string; private_key_id: string; token_uri: string };
    forged: { client_email: string; private_key: string; private_key_id: string; token_uri: string };
  };
  databricks: { endpoint: string; host: string; token: string; oauth: DatabricksOAuthFixture };
  redshift: { endpoint: string; endpointPrefix: string; accessKey: string; secretKey: string; user: string };
}

declare module "vitest" {
  export interface ProvidedContext {
    warehouses: WarehouseFixtures;
  }
}

export default async function setup(project: TestProject) {
  const schema = `wh_${process.pid}_${randomBytes(3).toString("hex")}`;
  const pg = postgres({
    host: HOST,
    port: 5432,
    database: "test",
    username: "postgres",
    max: 4,
    onnotice: () => {},
    // timestamp without time zone as UTC, whatever the machine's zone.
    types: {
      // Parameters arrive as the providers' text; postgres.js would turn any string but true into false.
      textBoolean: {
        to: 16,
        from: [16],
        serialize: (x: unknown) => (typeof x === "string" ? x : x ? "t" : "f"),
        parse: (x: string) => x === "t",
      },
      utcTimestamp: {
        to: 1114,
        from: [1114],
        serialize: (x: unknown) => String(x),
        parse: (x: string) => new Date(`${x.replace(" ", "T")}Z`),
      },
    },
  });
  await pg.unsafe(`CREATE SCHEMA "${schema}"`);
  await pg.unsafe(`CREATE TABLE "${schema}".items (${ITEMS.map((c) => `${c.name} ${c.pg}`).join(", ")})`);
  await pg.unsafe(`INSERT INTO "${schema}".items VALUES ${ITEM_ROWS.join(", ")}`);
  const fake = await startFake(pg, schema);
  project.provide("warehouses", { ...fake.fixtures, schema, closedPort: await freePort() });
  return async () => {
    await fake.close();
    await pg.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pg.end({ timeout: 5 });
  };
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts the one server: the test-only control endpoints, and each provider under its path prefix. */
async function startFake(pg: postgres.Sql, schema: string) {
  const statements = createStatementStore();
  // Filled once the server listens: the providers' fixtures name its address.
  const handlers: Record<string, Handler> = {};

  const server: Server = createServer((req, res) => {
    (async () => {
      const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
      const body = await readBody(req);
      if (url.pathname === "/_test/seen") {
        await statements.seen(url.searchParams.get("marker") ?? "");
        return send(res, 200, { seen: true });
      }
      if (url.pathname === "/_test/cancelled") {
        return send(res, 200, { cancelled: statements.cancelled(url.searchParams.get("marker") ?? "") });
      }
      const prefix = url.pathname.split("/")[1] ?? "";
      const handler = handlers[prefix];
      if (!handler) return send(res, 404, { message: "no such provider" });
      await handler(req, res, url, body);
    })().catch((err) => {
      if (!res.headersSent) send(res, 500, { message: String(err) });
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => resolve());
  });
  const base = `http://${HOST}:${(server.address() as { port: number }).port}`;

  const ctx: FakeContext = { base, schema, run: createRunner(pg), statements };
  const snowflake = await createSnowflakeFake(ctx);
  const bigquery = await createBigQueryFake(ctx);
  const databricks = createDatabricksFake(ctx);
  const redshift = createRedshiftFake(ctx);
  Object.assign(handlers, {
    snowflake: snowflake.handle,
    bigquery: bigquery.handle,
    google: bigquery.token,
    databricks: databricks.handle,
    redshift: redshift.handle,
  });

  const fixtures: Omit<WarehouseFixtures, "schema" | "closedPort"> = {
    control: `${base}/_test`,
    snowflake: snowflake.fixtures,
    bigquery: bigquery.fixtures,
    databricks: databricks.fixtures,
    redshift: redshift.fixtures,
  };
  return {
    fixtures,
    close: () =>
      new Promise<void>((resolve) => {
        statements.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
