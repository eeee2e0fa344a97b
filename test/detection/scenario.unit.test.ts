import { describe, expect, it } from "vitest";
import { alertKeys, cleanOrders, type Problem, runOrders } from "./fixtures";

const CLEAN_SCANS = 8;
const run = runOrders;
const baseline = cleanOrders(CLEAN_SCANS);

describe("scenario: the orders table over several scans", () => {
  it("stays quiet on 8 clean scans, training until 7 past scans exist", () => {
    for (const [i, e] of baseline.evaluations.entries()) {
      expect(alertKeys(e), `scan ${i}`).toEqual([]);
      expect(e.points.every((p) => !p.excluded)).toBe(true);
    }
    // Scans 0-6 have fewer than 7 past scans: every anomaly policy reports training.
    const first = baseline.evaluations[0]!;
    expect(new Set(first.training.map((t) => t.policy))).toEqual(
      new Set(["row_count_anomaly", "value_range", "distribution_drift", "pattern_drift", "cardinality_drift"]),
    );
    expect(first.training.find((t) => t.policy === "row_count_anomaly")).toEqual({
      policy: "row_count_anomaly",
      metric: "row_count",
      points: 0,
      needed: 7,
    });
    expect(baseline.evaluations[6]!.training.find((t) => t.metric === "row_count")?.points).toBe(6);
    // Scan 7 has 7 past scans: nothing is training any more.
    expect(baseline.evaluations[7]!.training).toEqual([]);
  });

  // Exactly these alerts, and why no other policy fires:
  const expected: Record<Problem, string[]> = {
    // amount: 2 % -> ~40 % nulls. Nulls are random, so its mean, quantiles and patterns do not
    // move, and its distinct count falls in proportion to its non-null values.
    null_spike: ["completeness:amount"],
    // A random 40 % of the rows: value statistics and shares keep their level, distinct counts
    // fall at most in proportion to the values (explained), ids are labels not quantities.
    row_drop: ["row_count_anomaly:"],
    dropped_column: ["schema_change:quantity"],
    // ~5 % of the rows reuse an earlier id: the duplicate count names the id attribute; its
    // distinct drop is uniqueness's to report, not cardinality_drift's.
    duplicate_ids: ["uniqueness:id"],
    stale_timestamps: ["freshness:updated_at"],
    // Unique free text ("customer 17 prefers a call after 3 pm"): still a string, still one value
    // per row, so type, uniqueness and cardinality hold; only the pattern mix changes.
    emails_to_text: ["pattern_drift:email"],
    // Five stock phrases: the patterns change, and the attribute, unique in every past scan, is
    // no longer (uniqueness; cardinality_drift defers to it on the same attribute).
    emails_to_few_phrases: ["pattern_drift:email", "uniqueness:email"],
  };

  it.each(Object.entries(expected) as Array<[Problem, string[]]>)("%s -> %j", (problem, keys) => {
    const { evaluation } = run(baseline.history, CLEAN_SCANS, baseline.previous, problem);
    expect(alertKeys(evaluation)).toEqual(keys);
    for (const a of evaluation.alerts) {
      expect(a.description.length).toBeGreaterThan(20);
      expect(a.metric_value).not.toBe("");
    }
  });

  it("keeps every problem out of the baseline: a run of problems, each followed by a clean scan", () => {
    let { history, previous } = baseline;
    let i = CLEAN_SCANS;
    const problems: Problem[] = ["null_spike", "row_drop", "duplicate_ids", "stale_timestamps", "emails_to_text"];
    for (const problem of problems) {
      const bad = run(history, i++, previous, problem);
      expect(alertKeys(bad.evaluation), problem).toEqual(expected[problem]);
      expect(bad.evaluation.points.some((p) => p.excluded)).toBe(true);
      history = bad.history;
      const clean = run(history, i++, bad.scan);
      expect(alertKeys(clean.evaluation), `clean after ${problem}`).toEqual([]);
      history = clean.history;
      previous = clean.scan;
    }
    // A dropped column is a change, and so is its return.
    const dropped = run(history, i++, previous, "dropped_column");
    expect(alertKeys(dropped.evaluation)).toEqual(["schema_change:quantity"]);
    const back = run(dropped.history, i++, dropped.scan);
    expect(alertKeys(back.evaluation)).toEqual(["schema_change:quantity"]);
    expect(back.evaluation.alerts[0]!.metric_value).toBe("added");
    const after = run(back.history, i++, back.scan);
    expect(alertKeys(after.evaluation)).toEqual([]);
  });

  it("stays quiet on 60 clean scans", () => {
    const { evaluations } = cleanOrders(60);
    expect(evaluations.flatMap((e) => e.alerts)).toEqual([]);
  });

  it("alerts on a second bad scan in a row: the first one did not join the baseline", () => {
    const first = run(baseline.history, CLEAN_SCANS, baseline.previous, "row_drop");
    const second = run(first.history, CLEAN_SCANS + 1, first.scan, "row_drop");
    expect(alertKeys(first.evaluation)).toEqual(["row_count_anomaly:"]);
    expect(alertKeys(second.evaluation)).toEqual(["row_count_anomaly:"]);
    expect(second.evaluation.alerts[0]!.training_size).toBe(CLEAN_SCANS);
  });

  it("judges a job applied twice the same way: its own points are not its baseline", () => {
    const once = run(baseline.history, CLEAN_SCANS, baseline.previous, "row_drop");
    const twice = run(once.history, CLEAN_SCANS, baseline.previous, "row_drop");
    expect(twice.evaluation).toEqual(once.evaluation);
  });

  it("explains a row drop: observed, band, strategy and training window", () => {
    const { evaluation } = run(baseline.history, CLEAN_SCANS, baseline.previous, "row_drop");
    const alert = evaluation.alerts[0]!;
    expect(alert).toMatchObject({
      policy: "row_count_anomaly",
      policy_name: "Row count anomaly",
      priority: "HIGH",
      dimension: "completeness",
      metric: "row_count",
      strategy: "robust_z",
      training_size: CLEAN_SCANS,
      training_window: { from: "2025-03-03T06:00:00.000Z", to: "2025-03-10T06:00:00.000Z" },
    });
    const band = alert.expected as { low: number; high: number };
    expect(band.low).toBeGreaterThan(900);
    expect(band.high).toBeLessThan(1100);
    expect(alert.observed).toBeLessThan(500);
    expect(alert.description).toMatch(/^Row count of orders is \d+, outside the expected [\d.]+ to [\d.]+ \(robust z/);
    expect(evaluation.points.find((p) => p.metric === "row_count")).toMatchObject({
      excluded: true,
      excluded_by: ["row_count_anomaly"],
    });
  });
});
