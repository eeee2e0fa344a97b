/** completeness: the share of null or empty values of an attribute, against its own history. */
import type { z } from "zod";
import { ATTRIBUTE_KINDS } from "../../db/schema";
import {
  assetName,
  type Check,
  type Finding,
  ignored,
  investigating,
  kindOf,
  withInvestigation,
} from "../checks/common";
import { shareFinding } from "../checks/shares";
import { investigateMissing } from "../investigate";
import { attrMetric } from "../metrics";
import { rateParams, shareDefaults } from "../params";
import { definePolicy } from "../policy";

const params = rateParams();
type Params = z.output<typeof params>;

const completeness: Check<Params> = (ctx, p) => {
  const findings: Finding[] = [];
  for (const a of ctx.attributes) {
    if (ignored(p, a) || a.count <= 0) continue;
    const metric = attrMetric(a.name, "missing_rate");
    const exclude = [metric, attrMetric(a.name, "null_rate"), attrMetric(a.name, "empty_rate")];
    const finding = shareFinding(
      ctx,
      p,
      a,
      { metric, k: a.nulls + a.empties, n: a.count, exclude },
      (rate, limit) =>
        `${rate} of the values of attribute ${a.name} (${kindOf(ctx, a)}) in ${assetName(ctx)} are null or empty (${a.nulls} null, ${a.empties} empty of ${a.count}), above the allowed ${limit}`,
    );
    if (finding) {
      const where = investigating(ctx) ? investigateMissing(ctx.profile, a.name) : [];
      findings.push(withInvestigation(finding, where, `missing values of ${a.name}`));
    }
  }
  return { findings, training: [] };
};

export const completenessPolicy = definePolicy({
  id: "completeness",
  name: "Completeness",
  description:
    "The share of null or empty values of an attribute rises above its usual share (median of the past scans) plus the larger of margin and the history's spread, judged on the Wilson lower bound at z for the row count; before min_history scans, above max_rate.",
  dimension: "completeness",
  priority: "MEDIUM",
  kind: "rule",
  fits: ATTRIBUTE_KINDS,
  scope: ["attribute", "segment"],
  after: [],
  params,
  defaults: { ...shareDefaults, max_rate: 0.05, ignore_attributes: [] },
  // The completeness share counts the missing values.
  score: "measured",
  details:
    "missing share above its usual share + max(0.2 point, history's spread beyond sampling), on the Wilson lower bound (z 3.5), the spread and the Wilson half-width added in quadrature (independent errors); a trending share is judged from its recent level; before 3 scans: > 5 %",
  check: completeness,
});
