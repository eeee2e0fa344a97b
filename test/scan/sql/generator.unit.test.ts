import { describe, expect, it } from "vitest";
import { QUANTILE_POINTS } from "../../../src/contracts/profile";
import { columnKind, dialectSql } from "../../../src/scan/sql/dialects";
import {
  frequencyQuery,
  planColumns,
  renderFor,
  scalarQuery,
  sourceOf,
  windowQuantileQuery,
} from "../../../src/scan/sql/generator";
import type { Dialect, TableRef } from "../../../src/scan/sql/runner";

const COLUMNS = planColumns([
  { name: "amount", type: "decimal(10,2)" },
  { name: "email", type: "varchar(100)" },
  { name: "created_at", type: "timestamp" },
]);
const TABLE: TableRef = { catalog: "DB", schema: "SALES", name: "orders" };
const HOSTILE = "x'); DROP TABLE orders; --";

function generate(dialect: Dialect, options = {}) {
  const d = dialectSql(dialect);
  const source = sourceOf(d, TABLE, { filter: { email: [HOSTILE] }, ...options });
  const scalar = renderFor(
    d,
    scalarQuery(d, source, COLUMNS, { timestamp_attribute: "created_at", id_attributes: ["email"] }, true),
  );
  const freq = renderFor(d, frequencyQuery(d, source, COLUMNS));
  return { d, scalar, freq };
}

describe("SQL generator", () => {
  it.each([
    [
      "postgres",
      '"DB"."SALES"."orders"',
      '"amount"',
      "$1",
      'COUNT(DISTINCT "amount")',
      'percentile_cont(CAST(ARRAY[0,0.01,0.05,0.1,0.25,0.5,0.75,0.9,0.95,0.99,1] AS double precision[])) WITHIN GROUP (ORDER BY "amount")',
    ],
    ["mysql", "`DB`.`SALES`.`orders`", "`amount`", "?", "COUNT(DISTINCT `amount`)", null],
    [
      "snowflake",
      '"DB"."SALES"."orders"',
      '"amount"',
      "?",
      'APPROX_COUNT_DISTINCT("amount")',
      'APPROX_PERCENTILE("amount", 0.99)',
    ],
    [
      "bigquery",
      "`DB`.`SALES`.`orders`",
      "`amount`",
      "?",
      "APPROX_COUNT_DISTINCT(`amount`)",
      "APPROX_QUANTILES(`amount`, 100)[OFFSET(99)]",
    ],
    [
      "databricks",
      "`DB`.`SALES`.`orders`",
      "`amount`",
      ":p0",
      "approx_count_distinct(`amount`)",
      "percentile_approx(`amount`, array(0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1))[5]",
    ],
    [
      "redshift",
      '"DB"."SALES"."orders"',
      '"amount"',
      ":p0",
      'APPROXIMATE COUNT(DISTINCT "amount")',
      'APPROXIMATE PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY "amount")',
    ],
  ] as const)(
    "%s: quoting, placeholders, distinct and quantile functions",
    (dialect, table, column, placeholder, distinct, quantile) => {
      const { d, scalar, freq } = generate(dialect);
      expect(d.exactDistinct).toBe(dialect === "postgres" || dialect === "mysql");
      expect(scalar.sql).toContain(`FROM ${table}`);
      expect(scalar.sql).toContain(column);
      expect(scalar.sql).toContain(distinct);
      expect(scalar.sql).toContain("STDDEV_SAMP(");
      if (quantile) expect(scalar.sql).toContain(quantile);
      // The filter value is bound, never part of the text; every placeholder has its value.
      expect(scalar.sql).not.toContain("DROP TABLE");
      expect(scalar.sql).toContain(placeholder);
      expect(scalar.params.every((p) => p === HOSTILE)).toBe(true);
      // The filter appears in the main FROM and in the id-groups and distinct-rows subqueries.
      expect(scalar.params).toHaveLength(3);
      expect(freq.params).toHaveLength(COLUMNS.length * 2);
      expect(freq.sql.match(/UNION ALL/g)).toHaveLength(COLUMNS.length * 2 - 1);
      expect(freq.sql).toContain("LIMIT 20");
    },
  );

  it.each([
    ["postgres", 'CAST("doc" AS TEXT)'],
    ["mysql", "CAST(`doc` AS CHAR)"],
    ["snowflake", 'TO_VARCHAR("doc")'],
    ["bigquery", "CAST(`doc` AS STRING)"],
    ["databricks", "CAST(`doc` AS STRING)"],
    ["redshift", 'CAST("doc" AS VARCHAR)'],
  ] as const)("%s: counts distinct whole rows grouped by every column, other kinds by %s", (dialect, docText) => {
    const d = dialectSql(dialect);
    const plan = planColumns([
      { name: "amount", type: "decimal(10,2)" },
      { name: "email", type: "varchar(100)" },
      { name: "doc", type: "jsonb" },
      { name: "created_at", type: "timestamp" },
    ]);
    const id = (name: string) => d.ident(name).parts[0] as string;
    const source = sourceOf(d, TABLE, { sample_fraction: 25 });
    // Row metrics ride with the first chunk of columns, but a row is all of them.
    const first = renderFor(d, scalarQuery(d, source, plan.slice(0, 2), {}, true, plan)).sql;
    const from = renderFor(d, source).sql;
    expect(first).toContain(
      `(SELECT COUNT(*) FROM (SELECT 1 AS one FROM ${from} GROUP BY ${id("amount")}, ${id("email")}, ${docText}, ${id("created_at")}) g) AS ${id("distinct_rows")}`,
    );
    const later = renderFor(d, scalarQuery(d, source, plan.slice(2), {}, false, plan)).sql;
    expect(later).not.toContain("GROUP BY");
    // A table without columns has no row to group.
    expect(renderFor(d, scalarQuery(d, source, [], {}, true)).sql).not.toContain("GROUP BY");
  });

  it("numbers PostgreSQL placeholders in text order", () => {
    const { scalar, freq } = generate("postgres");
    expect(scalar.sql).toContain("$1");
    expect(scalar.sql).toContain("$2");
    expect(freq.sql).toContain(`$${COLUMNS.length * 2}`);
  });

  it.each([
    ["postgres", "regexp_replace(", "'g')", "E'(.)\\\\1+'"],
    ["mysql", "REGEXP_REPLACE(", "'(?-i)[[:upper:]]+'", "'(?-i)[ ]+'"],
    ["snowflake", "REGEXP_REPLACE(", "'[[:upper:]]+'", "'[-]+'"],
    ["bigquery", "REGEXP_REPLACE(", "'[[:digit:]]+'", "'[.]+'"],
    ["databricks", "regexp_replace(", "'[A-Z]+'", "'(.)\\\\1+', '$1'"],
    ["redshift", "REGEXP_REPLACE(", "'[[:lower:]]+'", "'[_]+'"],
  ] as const)("%s: value shapes with the dialect's regular expressions", (dialect, fn, classPattern, collapse) => {
    const { freq } = generate(dialect);
    expect(freq.sql).toContain(fn);
    expect(freq.sql).toContain(classPattern);
    expect(freq.sql).toContain(collapse);
    expect(freq.sql).toContain("'…'");
  });

  it.each([
    ["postgres", "TABLESAMPLE BERNOULLI (25) REPEATABLE (42)"],
    ["mysql", "RAND(42) < 0.25"],
    ["snowflake", "SAMPLE BERNOULLI (25) SEED (42)"],
    ["bigquery", "TABLESAMPLE SYSTEM (25 PERCENT)"],
    ["databricks", "TABLESAMPLE (25 PERCENT) REPEATABLE (42)"],
    ["redshift", "RANDOM() < 0.25"],
  ] as const)("%s: samples with %s", (dialect, clause) => {
    const { scalar } = generate(dialect, { sample_fraction: 25, limit: 1000, timestamp_attribute: "created_at" });
    expect(scalar.sql).toContain(clause);
    expect(scalar.sql).toContain("LIMIT 1000");
    expect(scalar.sql).toMatch(/ORDER BY .created_at. DESC LIMIT 1000/);
  });

  it("type regexes and text metrics only for text columns, in every dialect", () => {
    for (const dialect of ["snowflake", "bigquery", "databricks", "redshift"] as const) {
      const { scalar } = generate(dialect);
      const d = dialectSql(dialect);
      const matchFn = {
        snowflake: "REGEXP_LIKE(",
        bigquery: "REGEXP_CONTAINS(",
        databricks: " RLIKE ",
        redshift: " ~ ",
      }[dialect];
      expect(scalar.sql).toContain(matchFn);
      expect(scalar.sql).toContain(`TRIM(${d.ident("email").parts[0]}) = ''`);
      expect(scalar.sql).not.toContain(`TRIM(${d.ident("amount").parts[0]})`);
      expect(scalar.sql).toContain(`MAX(${d.ident("created_at").parts[0]})`);
    }
  });

  it("MySQL: exact quantiles by rank in a window query", () => {
    const d = dialectSql("mysql");
    const q = renderFor(d, windowQuantileQuery(d, sourceOf(d, TABLE, {}), COLUMNS.slice(0, 1)));
    expect(q.sql).toContain("ROW_NUMBER() OVER (PARTITION BY `amount` IS NULL ORDER BY `amount`)");
    expect(q.sql).toContain("COUNT(`amount`) OVER ()");
    expect(q.sql.match(/FLOOR\(/g)).toHaveLength(QUANTILE_POINTS.length);
    expect(q.sql.match(/CEIL\(/g)).toHaveLength(QUANTILE_POINTS.length);
  });

  it("quotes hostile identifiers by doubling the quote", () => {
    expect(dialectSql("postgres").ident('we"ird').parts).toEqual(['"we""ird"']);
    expect(dialectSql("mysql").ident("we`ird").parts).toEqual(["`we``ird`"]);
    expect(dialectSql("bigquery").ident("we`ird").parts).toEqual(["`we\\`ird`"]);
  });

  it("binds delta timestamps and filter values, NULL as IS NULL", () => {
    const d = dialectSql("mysql");
    const q = renderFor(
      d,
      sourceOf(
        d,
        { name: "t" },
        {
          filter: { country: ["US", null], empty: [] },
          timestamp_attribute: "ts",
          delta_only: true,
          last_max_timestamp: "2024-01-02T03:04:05.000Z",
        },
      ),
    );
    expect(q.sql).toBe("(SELECT * FROM `t` WHERE (`country` IN (?) OR `country` IS NULL) AND 1 = 0 AND `ts` > ?) src");
    expect(q.params).toEqual(["US", "2024-01-02 03:04:05.000"]);
  });

  it("maps SQL types to column kinds", () => {
    expect(
      [
        "integer",
        "bigint",
        "int(11)",
        "NUMBER(38,0)",
        "INT64",
        "numeric",
        "decimal(10,2)",
        "double precision",
        "FLOAT64",
        "tinyint(1)",
        "boolean",
        "date",
        "timestamp without time zone",
        "TIMESTAMP_NTZ",
        "datetime(6)",
        "character varying",
        "varchar(20)",
        "STRING",
        "uuid",
        "jsonb",
      ].map(columnKind),
    ).toEqual([
      "integer",
      "integer",
      "integer",
      "integer",
      "integer",
      "number",
      "number",
      "number",
      "number",
      "boolean",
      "boolean",
      "date",
      "timestamp",
      "timestamp",
      "timestamp",
      "text",
      "text",
      "text",
      "other",
      "other",
    ]);
  });
});
