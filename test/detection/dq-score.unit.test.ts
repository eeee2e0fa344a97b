import { describe, expect, it } from "vitest";
import type { AssetProfile, AttributeProfile } from "../../src/contracts/profile";
import type { PolicyAlert } from "../../src/detection";
import { computeDqScore } from "../../src/detection/dq-score";
import { defaultDqScoreConfig } from "../../src/settings/dq-score";
import { attributeProfile } from "../support/attribute-profile";

const SCAN = "2025-03-10T12:00:00.000Z";

function attribute(name: string, over: Partial<AttributeProfile>): AttributeProfile {
  return attributeProfile(name, { inferred_type: "integer", count: 100, distinct: 100, ...over });
}

// a: 10 nulls, 5 empties, 2 mismatches among its 90 non-null values; b: clean.
const profile: AssetProfile = {
  row_count: 100,
  schema: [],
  attributes: [attribute("a", { nulls: 10, empties: 5, type_mismatches: 2 }), attribute("b", {})],
  duplicate_count: 4,
  freshness: "2025-03-08T12:00:00.000Z", // 48 h before the scan
  sampled: false,
};

const alert = (policy: PolicyAlert["policy"], priority: PolicyAlert["priority"], metric = "m") => ({
  policy,
  priority,
  metric,
});

describe("computeDqScore", () => {
  it("measures shares when no alert fired and no timestamp attribute is set", () => {
    const s = computeDqScore(profile, [], defaultDqScoreConfig().weights, { scan_time: SCAN });
    // completeness 1 − 15/200; accuracy 1 − 2/190; consistency 1 − 4/100; timeliness 100 (none)
    expect(s).toEqual({
      completeness: 92.5,
      accuracy: 98.9,
      consistency: 96,
      timeliness: 100,
      overall: 96.9, // (92.5 + 98.947 + 96 + 100) / 4 = 96.862
    });
  });

  it("applies the alert factors and the normalised weights", () => {
    const alerts = [
      alert("row_count_anomaly", "HIGH"), // completeness × 0.7
      alert("completeness", "MEDIUM"), // already in the null share
      alert("value_range", "MEDIUM"), // accuracy × 0.8
      alert("type_mismatch", "MEDIUM"), // already in the mismatch share
      alert("schema_change", "HIGH"), // consistency × 0.7
      alert("pattern_drift", "MEDIUM"), // consistency × 0.8
      alert("uniqueness", "HIGH", "duplicate_count"), // already in the duplicate share
      alert("freshness", "HIGH"), // already in the age
    ];
    const s = computeDqScore(
      profile,
      alerts,
      { completeness: 2, accuracy: 1, consistency: 1, timeliness: 0 },
      { scan_time: SCAN, timestamp_attribute: "t" },
    );
    expect(s).toEqual({
      completeness: 64.8, // 92.5 × 0.7 = 64.75
      accuracy: 79.2, // 98.947 × 0.8 = 79.158
      consistency: 53.8, // 96 × 0.7 × 0.8 = 53.76
      timeliness: 50, // 24 h allowed / 48 h old
      overall: 65.6, // 0.5 × 64.75 + 0.25 × 79.158 + 0.25 × 53.76 = 65.604
    });
  });

  it("penalises a lost unique attribute, and the LOW priority least", () => {
    const s = computeDqScore(
      profile,
      [alert("uniqueness", "HIGH", "attr:a:unique_ratio"), alert("cardinality_drift", "LOW")],
      defaultDqScoreConfig().weights,
      { scan_time: SCAN },
    );
    expect(s.consistency).toBe(60.5); // 96 × 0.7 × 0.9 = 60.48
  });

  it("timeliness: 100 when fresh, 0 without any timestamp value, threshold from the options", () => {
    const opts = { scan_time: SCAN, timestamp_attribute: "t" };
    const w = defaultDqScoreConfig().weights;
    expect(computeDqScore(profile, [], w, { ...opts, max_age_hours: 48 }).timeliness).toBe(100);
    expect(computeDqScore(profile, [], w, { ...opts, max_age_hours: 12 }).timeliness).toBe(25);
    expect(computeDqScore({ ...profile, freshness: undefined }, [], w, opts).timeliness).toBe(0);
  });

  it("scores an empty asset 100 and refuses all-zero weights", () => {
    const empty: AssetProfile = { row_count: 0, schema: [], attributes: [], sampled: false };
    const s = computeDqScore(empty, [], defaultDqScoreConfig().weights, { scan_time: SCAN, timestamp_attribute: "t" });
    expect(s).toEqual({ completeness: 100, accuracy: 100, consistency: 100, timeliness: 100, overall: 100 });
    expect(() =>
      computeDqScore(profile, [], { completeness: 0, accuracy: 0, consistency: 0, timeliness: 0 }, { scan_time: SCAN }),
    ).toThrow(/weights/);
  });
});
