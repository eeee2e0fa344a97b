import { describe, expect, it } from "vitest";
import {
  evaluate,
  POLICY_DEFAULTS,
  POLICY_IDS,
  PolicyOverridesSchema,
  resolvePolicies,
} from "../../../src/monitor/policies";
import type { AssetProfile, AttributeProfile } from "../../../src/scan/profile";
import { alertKeys, cleanOrders, ORDERS, ordersScan, runOrders } from "./fixtures";

const base = cleanOrders(8);
const attr = (p: AssetProfile, name: string) => p.attributes.find((a) => a.name === name)!;

/** Scan 8 of the orders table, edited, judged against the 8 clean scans. */
function judge(edit: (p: AssetProfile) => void, overrides?: Parameters<typeof evaluate>[0]["overrides"]) {
  const scan = ordersScan(8);
  edit(scan.profile);
  return evaluate({
    asset: ORDERS,
    job_id: scan.job_id,
    scan_time: scan.scan_time,
    profile: scan.profile,
    previous_schema: base.previous.profile.schema,
    history: base.history,
    overrides,
  });
}

/** Evaluates a single scan with no history (a rule policy's first scan). */
function firstScan(edit: (p: AssetProfile) => void) {
  const scan = ordersScan(0);
  edit(scan.profile);
  return evaluate({ asset: ORDERS, job_id: "first", scan_time: scan.scan_time, profile: scan.profile, history: {} });
}

describe("POLICY_DEFAULTS", () => {
  it("documents the ten prebuilt policies", () => {
    expect(Object.keys(POLICY_DEFAULTS).sort()).toEqual([...POLICY_IDS].sort());
    for (const id of POLICY_IDS) {
      const d = POLICY_DEFAULTS[id];
      expect(d.id).toBe(id);
      expect(["completeness", "accuracy", "consistency", "timeliness"]).toContain(d.dimension);
      expect(["LOW", "MEDIUM", "HIGH"]).toContain(d.priority);
      expect(d.description.length).toBeGreaterThan(20);
    }
    const rules = POLICY_IDS.filter((id) => POLICY_DEFAULTS[id].kind === "rule").sort();
    expect(rules).toEqual(["completeness", "freshness", "schema_change", "type_mismatch", "uniqueness"]);
    expect(POLICY_DEFAULTS.freshness.params.max_age_hours).toBe(24);
    expect(POLICY_DEFAULTS.type_mismatch.params.max_rate).toBe(0.01);
    expect(POLICY_DEFAULTS.row_count_anomaly.params).toMatchObject({ threshold: 3.5, window: 30, min_history: 7 });
    expect(POLICY_DEFAULTS.distribution_drift.params.threshold).toBe(0.2);
  });
});

describe("rule policies fire from the first scan", () => {
  it("completeness: fires above max_rate without history, quiet below", () => {
    const e = firstScan((p) => {
      attr(p, "country").empties = Math.round(attr(p, "country").count * 0.3);
    });
    expect(alertKeys(e)).toEqual(["completeness:country"]);
    expect(e.alerts[0]).toMatchObject({
      dimension: "completeness",
      priority: "MEDIUM",
      expected: { low: 0, high: 0.05 },
    });
    expect(e.alerts[0]!.description).toMatch(/^30\.0% of the values of attribute country in orders are null or empty/);
    expect(alertKeys(firstScan(() => {}))).toEqual([]);
  });

  it("completeness: a column usually 30 % null stays quiet; a usually full one alerts at +5 points", () => {
    // Three accepted scans at 30 % nulls teach the usual share.
    const hist = (v: number) =>
      [0, 1, 2].map((i) => ({ job_id: `h${i}`, time: `2025-01-0${i + 1}T00:00:00.000Z`, value: v, excluded: false }));
    const scan = ordersScan(0);
    const country = attr(scan.profile, "country");
    country.nulls = Math.round(country.count * 0.31);
    const run = (usual: number) =>
      evaluate({
        asset: ORDERS,
        job_id: "x",
        scan_time: scan.scan_time,
        profile: scan.profile,
        history: { "attr:country:missing_rate": hist(usual) },
      });
    expect(alertKeys(run(0.3))).toEqual([]);
    const spike = run(0.01);
    expect(alertKeys(spike)).toEqual(["completeness:country"]);
    expect(spike.alerts[0]!.expected).toEqual({ low: 0, high: 0.06 });
    expect(spike.points.find((p) => p.metric === "attr:country:missing_rate")).toMatchObject({
      excluded: true,
      excluded_by: ["completeness"],
    });
  });

  it("type_mismatch: fires above 1 % of the non-null values", () => {
    const e = firstScan((p) => {
      attr(p, "quantity").type_mismatches = 30;
    });
    expect(alertKeys(e)).toEqual(["type_mismatch:quantity"]);
    expect(e.alerts[0]!.description).toMatch(/are not of type integer \(30 of \d+\), above the allowed 1\.0%/);
    expect(
      alertKeys(
        firstScan((p) => {
          attr(p, "quantity").type_mismatches = 5;
        }),
      ),
    ).toEqual([]);
  });

  it("uniqueness: duplicate ids from the first scan; a once-unique attribute that is no longer", () => {
    const dup = firstScan((p) => {
      p.duplicate_count = 3;
    });
    expect(alertKeys(dup)).toEqual(["uniqueness:id"]);
    expect(dup.alerts[0]).toMatchObject({ metric: "duplicate_count", observed: 3, dimension: "consistency" });
    const lost = judge((p) => {
      attr(p, "email").distinct -= 4;
    });
    expect(alertKeys(lost)).toEqual(["uniqueness:email"]);
    expect(lost.alerts[0]!.description).toMatch(/was unique in the last 8 scans and now has/);
    // An estimated distinct count 2 % short is estimation noise, not lost uniqueness.
    const estimated = judge((p) => {
      const e = attr(p, "email");
      e.distinct_exact = false;
      e.distinct = Math.round(e.distinct * 0.98);
    });
    expect(alertKeys(estimated)).toEqual([]);
    // Timestamps and measures that happened to be unique are not keys: two equal values are quiet.
    const chance = judge((p) => {
      attr(p, "updated_at").distinct = attr(p, "updated_at").count - 4;
      attr(p, "amount").distinct -= 4;
    });
    expect(alertKeys(chance)).toEqual([]);
  });

  it("schema_change: one alert per added, removed or retyped attribute; quiet without a previous schema", () => {
    const e = judge((p) => {
      p.schema = p.schema.filter((f) => f.name !== "quantity");
      p.schema.push({ name: "discount", type: "number", nullable: true });
      p.schema.find((f) => f.name === "country")!.type = "integer";
    });
    expect(alertKeys(e)).toEqual(["schema_change:country", "schema_change:discount", "schema_change:quantity"]);
    const byAttr = Object.fromEntries(e.alerts.map((a) => [a.attribute, a]));
    expect(byAttr.quantity).toMatchObject({ observed: "removed", expected: "present (integer)" });
    expect(byAttr.country).toMatchObject({ observed: "integer", expected: "string" });
    expect(byAttr.discount!.description).toBe(
      "Attribute discount (number) was added to orders since the previous scan.",
    );
    expect(alertKeys(firstScan((p) => void p.schema.pop()))).toEqual([]);
  });

  it("freshness: newest timestamp older than 24 h at scan time; only with a timestamp attribute", () => {
    const scan = ordersScan(0);
    scan.profile.freshness = new Date(Date.parse(scan.scan_time) - 30 * 3_600_000).toISOString();
    const run = (asset = ORDERS) =>
      evaluate({ asset, job_id: "x", scan_time: scan.scan_time, profile: scan.profile, history: {} });
    const e = run();
    expect(alertKeys(e)).toEqual(["freshness:updated_at"]);
    expect(e.alerts[0]).toMatchObject({ observed: 30, expected: { low: 0, high: 24 }, dimension: "timeliness" });
    expect(alertKeys(run({ ...ORDERS, timestamp_attribute: undefined }))).toEqual([]);
    scan.profile.freshness = undefined;
    expect(run().alerts[0]).toMatchObject({ policy: "freshness", observed: "unknown" });
  });
});

describe("anomaly policies", () => {
  it("value_range: one alert per attribute naming every stat out of band", () => {
    const e = judge((p) => {
      const a = attr(p, "amount");
      a.mean = 140;
      a.max = 900;
    });
    expect(alertKeys(e)).toEqual(["value_range:amount"]);
    const alert = e.alerts[0]!;
    // The furthest out of its band leads (a mean is steadier than a max), the others follow.
    expect(alert.metric).toBe("attr:amount:mean");
    expect(alert.description).toMatch(
      /^The mean of attribute amount in orders is 140, outside the expected .*; also max 900 /,
    );
    expect(alert).toMatchObject({ strategy: "robust_z", training_size: 8, dimension: "accuracy" });
    const excluded = e.points.filter((p) => p.excluded).map((p) => p.metric);
    expect(excluded.sort()).toEqual(["attr:amount:max", "attr:amount:mean"]);
  });

  it("distribution_drift: shifted quantiles of a numeric attribute, changed shares of a categorical one", () => {
    const shifted = judge((p) => {
      const a = attr(p, "amount");
      // The centre moves while min, max, mean and median stay: a reshaped distribution.
      a.quantiles = a.quantiles!.map((q, i) => (i >= 2 && i <= 4 ? q + 20 : i >= 6 && i <= 8 ? q - 20 : q));
    });
    expect(alertKeys(shifted)).toEqual(["distribution_drift:amount"]);
    expect(shifted.alerts[0]).toMatchObject({ strategy: "psi_quantiles", expected: { low: 0, high: 0.2 } });
    const categories = judge((p) => {
      const c = attr(p, "country");
      const total = c.count - c.nulls;
      const counts = [0.05, 0.05, 0.15, 0.15, 0.12, 0.48].map((s) => Math.round(s * total));
      counts[5]! += total - counts.reduce((s, v) => s + v, 0);
      c.top_values = c.top_values.map((t, i) => ({ value: t.value, count: counts[i]! }));
    });
    expect(alertKeys(categories)).toEqual(["distribution_drift:country"]);
    expect(categories.alerts[0]!.description).toMatch(/PSI [\d.]+ above 0\.2 over 7 categories; largest change: "/);
  });

  it("pattern_drift: the dominant pattern gives way", () => {
    const e = judge((p) => {
      attr(p, "email").patterns = [
        { pattern: "a9@a.a", share: 0.2 },
        { pattern: "a 9 a", share: 0.8 },
      ];
    });
    expect(alertKeys(e)).toEqual(["pattern_drift:email"]);
    expect(e.alerts[0]!.description).toMatch(
      /the usual dominant pattern "a9@a\.a" covers 20\.0% of the values \(usually [67]\d\.\d%\), the most frequent now is "a 9 a" \(80\.0%\)/,
    );
  });

  it("cardinality_drift: new categories alert; a distinct count that follows the values does not", () => {
    const e = judge((p) => {
      const c = attr(p, "country");
      c.distinct = 40;
      c.top_values = c.top_values.slice(0, 20);
    });
    expect(alertKeys(e)).toEqual(["cardinality_drift:country"]);
    expect(e.alerts[0]).toMatchObject({ observed: 40, metric: "attr:country:distinct", priority: "LOW" });
    // Half the amounts null: half the distinct amounts, explained by the values (completeness fires).
    const halved = judge((p) => {
      const a = attr(p, "amount");
      a.nulls = Math.round(a.count / 2);
      a.distinct = Math.round(a.distinct / 2);
    });
    expect(alertKeys(halved)).toEqual(["completeness:amount"]);
  });

  it("reports training per metric until min_history past scans exist", () => {
    const two = cleanOrders(2);
    const e = runOrders(two.history, 2, two.previous).evaluation;
    expect(e.training).toContainEqual({ policy: "row_count_anomaly", metric: "row_count", points: 2, needed: 7 });
    expect(e.training).toContainEqual({
      policy: "pattern_drift",
      metric: "attr:email:pattern_js",
      attribute: "email",
      points: 2,
      needed: 7,
    });
    expect(e.training).toContainEqual({
      policy: "value_range",
      metric: "attr:amount:mean",
      attribute: "amount",
      points: 2,
      needed: 7,
    });
  });
});

describe("overrides", () => {
  const spike = (p: AssetProfile) => {
    const a = attr(p, "amount");
    a.nulls = Math.round(a.count * 0.4);
  };

  it("disable a policy, change its priority or its parameters", () => {
    expect(alertKeys(judge(spike, { completeness: { enabled: false } }))).toEqual([]);
    expect(judge(spike, { completeness: { priority: "HIGH" } }).alerts[0]!.priority).toBe("HIGH");
    expect(alertKeys(judge(spike, { completeness: { params: { max_rate: 0.5 } } }))).toEqual([]);
    expect(alertKeys(judge(spike, { completeness: { params: { ignore_attributes: ["amount"] } } }))).toEqual([]);
    const quick = judge(() => {}, { row_count_anomaly: { params: { min_history: 9, window: 10 } } });
    expect(quick.training).toContainEqual({ policy: "row_count_anomaly", metric: "row_count", points: 8, needed: 9 });
  });

  it("resolve over the defaults; an explicit undefined keeps the default", () => {
    const r = resolvePolicies({
      freshness: { params: { max_age_hours: undefined } },
      value_range: { priority: "LOW" },
    });
    expect(r.freshness.params.max_age_hours).toBe(24);
    expect(r.value_range).toMatchObject({ enabled: true, priority: "LOW", dimension: "accuracy" });
  });

  it("are validated per policy, with the path of every problem", () => {
    expect(PolicyOverridesSchema.parse({ freshness: { params: { max_age_hours: 48 } } })).toEqual({
      freshness: { params: { max_age_hours: 48 } },
    });
    const bad = PolicyOverridesSchema.safeParse({
      freshness: { params: { max_age_hours: -1 } },
      row_count_anomaly: { priority: "URGENT", params: { strategy: "magic" } },
      type_mismatch: { params: { threshold: 0.2 } },
      pattern_drift: { params: { min_history: 40 } },
      no_such_policy: {},
    });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join("."));
    expect(paths).toEqual(
      expect.arrayContaining([
        "freshness.params.max_age_hours",
        "row_count_anomaly.priority",
        "row_count_anomaly.params.strategy",
        "type_mismatch.params",
        "",
      ]),
    );
    const window = PolicyOverridesSchema.safeParse({ pattern_drift: { params: { min_history: 40 } } });
    expect(window.error?.issues.map((i) => i.path.join("."))).toEqual(["pattern_drift.params.min_history"]);
  });
});

describe("evaluate", () => {
  it("is deterministic and keeps one alert per (policy, attribute)", () => {
    const edit = (p: AssetProfile) => {
      p.duplicate_count = 5;
      attr(p, "amount").mean = 150;
    };
    const a = judge(edit);
    const b = judge(edit);
    expect(a).toEqual(b);
    const keys = alertKeys(a);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(["uniqueness:id", "value_range:amount"]);
  });

  it("marks exactly the flagged points excluded, the others kept", () => {
    const e = judge((p) => {
      attr(p, "amount").mean = 150;
    });
    const flagged = e.points.filter((p) => p.excluded);
    expect(flagged).toEqual([
      { metric: "attr:amount:mean", value: 150, attribute: "amount", excluded: true, excluded_by: ["value_range"] },
    ]);
    expect(e.points.length).toBeGreaterThan(50);
  });

  it("copes with an empty asset", () => {
    const empty: AssetProfile = { row_count: 0, schema: [], attributes: [], sampled: false };
    const e = evaluate({ asset: ORDERS, job_id: "e", scan_time: "2025-01-01T00:00:00Z", profile: empty, history: {} });
    expect(e.alerts).toEqual([]);
    expect(e.points).toEqual([{ metric: "row_count", value: 0, excluded: false }]);
    const blank: AttributeProfile = {
      name: "x",
      inferred_type: "string",
      count: 0,
      nulls: 0,
      empties: 0,
      distinct: 0,
      distinct_exact: true,
      top_values: [],
      type_counts: {},
      type_mismatches: 0,
      patterns: [],
    };
    const one = evaluate({
      asset: { id: 1, name: "t", type: "CSV" },
      job_id: "e",
      scan_time: "2025-01-01T00:00:00Z",
      profile: { ...empty, attributes: [blank] },
      history: {},
    });
    expect(one.alerts).toEqual([]);
  });
});
