import { describe, expect, it } from "vitest";
import { type AssetProfile, type AttributeProfile, QUANTILE_POINTS } from "../../../src/contracts/profile";
import { ProfileBuilder, type ProfileBuilderOptions } from "../../../src/scan/profiler/profile-builder";
import { prng } from "../../support/random";

const people = [
  {
    id: "1",
    name: "Alice",
    email: "alice@example.com",
    age: "34",
    score: "4.5",
    active: "true",
    joined: "2024-01-02",
    updated: "2024-03-01T10:00:00Z",
    country: "DE",
  },
  {
    id: "2",
    name: "bob",
    email: "bob@example.com",
    age: "",
    score: "3",
    active: "false",
    joined: "2024-01-05",
    updated: "2024-03-02T11:30:00+01:00",
    country: "FR",
  },
  {
    id: "3",
    name: null,
    email: "not-an-email",
    age: "abc",
    score: "2.5e0",
    active: "true",
    joined: "2023-12-31",
    updated: "2024-02-28T00:00:00Z",
    country: "DE",
  },
  {
    id: "2",
    name: "Carol",
    email: "CAROL@EXAMPLE.COM",
    age: "41",
    score: null,
    active: "TRUE",
    joined: "",
    updated: null,
    country: "DE",
  },
  {
    id: "5",
    name: "  ",
    email: "dave@example.com",
    age: "29",
    score: "1",
    active: "false",
    joined: "2024-02-29",
    updated: "2024-03-02T09:00:00Z",
    country: "US",
  },
];

function attribute(profile: AssetProfile, name: string): AttributeProfile {
  const found = profile.attributes.find((a) => a.name === name);
  if (!found) throw new Error(`no attribute ${name}`);
  return found;
}

describe("ProfileBuilder on a hand-made table", () => {
  const builder = new ProfileBuilder({
    idAttributes: ["id"],
    timestampAttribute: "updated",
    segments: { country: ["DE", "US"] },
  });
  builder.add(people.slice(0, 2));
  builder.add(people.slice(2));
  const profile = builder.finish();

  it("reports asset-level metrics", () => {
    expect(profile.row_count).toBe(5);
    expect(profile.duplicate_count).toBe(1);
    expect(profile.duplicate_rows).toBe(0);
    expect(profile.freshness).toBe("2024-03-02T10:30:00.000Z");
    expect(profile.sampled).toBe(false);
    expect(profile.schema).toEqual([
      { name: "id", type: "integer", nullable: false },
      { name: "name", type: "string", nullable: true },
      { name: "email", type: "string", nullable: false },
      { name: "age", type: "integer", nullable: false },
      { name: "score", type: "number", nullable: true },
      { name: "active", type: "boolean", nullable: false },
      { name: "joined", type: "date", nullable: false },
      { name: "updated", type: "timestamp", nullable: true },
      { name: "country", type: "string", nullable: false },
    ]);
  });

  it("profiles a text attribute with nulls, blanks and patterns", () => {
    expect(attribute(profile, "name")).toEqual({
      name: "name",
      inferred_type: "string",
      count: 5,
      nulls: 1,
      empties: 1,
      distinct: 4,
      distinct_exact: true,
      min: "Alice",
      max: "bob",
      mean_length: 15 / 4,
      top_values: [
        { value: "  ", count: 1 },
        { value: "Alice", count: 1 },
        { value: "Carol", count: 1 },
        { value: "bob", count: 1 },
      ],
      type_counts: { string: 3 },
      type_mismatches: 0,
      patterns: [
        { pattern: "Aa", share: 2 / 3 },
        { pattern: "a", share: 1 / 3 },
      ],
    } satisfies AttributeProfile);
    expect(attribute(profile, "email").patterns).toEqual([
      { pattern: "a@a.a", share: 0.6 },
      { pattern: "A@A.A", share: 0.2 },
      { pattern: "a-a-a", share: 0.2 },
    ]);
  });

  it("profiles a numeric attribute with an empty and a mismatch", () => {
    const mean = (34 + 41 + 29) / 3;
    const stddev = Math.sqrt(((34 - mean) ** 2 + (41 - mean) ** 2 + (29 - mean) ** 2) / 2);
    const age = attribute(profile, "age");
    expect(age).toMatchObject({
      inferred_type: "integer",
      count: 5,
      nulls: 0,
      empties: 1,
      distinct: 5,
      type_counts: { integer: 3, string: 1 },
      type_mismatches: 1,
      min: 29,
      max: 41,
      quantiles: [29, 29, 29, 29, 29, 34, 41, 41, 41, 41, 41],
    });
    expect(age.step).toBe(1);
    expect(age.mean).toBeCloseTo(mean, 12);
    expect(age.stddev).toBeCloseTo(stddev, 12);
    expect(age.patterns).toEqual([
      { pattern: "9", share: 0.75 },
      { pattern: "a", share: 0.25 },
    ]);
    expect(attribute(profile, "score")).toMatchObject({
      inferred_type: "number",
      nulls: 1,
      type_counts: { number: 2, integer: 2 },
      type_mismatches: 0,
      min: 1,
      max: 4.5,
      mean: 2.75,
      // 4.5, 3, 2.5e0, 1: all on the 0.5 grid.
      step: 0.5,
    });
    expect(attribute(profile, "email").step).toBeUndefined();
  });

  it("profiles booleans, dates and timestamps", () => {
    expect(attribute(profile, "active")).toMatchObject({
      inferred_type: "boolean",
      type_counts: { boolean: 5 },
      min: "false",
      max: "true",
      distinct: 3,
      top_values: [
        { value: "false", count: 2 },
        { value: "true", count: 2 },
        { value: "TRUE", count: 1 },
      ],
    });
    expect(attribute(profile, "joined")).toMatchObject({
      inferred_type: "date",
      empties: 1,
      type_counts: { date: 4 },
      min: "2023-12-31",
      max: "2024-02-29",
      patterns: [{ pattern: "9-9-9", share: 1 }],
    });
    expect(attribute(profile, "updated")).toMatchObject({
      inferred_type: "timestamp",
      nulls: 1,
      type_counts: { timestamp: 4 },
      min: "2024-02-28T00:00:00.000Z",
      max: "2024-03-02T10:30:00.000Z",
    });
  });

  it("profiles each listed segment value on its own", () => {
    expect(profile.segments?.map((s) => [s.attribute, s.value, s.profile.row_count])).toEqual([
      ["country", "DE", 3],
      ["country", "US", 1],
      // The rest of the rows (other countries and none).
      ["country", "(other)", profile.row_count - 4],
    ]);
    expect(profile.row_count - 4).toBeGreaterThan(0);
    const de = profile.segments![0]!.profile;
    expect(de.duplicate_count).toBe(0);
    expect(de.duplicate_rows).toBeUndefined();
    expect(de.freshness).toBe("2024-03-01T10:00:00.000Z");
    expect(attribute(de, "age")).toMatchObject({ type_counts: { integer: 2, string: 1 }, min: 34, max: 41 });
    expect("segments" in de).toBe(false);
  });
});

describe("ProfileBuilder type inference", () => {
  it("infers types from CSV text and counts mismatches against the dominant type", () => {
    const builder = new ProfileBuilder();
    const values = ["42", "4.2e1", "7", "true", "2024-01-02", "2024-01-02T03:04:05Z", "abc"];
    builder.add(values.map((v) => ({ v })));
    expect(attribute(builder.finish(), "v")).toMatchObject({
      inferred_type: "number",
      type_counts: { integer: 2, number: 1, boolean: 1, date: 1, timestamp: 1, string: 1 },
      type_mismatches: 4,
      min: 7,
      max: 42,
    });
    expect(attribute(builder.finish(), "v").mean).toBeCloseTo(91 / 3, 12);
  });

  it("checks values against the declared schema when there is one", () => {
    const declaredSchema = [
      { name: "age", type: "INTEGER", nullable: true },
      { name: "code", type: "VARCHAR(10)", nullable: false },
      { name: "never", type: "DATE", nullable: true },
    ];
    const builder = new ProfileBuilder({ declaredSchema });
    builder.add([
      { age: "1", code: "123" },
      { age: "x", code: "AB" },
      { age: "2.5", code: "true" },
    ]);
    const profile = builder.finish();
    expect(profile.schema).toEqual(declaredSchema);
    expect(attribute(profile, "age")).toMatchObject({ declared_type: "INTEGER", type_mismatches: 2 });
    expect(attribute(profile, "code")).toMatchObject({ declared_type: "VARCHAR(10)", type_mismatches: 0 });
    expect(attribute(profile, "never")).toMatchObject({ inferred_type: "date", nulls: 3, count: 3 });
  });

  it("takes typed JSON and Parquet values as they are", () => {
    const builder = new ProfileBuilder({ inferFromText: false, timestampAttribute: "at" });
    builder.add([
      { n: 1, f: 1.5, b: true, big: 10n, at: new Date("2024-05-01T00:00:00Z"), s: "42", o: { a: 1 } },
      { n: 2, f: -2.25, b: false, big: -3n, at: new Date("2024-05-03T12:00:00Z"), s: "x", o: null },
      { n: 2, f: null, b: true, at: 1714694400, s: "", o: [1, 2] },
    ]);
    const profile = builder.finish();
    expect(profile.freshness).toBe("2024-05-03T12:00:00.000Z");
    expect(attribute(profile, "n")).toMatchObject({
      inferred_type: "integer",
      distinct: 2,
      top_values: [
        { value: "2", count: 2 },
        { value: "1", count: 1 },
      ],
    });
    expect(attribute(profile, "n").step).toBe(1);
    expect(attribute(profile, "f")).toMatchObject({ inferred_type: "number", min: -2.25, max: 1.5, step: 0.75 });
    expect(attribute(profile, "b")).toMatchObject({ inferred_type: "boolean", min: "false", max: "true" });
    expect(attribute(profile, "big")).toMatchObject({ inferred_type: "integer", nulls: 1, min: -3, max: 10, step: 1 });
    expect(attribute(profile, "at")).toMatchObject({
      inferred_type: "timestamp",
      type_counts: { timestamp: 2, integer: 1 },
      max: "2024-05-03T12:00:00.000Z",
    });
    expect(attribute(profile, "s")).toMatchObject({ inferred_type: "string", empties: 1, type_counts: { string: 2 } });
    expect(attribute(profile, "o")).toMatchObject({ inferred_type: "string", nulls: 1, min: "[1,2]" });
  });

  it("treats attributes missing from some rows as null there", () => {
    const builder = new ProfileBuilder();
    builder.add([{ a: "1" }, { a: "2" }]);
    builder.add([{ b: "x", a: "3" }, { a: "4" }]);
    const profile = builder.finish();
    expect(attribute(profile, "a")).toMatchObject({ count: 4, nulls: 0 });
    expect(attribute(profile, "b")).toMatchObject({ count: 4, nulls: 3 });
  });
});

describe("ProfileBuilder sampling and limit", () => {
  const rows = Array.from({ length: 10_000 }, (_, i) => ({ id: `id-${i}`, v: String(i % 97) }));

  it("samples the same rows on every run, by position or by id", () => {
    const run = (options: ProfileBuilderOptions, data: typeof rows) => {
      const builder = new ProfileBuilder(options);
      for (let i = 0; i < data.length; i += 1000) builder.add(data.slice(i, i + 1000));
      return builder.finish();
    };
    const first = run({ sampleFraction: 30 }, rows);
    expect(first.sampled).toBe(true);
    expect(first.row_count).toBeGreaterThan(2800);
    expect(first.row_count).toBeLessThan(3200);
    expect(run({ sampleFraction: 30 }, rows)).toEqual(first);
    const byId = run({ sampleFraction: 10, idAttributes: ["id"] }, rows);
    // By id the sample does not depend on the order the rows arrive in.
    expect(run({ sampleFraction: 10, idAttributes: ["id"] }, rows.slice().reverse())).toMatchObject({
      row_count: byId.row_count,
      attributes: [{ distinct: byId.attributes[0]!.distinct }, { type_counts: byId.attributes[1]!.type_counts }],
    });
    // Chunks sampled with their row offset pick the rows one pass picks.
    const chunkA = new ProfileBuilder({ sampleFraction: 30 });
    chunkA.add(rows.slice(0, 4000));
    const chunkB = new ProfileBuilder({ sampleFraction: 30, rowOffset: 4000 });
    chunkB.add(rows.slice(4000));
    expect(chunkA.finish().row_count + chunkB.finish().row_count).toBe(first.row_count);
  });

  it("stops at the limit and says the profile is sampled", () => {
    const builder = new ProfileBuilder({ limit: 100 });
    builder.add(rows.slice(0, 64));
    expect(builder.done).toBe(false);
    builder.add(rows.slice(64, 128));
    builder.add(rows.slice(128, 192));
    expect(builder.done).toBe(true);
    const profile = builder.finish();
    expect(profile.row_count).toBe(100);
    expect(profile.attributes[0]!.count).toBe(100);
    expect(profile.sampled).toBe(true);
    const exact = new ProfileBuilder({ limit: 100 });
    exact.add(rows.slice(0, 100));
    expect(exact.finish().sampled).toBe(false);
  });
});

/** A seeded table: duplicate ids, nulls, blanks, mixed types, high- and low-cardinality attributes. */
function generatedRows(n: number): Array<Record<string, unknown>> {
  const random = prng(2024);
  const categories = ["a", "b", "c", "d"];
  return Array.from({ length: n }, (_, i) => {
    const r = random();
    return {
      id: String(i % 15_000),
      category: categories[Math.floor(random() * 4)],
      amount: r < 0.05 ? null : r < 0.1 ? "" : (random() * 1000).toFixed(2),
      quantity: r < 0.02 ? "n/a" : String(Math.floor(random() * 50)),
      flag: random() < 0.5 ? "true" : "false",
      when: new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 1e10)).toISOString(),
      email: `user${Math.floor(random() * 9000)}@example.com`,
      code: `${String.fromCharCode(65 + Math.floor(random() * 26))}-${Math.floor(random() * 100)}`,
    };
  });
}

describe("ProfileBuilder on a generated table", () => {
  it("counts duplicates exactly and keeps sketched quantiles within 1 % rank", () => {
    const rows = generatedRows(40_000);
    const builder = new ProfileBuilder({ idAttributes: ["id"] });
    for (let i = 0; i < rows.length; i += 5000) builder.add(rows.slice(i, i + 5000));
    const whole = builder.finish();

    expect(whole.duplicate_count).toBe(25_000);
    expect(attribute(whole, "email").distinct_exact).toBe(false);
    for (const name of ["amount", "quantity"]) {
      const a = attribute(whole, name);
      // Quantiles are sketched: each one must sit within 1 % rank of the exact data.
      const sorted = rows
        .map((row) => (row[name] === "" || row[name] === null ? Number.NaN : Number(row[name])))
        .filter((x) => Number.isFinite(x))
        .sort((x, y) => x - y);
      QUANTILE_POINTS.forEach((p, k) => {
        const q = a.quantiles![k]!;
        const below = sorted.filter((x) => x < q).length / sorted.length;
        const upTo = sorted.filter((x) => x <= q).length / sorted.length;
        expect(Math.max(below - p, p - upTo, 0)).toBeLessThanOrEqual(0.01);
      });
    }
    // A sketched attribute still reports its full list of heavy hitters.
    expect(attribute(whole, "email").top_values.length).toBe(20);
    expect(attribute(whole, "amount").step).toBe(0.01);
    expect(attribute(whole, "quantity").step).toBe(1);
  });

  it("counts whole-row duplicates exactly, whatever the key order", () => {
    // Coarse values repeat whole rows by chance; copies in reversed key order repeat them on purpose.
    const coarse = generatedRows(20_000).map((row, i) => ({
      id: String(i % 5000),
      category: row.category,
      flag: row.flag,
      quantity: row.quantity,
    }));
    const copies = coarse.slice(0, 3000).map((row) => Object.fromEntries(Object.entries(row).reverse()));
    const rows: Array<Record<string, unknown>> = [...coarse, ...copies];
    const builder = new ProfileBuilder();
    for (let i = 0; i < rows.length; i += 4000) builder.add(rows.slice(i, i + 4000));
    const distinct = new Set(rows.map((r) => JSON.stringify([r.id, r.category, r.flag, r.quantity]))).size;
    expect(distinct).toBeLessThan(coarse.length);
    expect(builder.finish().duplicate_rows).toBe(rows.length - distinct);
  });

  it("lists every value with its exact count up to 256 values, the 20 most frequent beyond", () => {
    // Airports: 200 codes, the i-th seen i + 1 times; then 300 codes once more each.
    const codes = (n: number) => Array.from({ length: n }, (_, i) => `A${String(i).padStart(3, "0")}`);
    const airports = codes(200).flatMap((code, i) => Array.from({ length: i + 1 }, () => ({ origin: code })));
    const few = new ProfileBuilder();
    few.add(airports);
    const listed = attribute(few.finish(), "origin");
    expect(listed.distinct).toBe(200);
    expect(listed.top_values).toHaveLength(200);
    expect(listed.top_values.at(-1)).toEqual({ value: "A000", count: 1 });
    expect(listed.top_values.reduce((sum, t) => sum + t.count, 0)).toBe(airports.length);
    const many = new ProfileBuilder();
    many.add([...airports, ...codes(300).map((code) => ({ origin: `B${code}` }))]);
    const top = attribute(many.finish(), "origin");
    expect(top.distinct).toBe(500);
    expect(top.top_values).toHaveLength(20);
    expect(top.top_values[0]).toEqual({ value: "A199", count: 200 });
  });
});

describe("ProfileBuilder on mostly distinct text", () => {
  it("estimates pattern shares from a sample of the values, within 2.5 points", () => {
    const random = prng(17);
    const word = () =>
      Array.from({ length: 3 + Math.floor(random() * 6) }, () =>
        String.fromCharCode(97 + Math.floor(random() * 26)),
      ).join("");
    // Three shapes in known proportions (60 / 30 / 10 %), every value distinct.
    const values = Array.from({ length: 40_000 }, (_, i) => {
      const r = random();
      if (r < 0.6) return `${word()}.${word()}${i}@${word()}.test`;
      if (r < 0.9) return `${word().toUpperCase()}-${i}`;
      return `${word()} ${word()}`;
    });
    const exact = { "a.a9@a.a": 0, "A-9": 0, "a a": 0 } as Record<string, number>;
    for (const v of values) exact[v.includes("@") ? "a.a9@a.a" : v.includes("-") ? "A-9" : "a a"]!++;
    const builder = new ProfileBuilder();
    for (let start = 0; start < values.length; start += 2000) {
      builder.addColumns({ names: ["v"], columns: [values.slice(start, start + 2000)], length: 2000 });
    }
    // One value in 8 is shaped: 5,000 of 40,000, so a share's standard error is at most 0.7 points.
    const patterns = attribute(builder.finish(), "v").patterns;
    expect(patterns.map((p) => p.pattern).sort()).toEqual(Object.keys(exact).sort());
    for (const { pattern, share } of patterns) {
      expect(Math.abs(share - exact[pattern]! / values.length)).toBeLessThan(0.025);
    }
  });
});

describe("ProfileBuilder on column batches", () => {
  it("gives the profile that the same rows give, breakdown included", () => {
    const rows: Array<Record<string, unknown>> = generatedRows(12_000).map((row, i) => ({
      ...row,
      region: i % 7 === 0 ? "" : `r${i % 5}`,
    }));
    const names = Object.keys(rows[0]!);
    const options: ProfileBuilderOptions = { idAttributes: ["id"], timestampAttribute: "when", breakdown: true };
    const byRows = new ProfileBuilder(options);
    const byColumns = new ProfileBuilder(options);
    for (let start = 0; start < rows.length; start += 2500) {
      const batch = rows.slice(start, start + 2500);
      byRows.add(batch);
      byColumns.addColumns({
        names,
        columns: names.map((name) => batch.map((row) => row[name])),
        length: batch.length,
      });
    }
    const expected = byRows.finish();
    expect(expected.breakdown?.map((b) => b.attribute)).toEqual(["category", "flag", "region"]);
    expect(byColumns.finish()).toEqual(expected);
  });

  it("gives the same profile for numbers in typed arrays as in plain arrays (Parquet columns)", () => {
    const random = prng(9);
    const n = 6000;
    const amounts = Float64Array.from({ length: n }, (_, i) => (i % 17 === 0 ? i : Math.round(random() * 1e5) / 100));
    const counts = Int32Array.from({ length: n }, (_, i) => (i % 11) - 5);
    const options: ProfileBuilderOptions = { breakdown: true, idAttributes: ["amount"] };
    const typed = new ProfileBuilder(options);
    const plain = new ProfileBuilder(options);
    for (let start = 0; start < n; start += 2000) {
      const names = ["amount", "count"];
      const columns = [amounts.subarray(start, start + 2000), counts.subarray(start, start + 2000)];
      typed.addColumns({ names, columns, length: 2000 });
      plain.addColumns({ names, columns: columns.map((column) => Array.from(column)), length: 2000 });
    }
    const expected = plain.finish();
    expect(expected.attributes.map((a) => a.inferred_type)).toEqual(["number", "integer"]);
    expect(typed.finish()).toEqual(expected);
  });

  it("profiles a column of instants in epoch milliseconds as the Dates they stand for (Parquet timestamps)", () => {
    // "at" has 12 instants, so the breakdown follows it; "seen" is unique, with nulls and one
    // instant no Date holds (NaN); "at" is the id and the freshness attribute, "seen" a segment's rows.
    const n = 6000;
    const base = Date.UTC(2024, 0, 1);
    const at = Float64Array.from({ length: n }, (_, i) => base + (i % 12) * 3_600_000);
    const seen = Array.from({ length: n }, (_, i) => (i % 13 === 0 ? null : i === 77 ? Number.NaN : base + i * 1000));
    const kind = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? "a" : "b"));
    const asDates = (column: ArrayLike<number | null>) => Array.from(column, (v) => (v === null ? null : new Date(v)));
    for (const options of [
      { breakdown: true, idAttributes: ["at"], timestampAttribute: "at", topCapacity: 100 },
      { breakdown: true, sampleFraction: 50 },
      { segments: { kind: ["a"] } },
    ] satisfies ProfileBuilderOptions[]) {
      const instants = new ProfileBuilder(options);
      const dates = new ProfileBuilder(options);
      for (let start = 0; start < n; start += 2000) {
        const names = ["at", "seen", "kind"];
        const slice = { at: at.subarray(start, start + 2000), seen: seen.slice(start, start + 2000) };
        const k = kind.slice(start, start + 2000);
        instants.addColumns({
          names,
          columns: [slice.at, slice.seen, k],
          length: 2000,
          timestamps: [true, true, false],
        });
        dates.addColumns({ names, columns: [asDates(slice.at), asDates(slice.seen), k], length: 2000 });
      }
      const expected = dates.finish();
      const got = instants.finish();
      expect(got).toEqual(expected);
      expect(attribute(got, "at").inferred_type).toBe("timestamp");
      if (options.breakdown && !("sampleFraction" in options)) {
        expect(got.breakdown?.map((b) => b.attribute)).toContain("at");
        expect(attribute(got, "at").top_values[0]!.value).toMatch(/^2024-01-01T\d\d:00:00\.000Z$/);
        expect(got.freshness).toBe(new Date(base + 11 * 3_600_000).toISOString());
      }
    }
  });

  it("profiles dictionary-coded columns as their values (Parquet dictionary pages)", () => {
    // Text with a repeated entry and non-ASCII values; numbers with 0 and -0 as two entries and a
    // dictionary larger than a batch; nulls as code -1.
    const words = ["alpha", "beta", "gamma", "alpha", "ünïcode ✓", ""];
    const numbers = Float64Array.from({ length: 3000 }, (_, k) => (k === 0 ? 0 : k === 1 ? -0 : (k % 700) / 4));
    const random = prng(17);
    const n = 6000;
    const wordCodes = Int32Array.from({ length: n }, () => (random() < 0.1 ? -1 : Math.floor(random() * words.length)));
    const numberCodes = Int32Array.from({ length: n }, () =>
      random() < 0.05 ? -1 : Math.floor(random() * numbers.length),
    );
    const valuesOf = (codes: Int32Array, dictionary: ArrayLike<unknown>) =>
      Array.from(codes, (c) => (c < 0 ? null : dictionary[c]));
    const options: ProfileBuilderOptions = { breakdown: true, idAttributes: ["word", "number"], inferFromText: false };
    const coded = new ProfileBuilder(options);
    const plain = new ProfileBuilder(options);
    for (let start = 0; start < n; start += 2000) {
      const names = ["word", "number"];
      const codes = [wordCodes.subarray(start, start + 2000), numberCodes.subarray(start, start + 2000)];
      const columns = [valuesOf(codes[0]!, words), valuesOf(codes[1]!, numbers)];
      coded.addColumns({
        names,
        columns,
        length: 2000,
        dictionaries: [
          { codes: codes[0]!, dictionary: words },
          { codes: codes[1]!, dictionary: numbers },
        ],
      });
      plain.addColumns({ names, columns, length: 2000 });
    }
    const expected = plain.finish();
    expect(attribute(expected, "word").distinct).toBe(5);
    expect(coded.finish()).toEqual(expected);
  });

  it("samples and limits column batches as it does rows", () => {
    const rows = Array.from({ length: 5000 }, (_, i) => ({ v: String(i % 300), w: i % 3 === 0 ? null : i }));
    const columns = { names: ["v", "w"], columns: [rows.map((r) => r.v), rows.map((r) => r.w)], length: rows.length };
    for (const options of [{ sampleFraction: 20 }, { limit: 1234 }]) {
      const byRows = new ProfileBuilder(options);
      byRows.add(rows);
      const byColumns = new ProfileBuilder(options);
      byColumns.addColumns(columns);
      expect(byColumns.finish()).toEqual(byRows.finish());
    }
  });
});

describe("ProfileBuilder whole-row duplicates", () => {
  it("counts rows repeating an earlier row, in any key order, a missing key as null", () => {
    const builder = new ProfileBuilder();
    builder.add([
      { a: "1", b: "x", c: null },
      { b: "x", a: "1" }, // repeats the first: c missing is null
      { c: null, b: "x", a: "1" }, // repeats it again
      { a: "1", b: "x", c: "" }, // "" is not null
    ]);
    builder.add([
      { a: "1", b: "X" },
      { a: "x", b: "1" }, // the same values under other attributes
      { a: null, b: null },
      {}, // repeats the all-null row
      { a: "1", b: "X", c: undefined }, // repeats the fifth row
    ]);
    const profile = builder.finish();
    expect(profile.row_count).toBe(9);
    expect(profile.duplicate_rows).toBe(4);
    expect(profile.duplicate_count).toBeUndefined();
  });

  it("compares typed values by type, dates by instant and binary values by every byte", () => {
    const bytes = (last: number) => Uint8Array.from({ length: 100 }, (_, i) => (i === 99 ? last : i));
    const builder = new ProfileBuilder({ inferFromText: false });
    builder.add([
      { v: 1, at: new Date(0), bin: bytes(1) },
      { v: "1", at: new Date(0), bin: bytes(1) }, // a string is not the number
      { v: 1, at: 0, bin: bytes(1) }, // nor is a number the date
      { v: 1, at: new Date(0), bin: bytes(2) }, // the bytes differ past the 64 shown as text
      { bin: bytes(1), at: new Date(0), v: 1 }, // repeats the first
    ]);
    expect(builder.finish().duplicate_rows).toBe(1);
  });

  it("counts over the profiled rows only: sampled, limited, filtered", () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ v: String(i % 97) }));
    const sampled = new ProfileBuilder({ sampleFraction: 30 });
    sampled.add(rows);
    const profile = sampled.finish();
    expect(profile.duplicate_rows).toBe(profile.row_count - profile.attributes[0]!.distinct);
    const limited = new ProfileBuilder({ limit: 150 });
    limited.add(rows);
    expect(limited.finish().duplicate_rows).toBe(150 - 97);
  });

  it("leaves duplicate_rows out once the distinct rows pass the cap", () => {
    const rows = (n: number) => Array.from({ length: 1000 }, (_, i) => ({ v: String(i % n) }));
    const below = new ProfileBuilder({ maxDistinctRows: 100 });
    below.add(rows(100));
    expect(below.finish().duplicate_rows).toBe(900);
    const above = new ProfileBuilder({ maxDistinctRows: 100 });
    above.add(rows(101));
    const profile = above.finish();
    expect(profile.duplicate_rows).toBeUndefined();
    expect(profile.row_count).toBe(1000);
    expect(new ProfileBuilder({ maxDistinctRows: 0 }).finish().duplicate_rows).toBeUndefined();
  });
});
