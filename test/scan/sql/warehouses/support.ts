/** Helpers shared by the warehouse runner tests (fake providers: test/support/warehouses.global.ts). */

import { expect, inject, it } from "vitest";
import { createWarehouseRunner, type WarehouseRunnerOptions } from "../../../../src/connections";
import { ConnectorError } from "../../../../src/scan/connectors/types";
import { loadSchema } from "../../../../src/scan/sql";
import { columnKind } from "../../../../src/scan/sql/dialects";
import type { SqlRunner } from "../../../../src/scan/sql/runner";

export const fixtures = () => inject("warehouses");

/** Schema loads through the catalog (use_information_schema: true). */
export const CATALOG = { useInformationSchema: true };
/** Schema loads from the data: a zero-row query's result metadata (use_information_schema: false). */
export const FROM_DATA = { useInformationSchema: false };

/**
 * use_information_schema false: the schema comes from the metadata of `SELECT * … WHERE 1 = 0`, in
 * the provider's spelling of the types; every column is there, in order, of the same kind as the
 * catalog says, and a missing table is not_found.
 */
export function itReadsTheSchemaFromTheData(open: () => Promise<SqlRunner>) {
  it("reads the schema from the data (a zero-row query's metadata) when use_information_schema is false", async () => {
    const r = await open();
    const table = { schema: fixtures().schema, name: "items" };
    const fromData = await loadSchema(r, table, FROM_DATA);
    const catalog = await loadSchema(r, table, CATALOG);
    expect(fromData.map((f) => f.name)).toEqual(catalog.map((f) => f.name));
    expect(fromData.map((f) => columnKind(f.type))).toEqual(catalog.map((f) => columnKind(f.type)));
    expect(fromData.map((f) => columnKind(f.type))).toEqual(["integer", "text", "number", "boolean", "timestamp"]);
    expect(fromData.every((f) => f.nullable)).toBe(true);
    await expect(loadSchema(r, { ...table, name: "nope" }, FROM_DATA)).rejects.toMatchObject({ kind: "not_found" });
    await r.close();
  });
}

/** Short pauses between polls: the fake answers at once. */
export const FAST: WarehouseRunnerOptions = { pollIntervalMs: 1, maxPollIntervalMs: 2 };

/** The rows of `items` with id >= 2 and a name other than 'zzz', as every runner must return them. */
export const EXPECTED_ROWS = [
  { id: 2, name: "banana", price: 0.25, active: false, created_at: "2024-01-02T10:00:00.000Z" },
  { id: 3, name: "cherry", price: null, active: true, created_at: "2024-01-03T10:00:00.000Z" },
  { id: 5, name: "date", price: 3, active: false, created_at: "2024-01-05T10:00:00.000Z" },
  { id: 6, name: "elder", price: 4.5, active: true, created_at: "2024-01-06T10:00:00.000Z" },
  { id: 7, name: "fig", price: 5.25, active: true, created_at: "2024-01-07T10:00:00.000Z" },
];

/** Awaits the rejection and checks it is a ConnectorError of that kind carrying none of the secrets. */
export async function expectFailure(
  promise: Promise<unknown>,
  kind: ConnectorError["kind"],
  secrets: string[],
): Promise<ConnectorError> {
  const err = await promise.then(
    () => {
      throw new Error("expected a ConnectorError");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectorError);
  const e = err as ConnectorError;
  expect({ kind: e.kind, message: e.message }).toMatchObject({ kind });
  for (const secret of secrets) {
    expect(e.message).not.toContain(secret);
    // A PEM key's body, line by line, must not leak either.
    for (const line of secret.split("\n").filter((l) => l.length > 20)) expect(e.message).not.toContain(line);
  }
  return e;
}

/** Resolves once the fake provider received a statement containing the marker (it holds the answer until then). */
export async function submitted(marker: string): Promise<void> {
  const res = await fetch(`${fixtures().control}/seen?marker=${encodeURIComponent(marker)}`);
  expect(res.status).toBe(200);
}

/** Whether the fake provider saw the statement with the marker cancelled. */
export async function wasCancelled(marker: string): Promise<boolean> {
  const res = await fetch(`${fixtures().control}/cancelled?marker=${encodeURIComponent(marker)}`);
  return ((await res.json()) as { cancelled: boolean }).cancelled;
}

/**
 * The cancellation cases every warehouse runner passes: close() during a statement cancels it
 * through the provider's cancel call (`cancelApi`), and a statement that outlives the poll
 * budget is cancelled. `hanging` makes a runner whose statements the fake never finishes.
 */
export function itCancels(
  cancelApi: string,
  hanging: (options?: WarehouseRunnerOptions) => Promise<SqlRunner>,
  secrets: () => string[],
): void {
  it(`close() cancels the running statement (${cancelApi}) and never rejects`, async () => {
    const r = await hanging();
    const marker = `cancel-${crypto.randomUUID()}`;
    const running = r.query(`SELECT 1 AS one /* ${marker} */`);
    await submitted(marker);
    await expect(r.close()).resolves.toBeUndefined();
    await expectFailure(running, "transient", secrets());
    expect(await wasCancelled(marker)).toBe(true);
    await expect(r.close()).resolves.toBeUndefined();
  });

  it("gives up after the poll budget and cancels the statement", async () => {
    const r = await hanging({ ...FAST, maxPolls: 3 });
    const marker = `budget-${crypto.randomUUID()}`;
    const e = await expectFailure(r.query(`SELECT 1 AS one /* ${marker} */`), "transient", secrets());
    expect(e.message).toMatch(/did not finish/);
    expect(await wasCancelled(marker)).toBe(true);
  });
}

/** A runner of each warehouse fake (Snowflake, BigQuery, Databricks, Redshift), able to read the schema. */
export function fakeWarehouseRunners(): Promise<SqlRunner[]> {
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
