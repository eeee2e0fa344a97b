/**
 * What the Spark driver did in spark/tests/test_driver_run.py (main under a recording stand-in for
 * SparkSession, with the Worker's arguments), checked against definitions that are not ours: every
 * statement parses with a Spark SQL grammar (dt-sql-parser's SparkSQL, from Spark's own ANTLR
 * grammar), and every body it posted is what the Worker's callback accepts.
 */

import { SparkSQL } from "dt-sql-parser";
import { describe, expect, it } from "vitest";
import runs from "../../../spark/testdata/driver-runs.json";
import { ScanCallbackBody } from "../../../src/scan/spark/callback-body";

const spark = new SparkSQL();

describe("the Spark driver's runs (spark/testdata/driver-runs.json)", () => {
  it("covers filter + sampling, delta_only, a MAP column, long text, CSV, Iceberg, JDBC, BigQuery and segments", () => {
    expect(runs.map((r) => r.name)).toEqual([
      "csv filter + sample + limit",
      "csv delta_only",
      "delta delta_only + sample",
      "parquet with a MAP column",
      "iceberg",
      "jdbc",
      "oracle jdbc",
      "bigquery",
      "segments",
    ]);
  });

  for (const run of runs) {
    it(`${run.name}: every statement is Spark SQL`, () => {
      expect(run.statements.length).toBeGreaterThan(3);
      for (const statement of run.statements) {
        const errors = spark.validate(statement).map((e) => e.message);
        expect({ statement, errors }).toEqual({ statement, errors: [] });
      }
    });

    it(`${run.name}: the posted body is a callback the Worker accepts`, () => {
      const parsed = ScanCallbackBody.safeParse(JSON.parse(run.body));
      expect(parsed.error?.issues ?? []).toEqual([]);
      expect(parsed.data?.status).toBe("SUCCEEDED");
    });
  }

  it("the grammar refuses TABLESAMPLE after WHERE, and a misspelt keyword", () => {
    expect(spark.validate("SELECT * FROM dq_source WHERE `a` > 1 TABLESAMPLE (10.0 PERCENT)").length).toBeGreaterThan(
      0,
    );
    expect(spark.validate("SELEC count(*) FROM dq_rows").length).toBeGreaterThan(0);
  });
});
