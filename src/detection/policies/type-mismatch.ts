/** type_mismatch: the share of values not of the attribute's type, against its own history. */
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
import { investigateMismatches } from "../investigate";
import { attrMetric, nonNull } from "../metrics";
import { rateParams, shareDefaults } from "../params";
import { definePolicy } from "../policy";

const params = rateParams();
type Params = z.output<typeof params>;

const typeMismatch: Check<Params> = (ctx, p) => {
  const findings: Finding[] = [];
  for (const a of ctx.attributes) {
    const present = nonNull(a);
    if (ignored(p, a) || present <= 0) continue;
    const metric = attrMetric(a.name, "type_mismatch_rate");
    const finding = shareFinding(
      ctx,
      p,
      a,
      { metric, k: a.type_mismatches, n: present, exclude: [metric] },
      (rate, limit) =>
        `${rate} of the non-null values of attribute ${a.name} (${kindOf(ctx, a)}) in ${assetName(ctx)} are not of type ${a.declared_type ?? a.inferred_type} (${a.type_mismatches} of ${present}), above the allowed ${limit}`,
    );
    if (finding) {
      const where = investigating(ctx) ? investigateMismatches(ctx.profile, a.name) : [];
      findings.push(withInvestigation(finding, where, `values of ${a.name} not of its type`));
    }
  }
  return { findings, training: [] };
};

export const typeMismatchPolicy = definePolicy({
  id: "type_mismatch",
  name: "Type mismatch",
  description:
    "The share of non-null values not of the attribute's type rises above its usual share, by the share test of completeness; before min_history scans, above max_rate.",
  dimension: "accuracy",
  priority: "MEDIUM",
  kind: "rule",
  fits: ATTRIBUTE_KINDS,
  scope: ["attribute", "segment"],
  after: [],
  params,
  defaults: { ...shareDefaults, max_rate: 0.01, ignore_attributes: [] },
  // The accuracy share counts the values not of their type.
  score: "measured",
  details: "share of values not of the type, share test as completeness; before 3 scans: > 1 %",
  check: typeMismatch,
});
