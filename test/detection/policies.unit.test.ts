import { describe, expect, it } from "vitest";
import type { AssetProfile, AttributeProfile } from "../../src/contracts/profile";
import type { MetricHistory } from "../../src/detection";
import {
  evaluate,
  POLICY_DEFAULTS,
  POLICY_IDS,
  type PolicyOverrides,
  PolicyOverridesSchema,
  resolvePolicies,
} from "../../src/detection";
import { attributeProfile } from "../support/attribute-profile";
import { prng } from "../support/random";
import { alertKeys, cleanOrders, ORDERS, orderKinds, ordersScan, pastPoints, runOrders } from "./fixtures";

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
    kinds: orderKinds(),
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
    expect(POLICY_DEFAULTS.distribution_drift.params).toMatchObject({ alpha: 1e-6, min_shift: 0.05 });
    expect(POLICY_DEFAULTS.completeness.params).toMatchObject({ margin: 0.002, z: 3.5, min_history: 3 });
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
    expect(e.alerts[0]!.description).toMatch(
      /^30\.0% of the values of attribute country \(code\) in orders are null or empty/,
    );
    expect(alertKeys(firstScan(() => {}))).toEqual([]);
  });

  it("completeness: a column usually 30 % null stays quiet at 31 %; a usually 1 % one alerts", () => {
    // Three accepted scans at 30 % nulls teach the usual share.
    const hist = (v: number) => pastPoints([v, v, v]);
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
    // A steady history allows its share plus the margin (half a point), judged on the Wilson bound.
    expect(spike.alerts[0]!.expected).toEqual({ low: 0, high: 0.012 });
    expect(spike.alerts[0]).toMatchObject({ strategy: "wilson_share", attribute_kind: "code", adaptable: true });
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

  it("schema_change: one alert per scan listing every added, removed or retyped attribute", () => {
    const e = judge((p) => {
      p.schema = p.schema.filter((f) => f.name !== "quantity");
      p.schema.push({ name: "discount", type: "number", nullable: true });
      p.schema.find((f) => f.name === "country")!.type = "integer";
    });
    expect(alertKeys(e)).toEqual(["schema_change:"]);
    expect(e.alerts[0]).toMatchObject({ observed: 3, event: true, adaptable: false });
    expect(e.alerts[0]!.schema_changes).toEqual([
      { attribute: "country", change: "retyped", type: "integer", previous_type: "string" },
      { attribute: "quantity", change: "removed", type: "integer" },
      { attribute: "discount", change: "added", type: "number" },
    ]);
    expect(e.alerts[0]!.description).toBe(
      "3 attributes of orders changed since the previous scan: country changed type from string to integer; quantity (integer) was removed; discount (number) was added.",
    );
    // One attribute: the alert names it.
    const one = judge((p) => {
      p.schema.push({ name: "discount", type: "number", nullable: true });
    });
    expect(alertKeys(one)).toEqual(["schema_change:discount"]);
    expect(one.alerts[0]!.description).toBe("Attribute discount (number) was added to orders since the previous scan.");
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
  it("value_range: one alert per quantity naming every band stat out of band; one odd record is no alert", () => {
    const e = judge((p) => {
      attr(p, "amount").mean = 140;
    });
    expect(alertKeys(e)).toEqual(["value_range:amount"]);
    const alert = e.alerts[0]!;
    expect(alert.description).toMatch(
      /^The mean of attribute amount \(quantity\) in orders is 140, outside the expected /,
    );
    expect(alert).toMatchObject({
      strategy: "robust_z",
      training_size: 8,
      dimension: "accuracy",
      attribute_kind: "quantity",
      adaptable: true,
    });
    expect(alert.deviation).toBeGreaterThan(1);
    const excluded = e.points.filter((p) => p.excluded).map((p) => p.metric);
    expect(excluded).toEqual(["attr:amount:mean"]);
    // A single record beyond every earlier one moves the max, not the tail: no alert.
    const record = judge((p) => {
      attr(p, "amount").max = 900;
      attr(p, "amount").quantiles![10] = 900;
    });
    expect(alertKeys(record)).toEqual([]);
  });

  it("value_range: values below zero in a quantity never below zero are a LOW observation", () => {
    // One refund written as a negative amount: the tails do not move, the sign does.
    const e = judge((p) => {
      const a = attr(p, "amount");
      a.min = -25;
      a.quantiles![0] = -25;
    });
    expect(alertKeys(e)).toEqual(["value_range:amount"]);
    expect(e.alerts[0]).toMatchObject({ strategy: "sign", priority: "LOW", metric: "attr:amount:min", observed: -25 });
    expect(e.alerts[0]!.description).toMatch(/has values below zero \(min -25\); it had none in its last 8 scans/);
    // A minimum of 0 is no news.
    const zero = judge((p) => {
      attr(p, "amount").min = 0;
      attr(p, "amount").quantiles![0] = 0;
    });
    expect(alertKeys(zero)).toEqual([]);
  });

  it("value_range: min/max as tails, more values beyond the baseline's 1st/99th percentile", () => {
    const e = judge((p) => {
      const a = attr(p, "amount");
      // A tenth of the amounts in cents: the 1st..10th percentiles fall far below the usual 1st.
      a.quantiles = a.quantiles!.map((q, i) => (i >= 1 && i <= 3 ? q / 100 : q));
      a.quantiles[0] = a.quantiles[0]! / 100;
      a.min = a.quantiles[0];
    });
    expect(alertKeys(e)).toContain("value_range:amount");
    const alert = e.alerts.find((x) => x.policy === "value_range")!;
    expect(alert).toMatchObject({ strategy: "tail_share", metric: "attr:amount:tail_below" });
    expect(alert.description).toMatch(
      /of the values of attribute amount \(quantity\) in orders are below [\d.]+ \(the 1st percentile/,
    );
  });

  /** value_range on the median of amount alone, against a history of past medians, the profile edited. */
  function judgeMedian(past: number[], median: number, edit: (a: AttributeProfile) => void) {
    const scan = ordersScan(0);
    const a = attr(scan.profile, "amount");
    a.quantiles![5] = median;
    edit(a);
    return evaluate({
      asset: ORDERS,
      job_id: "x",
      scan_time: "2025-02-01T00:00:00.000Z",
      profile: scan.profile,
      history: { "attr:amount:p50": pastPoints(past) },
      kinds: orderKinds(),
      overrides: { value_range: { params: { stats: ["p50"] } } } as PolicyOverrides,
    });
  }

  it("value_range: a median on a price grid never has a band narrower than one step", () => {
    // Medians that sat on 10.0 or 10.5 (a $0.50 grid): a move to 11.0 is one step, not news... twice is.
    const past = [10, 10.5, 10, 10, 10.5, 10, 10, 10.5];
    const run = (median: number) =>
      judgeMedian(past, median, (a) => {
        a.step = 0.5;
      });
    expect(alertKeys(run(10.5))).toEqual([]);
    const far = run(12);
    expect(alertKeys(far)).toEqual(["value_range:amount"]);
    const band = far.alerts[0]!.expected as { low: number; high: number };
    expect(band.high - band.low).toBeGreaterThanOrEqual(1);
  });

  it("value_range: a median of values mostly in tens (the odd one in ones) moves by ten without alerting", () => {
    const run = (median: number) =>
      judgeMedian(Array(8).fill(140), median, (a) => {
        a.step = 1;
        a.top_values = ["120", "140", "150", "200", "100", "135"].map((value, i) => ({ value, count: 50 - i }));
      });
    // The frequent values sit on a grid of 5 (135): one or two notches are no news; more are.
    expect(alertKeys(run(145))).toEqual([]);
    expect(alertKeys(run(170))).toEqual(["value_range:amount"]);
  });

  it("value_range and distribution_drift leave codes and identifiers alone", () => {
    const e = judge((p) => {
      attr(p, "quantity").mean = 40;
      attr(p, "quantity").quantiles = attr(p, "quantity").quantiles!.map((q) => q * 2);
      attr(p, "id").mean = 1e6;
    });
    expect(alertKeys(e).filter((k) => k.startsWith("value_range") || k.startsWith("distribution_drift:id"))).toEqual(
      [],
    );
  });

  it("distribution_drift: a reshaped quantity (KS distance on the quantile profile)", () => {
    const shifted = judge((p) => {
      const a = attr(p, "amount");
      // The centre moves while min, max, mean and median stay: a reshaped distribution.
      a.quantiles = a.quantiles!.map((q, i) => (i >= 2 && i <= 4 ? q + 20 : i >= 6 && i <= 8 ? q - 20 : q));
    });
    expect(alertKeys(shifted)).toEqual(["distribution_drift:amount"]);
    const alert = shifted.alerts[0]!;
    expect(alert).toMatchObject({ strategy: "ks_quantiles", attribute_kind: "quantity" });
    expect(Number(alert.observed)).toBeGreaterThan((alert.expected as { high: number }).high);
    expect(alert.description).toMatch(/the CDFs differ by [\d.]+% at [\d.]+, above the allowed/);
  });

  it("distribution_drift of a code: a share shift names the values that moved", () => {
    const categories = judge((p) => {
      const c = attr(p, "country");
      const total = c.count - c.nulls;
      // Germany 30 % -> 20 %, France 20 % -> 30 %: a 10-point move (in ~1000 rows a share moves by ±1.5 points).
      const shares = new Map([
        ["Germany", 0.2],
        ["France", 0.3],
      ]);
      c.top_values = c.top_values.map((t) => ({
        value: t.value,
        count: shares.has(t.value) ? Math.round(shares.get(t.value)! * total) : t.count,
      }));
    });
    expect(alertKeys(categories)).toEqual(["distribution_drift:country"]);
    const alert = categories.alerts[0]!;
    expect(alert.strategy).toBe("category_shares");
    expect(alert.values?.map((v) => `${v.value}:${v.change}`)).toContain("Germany:down");
    expect(alert.description).toMatch(/"Germany" [23]\d\.\d% -> 20\.0%/);
  });

  it("distribution_drift of a code: a 7-point move in 10,000 rows fires, not in 500", () => {
    const r = prng(5);
    const history: MetricHistory = {};
    for (let i = 0; i < 8; i++) {
      // Daily card/cash shares of 10,000 payments: 75 % card, binomial noise.
      let card = 0;
      for (let k = 0; k < 10_000; k++) if (r() < 0.75) card++;
      const time = `2025-01-0${i + 1}T00:00:00.000Z`;
      for (const [value, share] of [
        ["card", card / 10_000],
        ["cash", 1 - card / 10_000],
      ] as const) {
        const metric = `attr:payment:value:${value}`;
        history[metric] = [...(history[metric] ?? []), { job_id: `h${i}`, time, value: share, excluded: false }];
      }
    }
    const payment = (n: number, card: number): AttributeProfile => ({
      name: "payment",
      inferred_type: "string",
      count: n,
      nulls: 0,
      empties: 0,
      distinct: 2,
      distinct_exact: true,
      top_values: [
        { value: "card", count: Math.round(card * n) },
        { value: "cash", count: n - Math.round(card * n) },
      ],
      type_counts: { string: n },
      type_mismatches: 0,
      patterns: [{ pattern: "a", share: 1 }],
    });
    const run = (n: number, card: number) =>
      evaluate({
        asset: { id: 1, name: "payments", type: "CSV" },
        job_id: "x",
        scan_time: "2025-02-01T00:00:00.000Z",
        profile: { row_count: n, schema: [], attributes: [payment(n, card)], sampled: false },
        history,
        kinds: { payment: "code" },
      });
    const big = run(10_000, 0.68);
    expect(alertKeys(big)).toEqual(["distribution_drift:payment"]);
    expect(big.alerts[0]!.values?.map((v) => v.value).sort()).toEqual(["card", "cash"]);
    expect(alertKeys(run(10_000, 0.74))).toEqual([]);
    // A 5.5-point move: beyond min_shift, and beyond what sampling and this history's drift explain
    // (the history varies only as 10,000-row samples do, so its spread adds nothing of its own).
    expect(alertKeys(run(10_000, 0.695))).toEqual(["distribution_drift:payment"]);
    // 500 rows: a 7-point move is within what the G-test expects by chance.
    expect(alertKeys(run(500, 0.68))).toEqual([]);
  });

  it("distribution_drift of a quantity: rows set to one value raise its share (a point mass KS cannot see)", () => {
    const r = prng(11);
    const history: MetricHistory = {};
    for (let i = 0; i < 8; i++) {
      // The most frequent amount (0) is ~5 % of 10,000 values, binomial noise.
      let zeros = 0;
      for (let k = 0; k < 10_000; k++) if (r() < 0.05) zeros++;
      const time = `2025-01-0${i + 1}T00:00:00.000Z`;
      const point = { job_id: `h${i}`, time, value: zeros / 10_000, excluded: false };
      history["attr:amount:top_value_share"] = [...(history["attr:amount:top_value_share"] ?? []), point];
    }
    const amount = (zeroShare: number): AttributeProfile => ({
      name: "amount",
      inferred_type: "number",
      count: 10_000,
      nulls: 0,
      empties: 0,
      distinct: 3_000,
      distinct_exact: false,
      mean: 42,
      top_values: [{ value: "0", count: Math.round(zeroShare * 10_000) }],
      type_counts: { number: 10_000 },
      type_mismatches: 0,
      patterns: [],
    });
    const run = (zeroShare: number) =>
      evaluate({
        asset: { id: 1, name: "payments", type: "CSV" },
        job_id: "x",
        scan_time: "2025-02-01T00:00:00.000Z",
        profile: { row_count: 10_000, schema: [], attributes: [amount(zeroShare)], sampled: false },
        history,
        kinds: { amount: "quantity" },
      });
    const stuck = run(0.07);
    expect(alertKeys(stuck)).toEqual(["distribution_drift:amount"]);
    expect(stuck.alerts[0]).toMatchObject({ metric: "attr:amount:top_value_share", strategy: "wilson_share" });
    expect(stuck.alerts[0]!.description).toMatch(
      /The most frequent value of attribute amount \(quantity\) .*, 0, is 7\.0% of the values/,
    );
    expect(alertKeys(run(0.052))).toEqual([]);
  });

  it("distribution_drift of a code: many never-seen values, each rare, together are news (typos)", () => {
    const typos = (n: number) =>
      judge((p) => {
        const c = attr(p, "country");
        const extra = Array.from({ length: n }, (_, i) => ({
          value: `Germ${String.fromCharCode(98 + i)}ny`,
          count: 1,
        }));
        c.top_values = [...c.top_values, ...extra];
        c.distinct += n;
        c.count += n;
        p.row_count += n;
      });
    const many = typos(10);
    const alert = many.alerts.find((a) => a.policy === "distribution_drift");
    expect(alert?.attribute).toBe("country");
    const fresh = alert?.values?.filter((v) => v.change === "new") ?? [];
    expect(fresh.map((v) => v.value).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `Germ${String.fromCharCode(98 + i)}ny`),
    );
    // Two odd values are below min_count (5): no alert.
    expect(typos(2).alerts.filter((a) => a.policy === "distribution_drift")).toEqual([]);
  });

  it("distribution_drift of a code: a new category at 1 % of the rows, and one that vanished", () => {
    const fresh = judge((p) => {
      const c = attr(p, "country");
      c.top_values = [...c.top_values, { value: "Poland", count: 10 }];
      c.distinct += 1;
      c.count += 10;
      p.row_count += 10;
    });
    expect(alertKeys(fresh)).toContain("distribution_drift:country");
    const alert = fresh.alerts.find((a) => a.policy === "distribution_drift")!;
    expect(alert.values).toEqual([{ value: "Poland", expected: 0, observed: expect.closeTo(0.01, 3), change: "new" }]);
    // Five rows of a new value are not enough to call it a category.
    const few = judge((p) => {
      const c = attr(p, "country");
      c.top_values = [...c.top_values, { value: "Poland", count: 3 }];
      c.distinct += 1;
      c.count += 3;
    });
    expect(alertKeys(few).filter((k) => k.startsWith("distribution_drift"))).toEqual([]);
    const gone = judge((p) => {
      const c = attr(p, "country");
      const nl = c.top_values.find((t) => t.value === "Netherlands")!;
      c.top_values = c.top_values.filter((t) => t !== nl);
      c.top_values[0]!.count += nl.count;
      c.distinct -= 1;
    });
    const vanished = gone.alerts.find((a) => a.policy === "distribution_drift")!;
    expect(vanished.values).toContainEqual(
      expect.objectContaining({ value: "Netherlands", change: "vanished", observed: 0 }),
    );
  });

  it("pattern_drift: a new shape of an identifier", () => {
    const e = judge((p) => {
      attr(p, "email").patterns = [
        { pattern: "a9@a.a", share: 0.2 },
        { pattern: "a 9 a", share: 0.8 },
      ];
    });
    expect(alertKeys(e)).toEqual(["pattern_drift:email"]);
    expect(e.alerts[0]!.description).toMatch(/new "a 9 a" at 80\.0%/);
    expect(e.alerts[0]!.values).toContainEqual(expect.objectContaining({ value: "a 9 a", change: "new" }));
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

  it("cardinality_drift: a count's band stays in whole values from 0; an attribute with no values yet is not judged", () => {
    // Storm diameters: empty in 8 scans, then measured (47 values); or a few values, then 47.
    const diameter = (distinct: number) =>
      attributeProfile("diameter", { inferred_type: "integer", count: 300, distinct, type_counts: { integer: 300 } });
    const scanOf = (history: MetricHistory) =>
      evaluate({
        asset: { id: 1, name: "storms", type: "S3" },
        job_id: "now",
        scan_time: "2025-02-01T00:00:00.000Z",
        profile: { row_count: 300, schema: [], attributes: [diameter(47)], sampled: false },
        history,
        kinds: { diameter: "quantity" },
      }).alerts.filter((a) => a.policy === "cardinality_drift");
    const history = (distinct: number[], nonNull: number[]): MetricHistory => ({
      "attr:diameter:distinct": pastPoints(distinct),
      "attr:diameter:non_null": pastPoints(nonNull),
    });
    expect(scanOf(history([0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]))).toEqual([]);
    const [few] = scanOf(history([2, 3, 2, 2, 3, 2, 2, 3], [300, 300, 300, 300, 300, 300, 300, 300]));
    expect(few).toMatchObject({ observed: 47, expected: { low: 0 } });
    expect(Number.isInteger((few!.expected as { high: number }).high)).toBe(true);
    expect(few!.description).toMatch(/has 47 distinct values, outside the expected 0 to \d+ \(/);
  });

  it("freshness: the text quotes the age as details keep it, with its unit", () => {
    const scan = ordersScan(0);
    scan.profile.freshness = "1975-06-27T00:00:00.000Z";
    const [alert] = evaluate({
      asset: ORDERS,
      job_id: "x",
      scan_time: "2020-10-01T22:20:00.000Z",
      profile: scan.profile,
      history: {},
    }).alerts.filter((a) => a.policy === "freshness");
    // 396814.33 h: quoted whole, kept to a tenth; never "396800 h" beside 396814.
    expect(alert).toMatchObject({ observed: 396814.3, metric_value: "396814", unit: "hours" });
    expect(alert!.description).toContain(", 396814 h (45.3 years) before the scan at 2020-10-01T22:20:00.000Z;");
  });

  it("reports training per metric until min_history past scans exist", () => {
    const two = cleanOrders(2);
    const e = runOrders(two.history, 2, two.previous).evaluation;
    expect(e.training).toContainEqual({ policy: "row_count_anomaly", metric: "row_count", points: 2, needed: 7 });
    expect(e.training).toContainEqual({
      policy: "pattern_drift",
      metric: "attr:email:pattern_shares",
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
    expect(alertKeys(judge(spike, { completeness: { params: { margin: 0.5 } } }))).toEqual([]);
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
    const blank = attributeProfile("x");
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

describe("bounds", () => {
  it("more than 20 attributes alerting for one policy in one scan become one summarising alert", () => {
    const scan = ordersScan(0);
    const wide = Array.from({ length: 300 }, (_, i) => ({
      ...scan.profile.attributes.find((a) => a.name === "country")!,
      name: `extra_${i}`,
      nulls: scan.profile.attributes[0]!.count,
    }));
    const e = evaluate({
      asset: ORDERS,
      job_id: "wide",
      scan_time: scan.scan_time,
      profile: { ...scan.profile, attributes: [...scan.profile.attributes, ...wide] },
      history: {},
    });
    const completeness = e.alerts.filter((a) => a.policy === "completeness");
    expect(completeness).toHaveLength(1);
    expect(completeness[0]).toMatchObject({ observed: 300, strategy: "summary" });
    expect(completeness[0]!.attribute).toBeUndefined();
    expect(completeness[0]!.description).toMatch(/^Completeness: 300 attributes of orders at once, more than 20/);
    expect(e.points.filter((p) => p.metric.endsWith(":missing_rate") && p.excluded)).toHaveLength(300);
  });
});
