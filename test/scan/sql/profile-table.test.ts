import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SchemaField } from "../../../src/contracts/profile";
import { type AssetProfile, type AttributeProfile, QUANTILE_POINTS } from "../../../src/contracts/profile";
import { ConnectorError } from "../../../src/scan/connectors/types";
import { loadSchema, profileTable, type SqlRunner, type TableRef } from "../../../src/scan/sql";
import { columnKind } from "../../../src/scan/sql/dialects";
import { DATABASES, runnerFor, type TestDatabase, uniqueTable } from "./support/databases";
import { BASE_TIME, COLUMNS, DDL, meanStddev, ROWS, seedRows } from "./support/seed";

const CATALOG = { useInformationSchema: true };
const FROM_DATA = { useInformationSchema: false };

const rows = seedRows();
const attr = (p: Pick<AssetProfile, "attributes">, name: string): AttributeProfile => {
  const a = p.attributes.find((x) => x.name === name);
  if (!a) throw new Error(`no attribute ${name}`);
  return a;
};
const closeTo = (actual: number | undefined, expected: number) => {
  expect(actual).toBeDefined();
  expect(Math.abs(actual! - expected)).toBeLessThanOrEqual(Math.abs(expected) * 1e-9 + 1e-12);
};
const iso = (hours: number) => new Date(BASE_TIME + hours * 3_600_000).toISOString();

describe.each(["postgres", "mysql"] as const)("profileTable on %s", (db: TestDatabase) => {
  const name = uniqueTable("dq_sql_profile");
  const table: TableRef = { schema: DATABASES[db].schema, name };
  let runner: SqlRunner;
  let schema: SchemaField[];

  beforeAll(async () => {
    runner = await runnerFor(db);
    await runner.query(DDL[db](name));
    const q = (i: number) => (db === "postgres" ? `$${i}` : "?");
    const values = rows.map((_, r) => `(${COLUMNS.map((_, c) => q(r * COLUMNS.length + c + 1)).join(", ")})`);
    const params = rows.flatMap((row) =>
      COLUMNS.map((c) =>
        c === "created_at" && db === "mysql" ? row.created_at.replace("T", " ").replace("Z", "") : row[c],
      ),
    );
    const t = db === "postgres" ? `"${name}"` : `\`${name}\``;
    await runner.query(`INSERT INTO ${t} (${COLUMNS.join(", ")}) VALUES ${values.join(", ")}`, params);
    schema = await loadSchema(runner, table, CATALOG);
  });

  afterAll(async () => {
    if (!runner) return;
    await runner.query(db === "postgres" ? `DROP TABLE IF EXISTS "${name}"` : `DROP TABLE IF EXISTS \`${name}\``);
    await runner.close();
  });

  it("loads the schema from information_schema", () => {
    expect(schema.map((f) => f.name)).toEqual([...COLUMNS]);
    expect(schema.find((f) => f.name === "id")).toMatchObject({ nullable: false });
    expect(schema.find((f) => f.name === "email")).toMatchObject({ nullable: true });
    const types = Object.fromEntries(schema.map((f) => [f.name, f.type]));
    expect(types).toEqual(
      db === "postgres"
        ? {
            id: "integer",
            amount: "numeric",
            score: "double precision",
            email: "character varying",
            code: "character varying",
            country: "character varying",
            created_at: "timestamp without time zone",
            active: "boolean",
          }
        : {
            id: expect.stringMatching(/^int/),
            amount: "decimal(10,2)",
            score: "double",
            email: "varchar(100)",
            code: "varchar(20)",
            country: "varchar(2)",
            created_at: "datetime",
            active: "tinyint(1)",
          },
    );
  });

  it("computes every metric in the database, exactly", async () => {
    const p = await profileTable(runner, table, schema, { timestamp_attribute: "created_at", id_attributes: ["id"] });
    expect(p.row_count).toBe(ROWS);
    expect(p.sampled).toBe(false);
    expect(p.freshness).toBe(iso(ROWS - 1));
    expect(p.duplicate_count).toBe(3);
    // The repeated ids come with other values: no row repeats whole.
    expect(p.duplicate_rows).toBe(0);
    expect(p.schema).toEqual(schema);

    // Numbers: nulls, distinct, min/max, mean, stddev against the seed; quantiles against the database.
    const amounts = rows.map((r) => r.amount).filter((v): v is number => v !== null);
    const amount = attr(p, "amount");
    expect(amount).toMatchObject({
      inferred_type: "number",
      count: ROWS,
      nulls: ROWS - amounts.length,
      empties: 0,
      distinct: new Set(amounts).size,
      distinct_exact: true,
      min: Math.min(...amounts),
      max: Math.max(...amounts),
      type_counts: { number: amounts.length },
      type_mismatches: 0,
    });
    const { mean, stddev } = meanStddev(amounts);
    closeTo(amount.mean, mean);
    closeTo(amount.stddev, stddev);
    const exact = await databasePercentiles(runner, db, name, "amount");
    expect(amount.quantiles).toHaveLength(QUANTILE_POINTS.length);
    for (const [j, q] of amount.quantiles!.entries()) closeTo(q, exact[j]!);
    expect(amount.quantiles![0]).toBe(Math.min(...amounts));
    expect(amount.quantiles![QUANTILE_POINTS.length - 1]).toBe(Math.max(...amounts));

    const scores = rows.map((r) => r.score);
    const score = attr(p, "score");
    closeTo(score.mean, meanStddev(scores).mean);
    closeTo(score.stddev, meanStddev(scores).stddev);
    const exactScores = await databasePercentiles(runner, db, name, "score");
    for (const [j, q] of score.quantiles!.entries()) closeTo(q, exactScores[j]!);

    const id = attr(p, "id");
    expect(id).toMatchObject({ inferred_type: "integer", nulls: 0, distinct: ROWS - 3, min: 1, max: ROWS - 3 });
    expect(id.top_values.slice(0, 3)).toEqual([
      { value: "1", count: 2 },
      { value: "2", count: 2 },
      { value: "3", count: 2 },
    ]);

    // Text: nulls, empties (trimmed), shapes with shares, mean length.
    const emails = rows.map((r) => r.email).filter((v): v is string => v !== null);
    const email = attr(p, "email");
    expect(email).toMatchObject({
      inferred_type: "string",
      nulls: ROWS - emails.length,
      empties: emails.filter((e) => e.trim() === "").length,
      // Blanks are empties, of no type and no value for min/max, as the file profiler counts them.
      type_counts: { string: emails.filter((e) => e.trim() !== "").length },
      type_mismatches: 0,
    });
    // The smallest value in the database's collation, never a blank (it was "" before).
    expect(emails).toContain(email.min);
    expect(String(email.min).trim()).not.toBe("");
    closeTo(email.mean_length, emails.reduce((a, e) => a + e.length, 0) / emails.length);
    const mailShare = emails.filter((e) => e.includes("@")).length / emails.length;
    expect(email.patterns[0]).toEqual({ pattern: "a9@a.a", share: mailShare });
    const shapes = Object.fromEntries(email.patterns.map((x) => [x.pattern, x.share]));
    expect(shapes).toMatchObject({ "Aa a a": 4 / 56, "a a a": 4 / 56, "Aa Aa": 4 / 56 });
    if (db === "postgres") {
      expect(email.distinct).toBe(new Set(emails).size);
      expect(shapes).toMatchObject({ "": 4 / 56, " ": 4 / 56 });
    } else {
      // MariaDB's PAD SPACE collations compare '' and '   ' as equal: one value, one shape group.
      expect(email.distinct).toBe(new Set(emails).size - 1);
      expect(shapes[""] ?? shapes[" "]).toBe(8 / 56);
    }

    // A text column of mostly numbers: inferred integer, the rest are mismatches.
    const code = attr(p, "code");
    expect(code).toMatchObject({
      inferred_type: "integer",
      type_counts: { integer: 50, string: 10 },
      type_mismatches: 10,
    });
    // …with its numbers' range, moments and quantiles, as a CSV file's column (and the Spark driver).
    const codes = rows.map((r) => Number(r.code)).filter((v) => !Number.isNaN(v));
    const { mean: codeMean, stddev: codeSd } = meanStddev(codes);
    expect(code).toMatchObject({ min: Math.min(...codes), max: Math.max(...codes) });
    closeTo(code.mean, codeMean);
    closeTo(code.stddev, codeSd);
    expect(code.quantiles).toHaveLength(QUANTILE_POINTS.length);
    expect(code.quantiles![0]).toBe(Math.min(...codes));
    expect(code.mean_length).toBeUndefined();
    // A floating column's whole values are integer values, as the file profiler counts them.
    expect(attr(p, "score").type_counts).toEqual({ integer: ROWS / 2, number: ROWS / 2 });
    expect(code.top_values[0]).toEqual({ value: "n/a", count: 10 });
    expect(code.top_values).toHaveLength(20);

    expect(attr(p, "country").top_values).toEqual([
      { value: "DE", count: 20 },
      { value: "FR", count: 20 },
      { value: "US", count: 20 },
    ]);
    expect(attr(p, "country").patterns).toEqual([{ pattern: "A", share: 1 }]);

    const created = attr(p, "created_at");
    expect(created).toMatchObject({ inferred_type: "timestamp", min: iso(0), max: iso(ROWS - 1), distinct: ROWS });
    expect(created.patterns).toEqual([{ pattern: "9-9-9 9:9:9", share: 1 }]);

    const active = attr(p, "active");
    const [yes, no] = db === "postgres" ? ["true", "false"] : ["1", "0"];
    expect(active).toMatchObject({ inferred_type: "boolean", distinct: 2, type_counts: { boolean: ROWS } });
    expect(active.top_values).toEqual([
      { value: no, count: 45 },
      { value: yes, count: 15 },
    ]);
  });

  it("profiles each segment and honours the filter", async () => {
    const p = await profileTable(runner, table, schema, {
      filter: { active: [db === "postgres" ? "false" : 0] },
      segments: { country: ["US", "DE"] },
    });
    const kept = rows.filter((r) => !r.active);
    expect(p.row_count).toBe(kept.length);
    expect(p.segments?.map((s) => [s.attribute, s.value])).toEqual([
      ["country", "US"],
      ["country", "DE"],
      ["country", "(other)"],
    ]);
    const rest = kept.filter((r) => r.country !== "US" && r.country !== "DE");
    expect(rest.length).toBeGreaterThan(0);
    for (const s of p.segments!) {
      const other = s.value === "(other)";
      const seg = other ? rest : kept.filter((r) => r.country === s.value);
      expect(s.profile.row_count).toBe(seg.length);
      expect(attr(s.profile, "email").nulls).toBe(seg.filter((r) => r.email === null).length);
      const amounts = seg.map((r) => r.amount).filter((v): v is number => v !== null);
      closeTo(attr(s.profile, "amount").mean, meanStddev(amounts).mean);
      if (!other) expect(attr(s.profile, "country").top_values).toEqual([{ value: s.value, count: seg.length }]);
    }
  });

  it("reads only the newest rows with limit, and only new rows with delta_only", async () => {
    const limited = await profileTable(runner, table, schema, { limit: 10, timestamp_attribute: "created_at" });
    expect(limited.row_count).toBe(10);
    expect(limited.sampled).toBe(true);
    expect(attr(limited, "created_at").min).toBe(iso(ROWS - 10));
    expect(attr(limited, "id").count).toBe(10);

    const delta = await profileTable(runner, table, schema, {
      timestamp_attribute: "created_at",
      delta_only: true,
      last_max_timestamp: iso(49),
    });
    expect(delta.row_count).toBe(10);
    expect(delta.sampled).toBe(false);
    expect(delta.freshness).toBe(iso(ROWS - 1));
    expect(attr(delta, "created_at").min).toBe(iso(50));
  });

  it("samples a fraction of the rows, the same rows in every query", async () => {
    const p = await profileTable(runner, table, schema, { sample_fraction: 50, id_attributes: ["id"] });
    expect(p.sampled).toBe(true);
    // 60 Bernoulli(0.5) draws: outside 10-50 has a probability below 1e-7.
    expect(p.row_count).toBeGreaterThanOrEqual(10);
    expect(p.row_count).toBeLessThanOrEqual(50);
    for (const a of p.attributes) {
      expect(a.count).toBe(p.row_count);
      expect(a.top_values.reduce((n, v) => n + v.count, 0)).toBeLessThanOrEqual(p.row_count - a.nulls);
    }
    const country = attr(p, "country");
    expect(country.top_values.reduce((n, v) => n + v.count, 0)).toBe(p.row_count);
    await expect(profileTable(runner, table, schema, { sample_fraction: 0 })).rejects.toMatchObject({
      kind: "invalid",
    });
  });

  it("profiles an empty result without follow-up queries failing", async () => {
    const p = await profileTable(runner, table, schema, { filter: { country: ["XX"] } });
    expect(p.row_count).toBe(0);
    expect(attr(p, "amount")).toMatchObject({ count: 0, nulls: 0, distinct: 0, top_values: [], patterns: [] });
    expect(attr(p, "amount").quantiles).toBeUndefined();
  });

  it("reads the same columns from the data (a zero-row query) when use_information_schema is false", async () => {
    const fromData = await loadSchema(runner, table, FROM_DATA);
    expect(fromData.map((f) => f.name)).toEqual([...COLUMNS]);
    expect(fromData.map((f) => columnKind(f.type))).toEqual(schema.map((f) => columnKind(f.type)));
    // The driver's metadata names the types as information_schema does (PostgreSQL) or by their base
    // type (MariaDB: no length or precision).
    if (db === "postgres") expect(fromData.map((f) => f.type)).toEqual(schema.map((f) => f.type));
    // And it profiles alike.
    const a = await profileTable(runner, table, fromData);
    const b = await profileTable(runner, table, schema);
    expect(a.attributes.map((x) => [x.name, x.inferred_type])).toEqual(
      b.attributes.map((x) => [x.name, x.inferred_type]),
    );
  });

  it("reports an unknown table as not_found", async () => {
    const missing = { schema: DATABASES[db].schema, name: `${name}_missing` };
    await expect(loadSchema(runner, missing, CATALOG)).rejects.toMatchObject({ kind: "not_found" });
    await expect(loadSchema(runner, missing, FROM_DATA)).rejects.toMatchObject({ kind: "not_found" });
    const err = await profileTable(runner, missing, schema).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorError);
    expect(err).toMatchObject({ kind: "not_found" });
  });
});

describe.each(["postgres", "mysql"] as const)("whole-row duplicates on %s", (db: TestDatabase) => {
  const name = uniqueTable("dq_sql_rows");
  const table: TableRef = { schema: DATABASES[db].schema, name };
  const quoted = db === "postgres" ? `"${name}"` : `\`${name}\``;
  let runner: SqlRunner;
  let schema: SchemaField[];

  beforeAll(async () => {
    runner = await runnerFor(db);
    // `doc` is of kind "other": PostgreSQL's json has no equality, so it is grouped as text.
    await runner.query(
      db === "postgres"
        ? `CREATE TABLE ${quoted} (k integer, label varchar(10), price numeric(10,2), doc json)`
        : `CREATE TABLE ${quoted} (k INT, label VARCHAR(10), price DECIMAL(10,2), doc VARBINARY(20))`,
    );
    await runner.query(
      `INSERT INTO ${quoted} (k, label, price, doc) VALUES
        (1, 'a', 1.50, '{"x":1}'), (1, 'a', 1.50, '{"x":1}'), (1, 'a', 1.50, '{"x":2}'),
        (NULL, NULL, NULL, NULL), (NULL, NULL, NULL, NULL),
        (2, NULL, 2.00, NULL), (2, NULL, 2.00, NULL), (2, NULL, 2.00, NULL), (2, 'b', 2.00, NULL)`,
    );
    schema = await loadSchema(runner, table, CATALOG);
  });

  afterAll(async () => {
    if (!runner) return;
    await runner.query(`DROP TABLE IF EXISTS ${quoted}`);
    await runner.close();
  });

  it("counts rows repeating an earlier one, null equal to null, with or without id_attributes", async () => {
    expect(schema.find((f) => f.name === "doc")?.type).toBe(db === "postgres" ? "json" : "varbinary(20)");
    const p = await profileTable(runner, table, schema);
    expect(p.row_count).toBe(9);
    expect(p.duplicate_rows).toBe(4);
    expect(p.duplicate_count).toBeUndefined();
    const withIds = await profileTable(runner, table, schema, { id_attributes: ["k"] });
    expect(withIds).toMatchObject({ duplicate_rows: 4, duplicate_count: 6 });
  });

  it("counts over the rows profiled: filtered, per segment", async () => {
    const p = await profileTable(runner, table, schema, { filter: { k: [2] }, segments: { label: ["a", null] } });
    expect(p).toMatchObject({ row_count: 4, duplicate_rows: 2 });
    expect(p.segments?.map((s) => [s.value, s.profile.row_count, s.profile.duplicate_rows])).toEqual([
      ["a", 0, 0],
      ["null", 3, 2],
      ["(other)", 1, 0],
    ]);
  });
});

describe.each(["postgres", "mysql"] as const)("text read as dates and times on %s", (db: TestDatabase) => {
  const name = uniqueTable("dq_sql_times");
  const table: TableRef = { schema: DATABASES[db].schema, name };
  const quoted = db === "postgres" ? `"${name}"` : `\`${name}\``;
  let runner: SqlRunner;

  beforeAll(async () => {
    runner = await runnerFor(db);
    await runner.query(`CREATE TABLE ${quoted} (shipped varchar(32), due varchar(32))`);
    // Times as a space, a "T" and a date alone; "n/a" and a blank, which a text min/max would pick.
    await runner.query(
      `INSERT INTO ${quoted} (shipped, due) VALUES
        ('2024-03-05 10:00:00', '2024-02-29'), ('2024-03-05T09:30:00', '2024-03-01'),
        ('2024-01-31', '2023-12-31'), ('2024-03-05T23:59:59.250', 'n/a'),
        ('n/a', ' '), (' ', NULL), (NULL, '2024-01-15')`,
    );
  });

  afterAll(async () => {
    if (!runner) return;
    await runner.query(`DROP TABLE IF EXISTS ${quoted}`);
    await runner.close();
  });

  it("has its times' range as ISO text, as the file profiler and the Spark driver (not the text's)", async () => {
    const p = await profileTable(runner, table, await loadSchema(runner, table, CATALOG));
    expect(attr(p, "shipped")).toMatchObject({
      inferred_type: "timestamp",
      min: "2024-01-31T00:00:00.000Z",
      max: "2024-03-05T23:59:59.250Z",
      type_mismatches: 1,
    });
    expect(attr(p, "due")).toMatchObject({ inferred_type: "date", min: "2023-12-31", max: "2024-03-01" });
  });
});

/** The database's own exact percentiles (PERCENTILE_CONT) at QUANTILE_POINTS. */
async function databasePercentiles(runner: SqlRunner, db: TestDatabase, table: string, column: string) {
  const select = QUANTILE_POINTS.map((p, j) =>
    db === "postgres"
      ? `percentile_cont(${p}) WITHIN GROUP (ORDER BY "${column}") AS q${j}`
      : `PERCENTILE_CONT(${p}) WITHIN GROUP (ORDER BY \`${column}\`) OVER () AS q${j}`,
  ).join(", ");
  const sql =
    db === "postgres"
      ? `SELECT ${select} FROM "${table}"`
      : `SELECT DISTINCT ${select} FROM \`${table}\` WHERE \`${column}\` IS NOT NULL`;
  const [row] = await runner.query<Record<string, unknown>>(sql);
  return QUANTILE_POINTS.map((_, j) => Number(row![`q${j}`]));
}
