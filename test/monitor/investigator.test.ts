import { describe, expect, it } from "vitest";
import { corrupt } from "../../bench/detection/corruptions";
import { BIRD_COLUMNS, BIRD_SWAPS } from "../../bench/detection/tables";
import type { AssetProfile } from "../../src/contracts/profile";
import {
  investigateDuplicates,
  investigateMismatches,
  investigateMissing,
  investigatePatterns,
  investigateRowDrop,
  investigateShift,
  investigationSentence,
} from "../../src/detection/investigate";
import { attrMetric, meanByMetric, valuePrefix } from "../../src/detection/metrics";
import type { MetricHistory } from "../../src/detection/types";
import { MAX_BREAKDOWN_ATTRIBUTES, MAX_BREAKDOWN_VALUES } from "../../src/scan/profiler/breakdown";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { ReplayMonitor } from "../detection/fixtures";
import { DATABASES, runnerFor, uniqueTable } from "../scan/sql/support/databases";
import { admin, call } from "../support/api";
import { csvAsset } from "../support/assets";
import { BIRDSTRIKES, birdstrikeYears, profileBirdstrikes } from "../support/birdstrikes";
import { createProject } from "../support/projects";
import { prng } from "../support/random";
import { scanJob, uploadCsv } from "../support/scans";
import { createTenant } from "../support/tenants";

const COUNTRIES = ["FR", "DE", "US", "GB", "ES", "IT"];

/**
 * ~1,200 orders; `missingIn(country, rand)` says which rows lose their e-mail, `scale(country)`
 * multiplies the amounts of a country's orders.
 */
function batch(
  seed: number,
  missingIn: (country: string, rand: () => number) => boolean = () => false,
  scale: (country: string) => number = () => 1,
): string {
  const rand = prng(seed);
  const lines = ["id,email,amount,country,channel"];
  for (let i = 0; i < 1200; i++) {
    const country = COUNTRIES[Math.floor(rand() * COUNTRIES.length)]!;
    const channel = rand() < 0.5 ? "web" : "store";
    const email = missingIn(country, rand) ? "" : `user${seed}-${i}@example.com`;
    const amount = (10 + rand() * 90) * scale(country);
    lines.push(`${seed * 10_000 + i},${email},${amount.toFixed(2)},${country},${channel}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The German orders' amounts tripled; every other country as usual. */
const germanAmountsTripled = (seed: number) => batch(seed, undefined, (country) => (country === "DE" ? 3 : 1));

/** The first alert of a scan on `attribute` by one of `policies`, with its investigation. */
async function alertOf(tenant: string, assetId: number, jobId: string, policies: string[], attribute: string) {
  const res = await call("POST", `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${jobId}`, {
    as: admin,
  });
  expect(res.status).toBe(200);
  const alert = res.body.find(
    (a: { type: string; attribute: string }) => policies.includes(a.type) && a.attribute === attribute,
  );
  expect(alert, JSON.stringify(res.body)).toBeDefined();
  return alert;
}

/** A quantity alert's investigation names country = DE, and only what moved. */
function expectGermanShift(alert: { description: string; details: { investigation: Array<Record<string, unknown>> } }) {
  const [top] = alert.details.investigation;
  expect(top).toMatchObject({ attribute: "country", value: "DE" });
  expect(top!.lift).toBeGreaterThan(3);
  expect(alert.details.investigation.map((e) => e.attribute)).not.toContain("channel");
  expect(alert.description).toMatch(/of the move of amount comes from country = DE, which holds/);
}

/** Rows through the profiler with the breakdown on. */
function profileOf(csvRows: Array<Record<string, unknown>>): AssetProfile {
  const builder = new ProfileBuilder({ breakdown: true, inferFromText: false });
  builder.add(csvRows);
  return builder.finish();
}

describe("the breakdown a file scan collects", () => {
  it("counts rows and missing values per value of low-cardinality attributes, and drops the others", () => {
    const rows = Array.from({ length: 100 }, (_, i) => ({
      id: String(i),
      country: i % 4 === 0 ? "DE" : "FR",
      email: i % 4 === 0 && i < 40 ? null : `u${i}@x.io`,
      note: "",
    }));
    const profile = profileOf(rows);
    // id has 100 values (dropped), note is always empty (no value), email is unique: only country splits.
    expect(profile.breakdown).toEqual([
      {
        attribute: "country",
        rows: 100,
        missing: { email: 10, note: 100 },
        values: [
          { value: "DE", rows: 25, missing: { email: 10, note: 25 } },
          { value: "FR", rows: 75, missing: { note: 75 } },
        ],
      },
    ]);
  });

  it("holds at most its caps of attributes and values", () => {
    const rows = Array.from({ length: 500 }, (_, i) => {
      const row: Record<string, unknown> = {};
      for (let a = 0; a < MAX_BREAKDOWN_ATTRIBUTES + 5; a++) row[`a${a}`] = String(i % 3);
      row.wide = String(i % (MAX_BREAKDOWN_VALUES + 1));
      return row;
    });
    const out = profileOf(rows).breakdown ?? [];
    expect(out).toHaveLength(MAX_BREAKDOWN_ATTRIBUTES);
    expect(out.map((x) => x.attribute)).not.toContain("wide");
  });
});

describe("investigateMissing", () => {
  it("names the value the missing values concentrate in, with its shares and lift", () => {
    const rand = prng(7);
    const rows = Array.from({ length: 3000 }, (_, i) => {
      const country = COUNTRIES[i % 6]!;
      return { country, email: (country === "DE" ? rand() < 0.9 : rand() < 0.02) ? null : `u${i}@x.io` };
    });
    const entries = investigateMissing(profileOf(rows), "email");
    expect(entries[0]).toMatchObject({ attribute: "country", value: "DE", rows: 500 });
    expect(entries[0]!.lift).toBeGreaterThan(3);
    expect(entries[0]!.share_of_problem).toBeGreaterThan(0.7);
    expect(entries[0]!.share_of_rows).toBeCloseTo(1 / 6, 3);
    expect(entries).toHaveLength(1);
    expect(investigationSentence(entries, "missing values of email")).toMatch(
      /^\d+(\.\d)? % of the missing values of email come from country = DE, which holds 16\.7 % of the rows \(lift \d/,
    );
  });

  it("names nothing when the missing values are spread as the rows are", () => {
    const rand = prng(8);
    const rows = Array.from({ length: 3000 }, (_, i) => ({
      country: COUNTRIES[i % 6]!,
      email: rand() < 0.3 ? null : `u${i}@x.io`,
    }));
    expect(investigateMissing(profileOf(rows), "email")).toEqual([]);
  });
});

describe("investigateMismatches", () => {
  it("names the value whose rows hold the values of another type", () => {
    const rand = prng(9);
    // Quantities as CSV gives them (text, types inferred); German rows write one in three as words.
    const rows = Array.from({ length: 3000 }, (_, i) => {
      const country = COUNTRIES[i % 6]!;
      const words = country === "DE" ? rand() < 0.3 : rand() < 0.005;
      return { country, quantity: words ? "twelve" : String(1 + Math.floor(rand() * 50)) };
    });
    const builder = new ProfileBuilder({ breakdown: true });
    builder.add(rows);
    const profile = builder.finish();
    const quantity = profile.attributes.find((a) => a.name === "quantity")!;
    expect(quantity.inferred_type).toBe("integer");
    const byCountry = profile.breakdown!.find((b) => b.attribute === "country")!;
    // The breakdown's counts add up to the profile's.
    expect(byCountry.mismatched?.quantity).toBe(quantity.type_mismatches);
    const entries = investigateMismatches(profile, "quantity");
    expect(entries[0]).toMatchObject({ attribute: "country", value: "DE", rows: 500 });
    expect(entries[0]!.lift).toBeGreaterThan(3);
    expect(entries).toHaveLength(1);
  });

  it("counts a whole scan of another type than its first batch, exactly", () => {
    // The first batch is all words, the rest numbers: the home type is text, the judged type integer.
    const builder = new ProfileBuilder({ breakdown: true });
    builder.add(Array.from({ length: 100 }, (_, i) => ({ country: COUNTRIES[i % 2]!, quantity: "n/a" })));
    builder.add(Array.from({ length: 900 }, (_, i) => ({ country: COUNTRIES[i % 2]!, quantity: String(i) })));
    const profile = builder.finish();
    const byCountry = profile.breakdown!.find((b) => b.attribute === "country")!;
    expect(profile.attributes.find((a) => a.name === "quantity")!.type_mismatches).toBe(100);
    expect(byCountry.values.map((v) => [v.value, v.mismatched?.quantity])).toEqual([
      ["FR", 50],
      ["DE", 50],
    ]);
  });
});

describe("investigatePatterns", () => {
  it("names the value whose rows hold the new pattern, and leaves free text alone", () => {
    const rand = prng(11);
    // Product codes "AB-1234"; German rows write one in three as "ab1234". Notes are free text.
    const rows = Array.from({ length: 3000 }, (_, i) => {
      const country = COUNTRIES[i % 6]!;
      const n = 1000 + Math.floor(rand() * 9000);
      const sku = (country === "DE" ? rand() < 0.3 : rand() < 0.005) ? `ab${n}` : `AB-${n}`;
      return { country, sku, note: `${"word ".repeat(1 + (i % 12))}${i % 7 === 0 ? "x1" : "Y"}` };
    });
    const builder = new ProfileBuilder({ breakdown: true });
    // Batches of 1,000 mostly distinct codes: the profile samples their patterns (1 in 8), the
    // breakdown's shape counts are estimates as the profile's shares are.
    for (let i = 0; i < rows.length; i += 1000) builder.add(rows.slice(i, i + 1000));
    const profile = builder.finish();
    const de = profile.breakdown!.find((b) => b.attribute === "country")!.values.find((v) => v.value === "DE")!;
    const sku = de.shapes?.sku ?? {};
    expect((sku["A-9"] ?? 0) + (sku.a9 ?? 0)).toBe(500);
    expect(de.shapes?.note).toBeUndefined();
    const entries = investigatePatterns(profile, "sku", ["a9"]);
    expect(entries[0]).toMatchObject({ attribute: "country", value: "DE", rows: 500 });
    expect(entries[0]!.lift).toBeGreaterThan(3);
    expect(entries).toHaveLength(1);
  });
});

describe("investigateDuplicates", () => {
  it("names the value whose rows repeat earlier rows, whole or by id", () => {
    const rand = prng(10);
    const rows: Array<Record<string, unknown>> = Array.from({ length: 3000 }, (_, i) => ({
      id: String(i),
      country: COUNTRIES[i % 6]!,
      amount: String(Math.floor(rand() * 1000)),
    }));
    // 200 German rows loaded twice, 10 others once more.
    const german = rows.filter((r) => r.country === "DE").slice(0, 200);
    const copies = [...german, ...rows.filter((r) => r.country !== "DE").slice(0, 10)].map((r) => ({ ...r }));
    const builder = new ProfileBuilder({ breakdown: true, idAttributes: ["id"] });
    for (let i = 0; i < rows.length; i += 1000) builder.add(rows.slice(i, i + 1000));
    builder.add(copies);
    const profile = builder.finish();
    expect(profile.duplicate_rows).toBe(210);
    expect(profile.duplicate_count).toBe(210);
    for (const kind of ["duplicate_rows", "duplicate_ids"] as const) {
      const entries = investigateDuplicates(profile, kind);
      expect(entries[0]).toMatchObject({ attribute: "country", value: "DE", problem_rows: 200 });
      expect(entries[0]!.lift).toBeGreaterThan(3);
    }
  });
});

describe("investigateShift", () => {
  /** Six past scans with each country's mean amount at 55 (± a little); now `now` per country. */
  function shift(now: Record<string, number>) {
    const history: MetricHistory = {};
    for (let j = 1; j <= 6; j++) {
      for (const c of COUNTRIES) {
        history[meanByMetric("amount", "country", c)] = [
          ...(history[meanByMetric("amount", "country", c)] ?? []),
          { job_id: `j${j}`, time: `2026-11-0${j}T00:00:00.000Z`, value: 55 + (j % 3) - 1, excluded: false },
        ];
      }
    }
    const profile = {
      row_count: 1200,
      schema: [],
      sampled: false,
      attributes: [],
      breakdown: [
        {
          attribute: "country",
          rows: 1200,
          missing: {},
          values: Object.entries(now).map(([value, mean]) => ({
            value,
            rows: 200,
            missing: {},
            // Amounts uniform on 10..100 (variance 675), the mean moved.
            numeric: { amount: { count: 200, mean, variance: 675 } },
          })),
        },
      ],
    } as unknown as AssetProfile;
    return investigateShift(profile, history, "now", "amount");
  }

  it("names the value whose mean moved", () => {
    const entries = shift({ FR: 56, DE: 165, US: 54, GB: 55.5, ES: 53, IT: 57 });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ attribute: "country", value: "DE", rows: 200, problem_rows: 200 });
    expect(entries[0]!.share_of_problem).toBeGreaterThan(0.9);
    expect(entries[0]!.lift).toBeGreaterThan(5);
  });

  it("names nothing when every value moved alike, or none beyond its noise", () => {
    expect(shift({ FR: 80, DE: 81, US: 79, GB: 80, ES: 82, IT: 80 })).toEqual([]);
    expect(shift({ FR: 57, DE: 60, US: 54, GB: 55, ES: 52, IT: 56 })).toEqual([]);
  });
});

describe("investigateShift on a real table (birdstrikes, one batch a year)", { timeout: 60_000 }, () => {
  const table = { columns: BIRD_COLUMNS, swapPairs: BIRD_SWAPS };
  const SPEED = BIRD_COLUMNS.findIndex((c) => c.name === "speed");
  const PHASE = BIRD_COLUMNS.findIndex((c) => c.name === "phase");

  /** Trained on 1990–1997; the 1998 batch to corrupt, and what the investigator says of speed in it. */
  async function trained() {
    const years = birdstrikeYears();
    const monitor = new ReplayMonitor(BIRDSTRIKES);
    for (const year of years.slice(0, 8)) monitor.judge(await profileBirdstrikes(year.rows));
    const where = async (rows: string[][]) =>
      investigateShift(await profileBirdstrikes(rows), monitor.history, "now", "speed");
    return { rows: years[8]!.rows, where };
  }

  /** Mean speed by phase of flight in some rows. */
  function meanSpeeds(rows: string[][]): Map<string, number> {
    const sums = new Map<string, [number, number]>();
    for (const r of rows) {
      if (r[SPEED] === "") continue;
      const [s, n] = sums.get(r[PHASE]!) ?? [0, 0];
      sums.set(r[PHASE]!, [s + Number(r[SPEED]), n + 1]);
    }
    return new Map([...sums].filter(([, [, n]]) => n >= 20).map(([phase, [s, n]]) => [phase, s / n]));
  }

  it("names no phase for speed × 100 on 2 % of the rows chosen at random, though phases differ in speed", async () => {
    const { rows, where } = await trained();
    // The faster phases carry most of any move by a factor: descending aircraft fly twice as fast as rolling ones.
    const speeds = [...meanSpeeds(rows).values()];
    expect(Math.max(...speeds) / Math.min(...speeds)).toBeGreaterThan(1.8);
    for (let seed = 1; seed <= 10; seed++) {
      const corrupted = corrupt(table, rows, "scale_x100", "speed", 0.02, `investigate-random-${seed}`);
      expect(await where(corrupted), `seed ${seed}`).toEqual([]);
    }
  });

  it("names the phase when the × 100 is on a tenth of its rows only", async () => {
    const { rows, where } = await trained();
    for (const phase of ["Climb", "Approach"]) {
      const rand = prng(phase.length);
      const corrupted = rows.map((r) =>
        r[PHASE] === phase && r[SPEED] !== "" && rand() < 0.1 ? r.with(SPEED, String(Number(r[SPEED]) * 100)) : r,
      );
      const [top] = await where(corrupted);
      expect(top, phase).toMatchObject({ attribute: "phase", value: phase });
      expect(top!.share_of_problem).toBeGreaterThan(1.5 * Math.max(top!.share_of_rows, top!.share_of_metric!));
    }
  });
});

describe("investigateRowDrop", () => {
  /** Five past scans of 1,200 rows, 200 per country; now `now` rows per country. */
  function drop(now: Record<string, number>) {
    const history: MetricHistory = { [attrMetric("country", "non_null")]: [] };
    for (let j = 1; j <= 5; j++) {
      const point = (value: number) => ({
        job_id: `j${j}`,
        time: `2026-11-0${j}T00:00:00.000Z`,
        value,
        excluded: false,
      });
      history[attrMetric("country", "non_null")]!.push(point(1200));
      for (const c of COUNTRIES) {
        const metric = `${valuePrefix("country")}${c}`;
        history[metric] = [...(history[metric] ?? []), point(1 / 6)];
      }
    }
    const rows = Object.values(now).reduce((a, b) => a + b, 0);
    const profile = {
      row_count: rows,
      schema: [],
      sampled: false,
      attributes: [
        {
          name: "country",
          count: rows,
          nulls: 0,
          empties: 0,
          distinct: COUNTRIES.length,
          distinct_exact: true,
          inferred_type: "string",
          top_values: Object.entries(now).map(([value, count]) => ({ value, count })),
          type_counts: {},
          type_mismatches: 0,
          patterns: [],
        },
      ],
    } as unknown as AssetProfile;
    return investigateRowDrop(profile, history, "now");
  }

  it("names the value that lost the rows", () => {
    const entries = drop({ FR: 200, DE: 20, US: 200, GB: 198, ES: 200, IT: 201 });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ attribute: "country", value: "DE", rows: 200, problem_rows: 180 });
    expect(entries[0]!.lift).toBeGreaterThan(5);
  });

  it("names nothing when every value lost its share", () => {
    expect(drop({ FR: 120, DE: 121, US: 119, GB: 120, ES: 122, IT: 118 })).toEqual([]);
  });
});

describe("the investigator through an upload", { timeout: 60_000 }, () => {
  async function alertsAfter(options: Record<string, unknown>) {
    const { tenant, asset } = await csvAsset({}, { options });
    for (let i = 1; i <= 5; i++) {
      expect((await scanJob(tenant, asset.id, await uploadCsv(tenant, asset.id, batch(i)))).status).toBe("SUCCEEDED");
    }
    // Nine in ten German orders lose their e-mail, one in fifty elsewhere.
    const broken = batch(6, (country, rand) => (country === "DE" ? rand() < 0.9 : rand() < 0.02));
    const jobId = await uploadCsv(tenant, asset.id, broken);
    expect((await scanJob(tenant, asset.id, jobId)).status).toBe("SUCCEEDED");
    const res = await call("POST", `/api/backend/${tenant}/configuration/sources/${asset.id}/alerts?job_id=${jobId}`, {
      as: admin,
    });
    expect(res.status).toBe(200);
    const alert = res.body.find((a: { type: string }) => a.type === "completeness");
    expect(alert, JSON.stringify(res.body)).toBeDefined();
    return { tenant, alert };
  }

  it("says that the missing e-mails come from country = DE", async () => {
    const { tenant, alert } = await alertsAfter({});
    expect(alert.attribute).toBe("email");
    const [top] = alert.details.investigation;
    expect(top).toMatchObject({ attribute: "country", value: "DE" });
    expect(top.lift).toBeGreaterThan(3);
    expect(alert.details.investigation.map((e: { attribute: string }) => e.attribute)).not.toContain("channel");
    expect(alert.description).toMatch(/of the missing values of email come from country = DE, which holds/);
    // The incident's detail shows it beside the alert's observed and expected.
    const list = await call("GET", `/api/backend/${tenant}/incidents`, { as: admin });
    const incident = list.body.find((i: { alert_policy_id: string }) => i.alert_policy_id === "completeness");
    expect(incident, JSON.stringify(list.body)).toBeDefined();
    const detail = await call("GET", `/api/backend/${tenant}/incidents/${incident.id}`, { as: admin });
    expect(detail.body.metrics.at(-1).investigation[0]).toMatchObject({ attribute: "country", value: "DE" });
  });

  it("stays silent with skip_investigator: 'true'", async () => {
    const { alert } = await alertsAfter({ skip_investigator: "true" });
    expect(alert.details.investigation).toBeUndefined();
    expect(alert.description).not.toMatch(/come from/);
  });
});

describe("the investigator on a row-count drop", { timeout: 90_000 }, () => {
  it("says which value lost the rows, from the category shares in the history", async () => {
    const { tenant, asset } = await csvAsset();
    // The row-count baseline needs 7 scans (min_history).
    for (let i = 1; i <= 8; i++) {
      expect((await scanJob(tenant, asset.id, await uploadCsv(tenant, asset.id, batch(i)))).status).toBe("SUCCEEDED");
    }
    // Nine in ten German orders are missing from the batch; every other country is whole.
    const rand = prng(99);
    const lines = batch(9).trim().split("\n");
    const kept = [lines[0], ...lines.slice(1).filter((l) => !(l.split(",")[3] === "DE" && rand() < 0.9))];
    const jobId = await uploadCsv(tenant, asset.id, `${kept.join("\n")}\n`);
    expect((await scanJob(tenant, asset.id, jobId)).status).toBe("SUCCEEDED");
    const res = await call("POST", `/api/backend/${tenant}/configuration/sources/${asset.id}/alerts?job_id=${jobId}`, {
      as: admin,
    });
    const alert = res.body.find((a: { type: string }) => a.type === "row_count_anomaly");
    expect(alert, JSON.stringify(res.body)).toBeDefined();
    const [top] = alert.details.investigation;
    expect(top).toMatchObject({ attribute: "country", value: "DE" });
    expect(top.lift).toBeGreaterThan(3);
    expect(top.problem_rows).toBeGreaterThan(150);
    expect(alert.details.investigation.map((e: { attribute: string }) => e.attribute)).not.toContain("channel");
    expect(alert.description).toMatch(/of the rows lost come from country = DE/);
  });
});

describe("the investigator on a quantity shift, through an upload", { timeout: 120_000 }, () => {
  it("says that the amounts moved in country = DE", async () => {
    const { tenant, asset } = await csvAsset();
    // value_range's band needs 7 scans (min_history).
    for (let i = 1; i <= 8; i++) {
      expect((await scanJob(tenant, asset.id, await uploadCsv(tenant, asset.id, batch(i)))).status).toBe("SUCCEEDED");
    }
    const jobId = await uploadCsv(tenant, asset.id, germanAmountsTripled(9));
    expect((await scanJob(tenant, asset.id, jobId)).status).toBe("SUCCEEDED");
    expectGermanShift(await alertOf(tenant, asset.id, jobId, ["value_range", "distribution_drift"], "amount"));
  });
});

/** An orders table in PostgreSQL behind a GENERIC_JDBC asset; `scanOf(csv)` loads a batch into it and scans it. */
async function postgresOrders() {
  const runner = await runnerFor("postgres");
  const table = uniqueTable("dq_investigate");
  await runner.query(
    `CREATE TABLE ${table} (id BIGINT, email TEXT, amount DOUBLE PRECISION, country TEXT, channel TEXT)`,
  );
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const base = `/api/backend/${tenant}/configuration/projects/${projectId}`;
  const connection = await call("POST", `${base}/connections`, {
    as: admin,
    body: {
      name: "pg",
      type: "GENERIC_JDBC",
      payload: DATABASES.postgres.payload,
      credential: { type: "GENERIC_MAP", payload: DATABASES.postgres.credential },
    },
  });
  expect(connection.status, JSON.stringify(connection.body)).toBe(201);
  const created = await call("POST", `${base}/assets`, {
    as: admin,
    body: {
      name: "orders",
      type: "GENERIC_JDBC",
      payload: { schema: "public", table },
      connection_id: connection.body.id,
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id: number = created.body.id;
  const scanOf = async (csv: string) => {
    await runner.query(`DELETE FROM ${table}`);
    const rows = csv
      .trim()
      .split("\n")
      .slice(1)
      .map((l) => l.split(","));
    for (let i = 0; i < rows.length; i += 200) {
      const params: unknown[] = [];
      const tuples = rows.slice(i, i + 200).map((r) => {
        const marks = r.map((v, k) => {
          params.push(k === 1 && v === "" ? null : v);
          return `$${params.length}`;
        });
        return `(${marks.join(", ")})`;
      });
      await runner.query(
        `INSERT INTO ${table} (id, email, amount, country, channel) VALUES ${tuples.join(", ")}`,
        params,
      );
    }
    const res = await call("POST", `/api/backend/${tenant}/configuration/assets/${id}/scans`, { as: admin });
    expect(res.status).toBe(202);
    expect((await scanJob(tenant, id, res.body.job_id)).status).toBe("SUCCEEDED");
    return res.body.job_id as string;
  };
  const drop = async () => {
    await runner.query(`DROP TABLE IF EXISTS ${table}`);
    await runner.close();
  };
  return { tenant, id, scanOf, drop };
}

describe("the investigator through PostgreSQL (SQL pushdown)", { timeout: 180_000 }, () => {
  it("says that the missing e-mails come from country = DE", async () => {
    const pg = await postgresOrders();
    try {
      for (let i = 1; i <= 5; i++) await pg.scanOf(batch(i));
      const jobId = await pg.scanOf(batch(6, (country, rand) => (country === "DE" ? rand() < 0.9 : rand() < 0.02)));
      const alert = await alertOf(pg.tenant, pg.id, jobId, ["completeness"], "email");
      expect(alert.details.investigation[0]).toMatchObject({ attribute: "country", value: "DE" });
      expect(alert.details.investigation[0].lift).toBeGreaterThan(3);
    } finally {
      await pg.drop();
    }
  });

  it("says that the amounts moved in country = DE", async () => {
    const pg = await postgresOrders();
    try {
      for (let i = 1; i <= 8; i++) await pg.scanOf(batch(i));
      const jobId = await pg.scanOf(germanAmountsTripled(9));
      expectGermanShift(await alertOf(pg.tenant, pg.id, jobId, ["value_range", "distribution_drift"], "amount"));
    } finally {
      await pg.drop();
    }
  });
});
