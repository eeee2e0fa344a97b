/**
 * A test-only policy, to show what adding one takes (this file and its test): mostly_missing
 * raises a HIGH alert for an attribute that completeness flagged in the same scan and whose values
 * are mostly missing, above max_share.
 */
import { z } from "zod";
import { ATTRIBUTE_KINDS } from "../../../src/db/schema";
import { assetName, type Finding, pct, round } from "../../../src/detection/checks/common";
import { attrMetric } from "../../../src/detection/metrics";
import { definePolicy } from "../../../src/detection/policy";

export const mostlyMissingPolicy = definePolicy({
  id: "mostly_missing",
  name: "Mostly missing",
  description: "An attribute that completeness flagged has more than max_share of its values null or empty.",
  dimension: "completeness",
  priority: "HIGH",
  kind: "rule",
  fits: ATTRIBUTE_KINDS,
  scope: ["attribute", "segment"],
  after: ["completeness"],
  params: z.strictObject({ max_share: z.number().min(0).max(1) }),
  defaults: { max_share: 0.5 },
  score: "penalty",
  details: "completeness flagged the attribute and more than half its values are missing",
  check(ctx, p, earlier) {
    const flagged = new Set(earlier.map((a) => a.attribute));
    const findings: Finding[] = [];
    for (const a of ctx.attributes) {
      const share = a.count > 0 ? (a.nulls + a.empties) / a.count : 0;
      if (!flagged.has(a.name) || !(share > p.max_share)) continue;
      findings.push({
        attribute: a.name,
        metric: attrMetric(a.name, "missing_rate"),
        observed: round(share),
        expected: { low: 0, high: p.max_share },
        description: `${pct(share)} of the values of ${a.name} in ${assetName(ctx)} are missing, more than ${pct(p.max_share)}.`,
        strategy: "threshold",
        adaptable: false,
        exclude: [],
      });
    }
    return { findings, training: [] };
  },
});
