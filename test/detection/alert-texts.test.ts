/**
 * Every alert's text agrees with its `details` (issue 35, point 3), over the scenario suites: the
 * orders scenario of these tests, and bench/detection's corruptions (after Jenga) of a real table,
 * birdstrikes from vega-datasets, one batch a year, profiled by the real file profiler.
 */
import { describe, expect, it } from "vitest";
import { CORRUPTION_IDS, corrupt, corruptionTargets, FRACTIONS } from "../../bench/detection/corruptions";
import { BIRD_COLUMNS, BIRD_SWAPS } from "../../bench/detection/tables";
import type { Evaluation, PolicyAlert } from "../../src/detection";
import { alertDetails } from "../../src/incidents/monitor-store";
import { type AlertLike, disagreements } from "../support/alert-consistency";
import { BIRDSTRIKES, birdstrikeYears, profileBirdstrikes } from "../support/birdstrikes";
import { cleanOrders, PROBLEMS, ReplayMonitor, runOrders } from "./fixtures";

/** A policy's alert as the API shows it. */
const shown = (a: PolicyAlert): AlertLike => ({
  type: a.policy,
  description: a.description,
  metric: a.metric,
  details: alertDetails(a),
});

/** The alerts whose text and details disagree, each with what disagrees. */
function contradictions(alerts: readonly PolicyAlert[]) {
  return alerts.flatMap((a) => {
    const found = disagreements(shown(a));
    return found.length ? [{ alert: `${a.policy}:${a.attribute ?? ""}`, text: a.description, found }] : [];
  });
}

const TABLE = { columns: BIRD_COLUMNS, swapPairs: BIRD_SWAPS };

describe("alert texts agree with their details", () => {
  it("over the orders scenario: every problem", () => {
    const base = cleanOrders(8);
    const alerts = PROBLEMS.flatMap((problem) => runOrders(base.history, 8, base.previous, problem).evaluation.alerts);
    expect(new Set(alerts.map((a) => a.policy))).toEqual(
      new Set(["completeness", "row_count_anomaly", "schema_change", "uniqueness", "freshness", "pattern_drift"]),
    );
    expect(contradictions(alerts)).toEqual([]);
  });

  it("over bench/detection's corruptions of birdstrikes, every type and fraction, two windows", async () => {
    const years = birdstrikeYears();
    expect(years).toHaveLength(13);
    const profiles = [];
    for (const year of years) profiles.push(await profileBirdstrikes(year.rows));
    const alerts: PolicyAlert[] = [];
    const keep = (e: Evaluation) => alerts.push(...e.alerts);
    // The whole history in order, then scenarios as bench/detection runs them: trained on 8 years,
    // each corruption of the 9th judged against that training.
    const history = new ReplayMonitor(BIRDSTRIKES);
    for (const profile of profiles) keep(history.judge(profile));
    for (const start of [0, 4]) {
      const monitor = new ReplayMonitor(BIRDSTRIKES);
      for (const profile of profiles.slice(start, start + 8)) keep(monitor.judge(profile));
      const test = years[start + 8]!;
      for (const { type, target } of corruptionTargets(TABLE, CORRUPTION_IDS)) {
        for (const fraction of FRACTIONS) {
          const rows = corrupt(TABLE, test.rows, type, target, fraction, `${type}/${target}/${fraction}/${start}`);
          keep(monitor.peek(await profileBirdstrikes(rows)).evaluation);
        }
      }
    }
    // The suite is not empty of what it checks: most policies spoke.
    const policies = new Set(alerts.map((a) => a.policy));
    for (const policy of [
      "freshness",
      "completeness",
      "type_mismatch",
      "uniqueness",
      "value_range",
      "distribution_drift",
      "pattern_drift",
      "cardinality_drift",
    ]) {
      expect(policies, policy).toContain(policy);
    }
    expect(alerts.filter((a) => a.investigation).length).toBeGreaterThan(0);
    expect(contradictions(alerts)).toEqual([]);
  }, 180_000);
});

describe("disagreements (the check itself)", () => {
  it("finds what issue 35 saw", () => {
    expect(
      disagreements({
        type: "cardinality_drift",
        metric: "attr:hurricane_force_diameter:distinct",
        description:
          "Attribute hurricane_force_diameter (quantity) of storms has 47 distinct values, outside the expected -5 to 5 (robust z-score).",
        details: { observed: 47, expected: { low: -5, high: 5 } },
      }),
    ).toEqual(["band -5 to 5 is impossible for attr:hurricane_force_diameter:distinct"]);
    expect(
      disagreements({
        type: "distribution_drift",
        metric: "attr:year:category_shares",
        description:
          'The categories of attribute year (code) in storms changed from its baseline of the last 8 scans: "2006" 0.0% -> 18.9% (G-test p = 1.0e+0 on 741 values).',
        details: { observed: 1, values: [{ value: "2006", expected: 0, observed: 0.189, change: "up" }] },
      }),
    ).toEqual([
      "observed 1 is not quoted",
      "the text quotes p = 1.0e+0, which alerts on nothing",
      "the text names a G-test no value passed",
    ]);
    expect(
      disagreements({
        type: "freshness",
        metric: "freshness_age_hours",
        description:
          "The newest date in storms is 1975-06-27T00:00:00.000Z, 396400 h before the scan; expected at most 24 h.",
        details: { observed: 396358, expected: { low: 0, high: 24 } },
      }),
    ).toEqual(["observed 396358 is not quoted", "freshness without its unit"]);
    expect(
      disagreements({
        type: "pattern_drift",
        metric: "attr:name:pattern_shares",
        description:
          'The value patterns of attribute name (code) in storms changed from its baseline of the last 8 scans, 1 pattern: new "A" at 3.9%.',
        details: { observed: 1, values: [{ value: "A", expected: 0, observed: 0.039, change: "new" }] },
      }),
    ).toEqual(["patterns without their notation"]);
  });
});
