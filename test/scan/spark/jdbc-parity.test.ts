/**
 * Light and full scans of a database table agree (issue 37): one dataset in a PostgreSQL table,
 * profiled by the Worker's SQL pushdown (profileTable on the real PostgreSQL runner) and by the
 * Spark driver, as it profiles a table read through Spark's JDBC reader: the same rows with the
 * types Spark's PostgreSQL dialect maps them to (integer → int, numeric(10,2) → decimal(10,2),
 * varchar → string, timestamp → timestamp), its statements run on DuckDB by the driverReplay
 * server (test/support/driver-replay.global.ts). Tolerances: test/support/profile-parity.ts.
 * A varchar of dates and times is typed timestamp by both, with its times' range (not the text's).
 */

import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { loadSchema, profileTable, type SqlRunner, type TableRef } from "../../../src/scan/sql";
import { expectSameProfile } from "../../support/profile-parity";
import { DATABASES, runnerFor, uniqueTable } from "../sql/support/databases";

const ROWS = 3000;
const COUNTRIES = ["DE", "DE", "DE", "FR", "FR", "IT", "ES", "NL", "PL", "it's"];

interface Row {
  id: number;
  country: string | null;
  amount: string | null;
  code: string | null;
  /** Text of dates and times in three forms, some "n/a" (which a text max would pick). */
  shipped: string | null;
  updated_at: string;
}

/** Deterministic rows with nulls, blanks, whole and fractional amounts, a text column of mostly numbers, repeated ids. */
function dataset(): Row[] {
  let seed = 11;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const rows: Row[] = [];
  for (let i = 0; i < ROWS; i++) {
    const r = next();
    const cents = Math.round(next() * 100_000 - 10_000);
    rows.push({
      id: i % 997 === 0 && i > 0 ? i - 1 : i + 1,
      country: r < 0.05 ? null : r < 0.07 ? " " : (COUNTRIES[Math.floor(next() * COUNTRIES.length)] ?? "DE"),
      // A fifth of the amounts are whole: a whole number in a decimal column is an integer value.
      amount: r > 0.97 ? null : (next() < 0.2 ? Math.round(cents / 100) : cents / 100).toFixed(2),
      code: r > 0.95 && r <= 0.97 ? "n/a" : r > 0.9 ? null : String(Math.floor(next() * 500)),
      updated_at: new Date(Date.UTC(2026, 10, 1) + Math.floor(next() * 20 * 86400) * 1000).toISOString(),
      shipped: shippedText(next(), next()),
    });
  }
  return rows;
}

/** A date ("2026-11-03"), a time with a space or a "T" (no zone: UTC in both paths), "n/a", or null. */
function shippedText(form: number, at: number): string | null {
  const iso = new Date(Date.UTC(2026, 9, 1) + Math.floor(at * 60 * 86400) * 1000).toISOString().slice(0, 19);
  if (form < 0.05) return null;
  if (form < 0.1) return "n/a";
  if (form < 0.4) return iso.slice(0, 10);
  return form < 0.7 ? iso.replace("T", " ") : iso;
}

const sqlText = (v: string | null) => (v === null ? "NULL" : `'${v.replaceAll("'", "''")}'`);

describe("a PostgreSQL table: SQL pushdown (light) and the Spark driver over JDBC (full)", () => {
  const rows = dataset();
  const name = uniqueTable("dq_jdbc_parity");
  const table: TableRef = { schema: DATABASES.postgres.schema, name };
  let runner: SqlRunner;

  beforeAll(async () => {
    runner = await runnerFor("postgres");
    await runner.query(
      `CREATE TABLE "${name}" (id integer NOT NULL, country varchar(8), amount numeric(10,2), code varchar(8), updated_at timestamp NOT NULL, shipped varchar(32))`,
    );
    for (let from = 0; from < rows.length; from += 500) {
      const chunk = rows.slice(from, from + 500);
      const values = chunk.map((_, r) => `(${[1, 2, 3, 4, 5, 6].map((c) => `$${r * 6 + c}`).join(", ")})`);
      await runner.query(
        `INSERT INTO "${name}" (id, country, amount, code, updated_at, shipped) VALUES ${values.join(", ")}`,
        chunk.flatMap((r) => [
          r.id,
          r.country,
          r.amount,
          r.code,
          r.updated_at.replace("T", " ").replace("Z", ""),
          r.shipped,
        ]),
      );
    }
  });

  afterAll(async () => {
    if (!runner) return;
    await runner.query(`DROP TABLE IF EXISTS "${name}"`);
    await runner.close();
  });

  it("profiles the same numbers, types, ranges, tops and freshness", async () => {
    const options = { id_attributes: ["id"], timestamp_attribute: "updated_at" };
    const schema = await loadSchema(runner, table, { useInformationSchema: true });
    const light = await profileTable(runner, table, schema, options);

    const setup = [
      "CREATE TABLE dq_source (id INTEGER NOT NULL, country VARCHAR, amount DECIMAL(10,2), code VARCHAR, updated_at TIMESTAMP NOT NULL, shipped VARCHAR)",
      ...Array.from(
        { length: Math.ceil(rows.length / 500) },
        (_, k) =>
          `INSERT INTO dq_source VALUES ${rows
            .slice(k * 500, k * 500 + 500)
            .map((r) =>
              [
                r.id,
                sqlText(r.country),
                r.amount ?? "NULL",
                sqlText(r.code),
                `TIMESTAMP '${r.updated_at.slice(0, 19).replace("T", " ")}'`,
                sqlText(r.shipped),
              ].join(", "),
            )
            .map((v) => `(${v})`)
            .join(", ")}`,
      ),
    ];
    const columns = [
      ["id", "int"],
      ["country", "string"],
      ["amount", "decimal(10,2)"],
      ["code", "string"],
      ["updated_at", "timestamp"],
      ["shipped", "string"],
    ];
    const res = await fetch(inject("driverReplay"), {
      method: "POST",
      body: JSON.stringify({ setup, columns, options }),
    });
    expect(res.status).toBe(200);
    const { profile: full } = (await res.json()) as { profile: Parameters<typeof expectSameProfile>[1] };

    const sorted = (values: Array<number | null>) => values.filter((v) => v !== null).sort((a, b) => a - b);
    // The text column of times: typed timestamp, its range the times' (not the text's "n/a"), in both.
    const shipped = light.attributes.find((a) => a.name === "shipped");
    const times = rows.flatMap((r) =>
      r.shipped && r.shipped !== "n/a"
        ? [Date.parse(`${r.shipped.slice(0, 10)}T${r.shipped.slice(11) || "00:00:00"}Z`)]
        : [],
    );
    expect(shipped).toMatchObject({
      inferred_type: "timestamp",
      min: new Date(Math.min(...times)).toISOString(),
      max: new Date(Math.max(...times)).toISOString(),
    });
    expectSameProfile(light, full, {
      id: sorted(rows.map((r) => r.id)),
      amount: sorted(rows.map((r) => (r.amount === null ? null : Number(r.amount)))),
      code: sorted(rows.map((r) => (r.code === null || r.code === "n/a" ? null : Number(r.code)))),
    });
  });
});
