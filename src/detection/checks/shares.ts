/**
 * completeness and type_mismatch: the share of missing values, and of values not of the attribute's
 * type, against the attribute's own history by a test that knows the row count (see shareTest).
 */
import type { AttributeProfile } from "../../scan/profile";
import { investigateMismatches, investigateMissing } from "../investigate";
import { attrMetric, nonNull } from "../metrics";
import {
  assetName,
  type Check,
  type CheckContext,
  type Finding,
  fmt,
  ignored,
  investigating,
  kindOf,
  pct,
  round,
  type ShareTestParams,
  shareTest,
  trainingWindow,
  withInvestigation,
} from "./common";

/** One attribute's share of k bad values in n, judged and, when it fires, written as a finding. */
function shareFinding(
  ctx: CheckContext,
  p: ShareTestParams,
  a: AttributeProfile,
  share: { metric: string; k: number; n: number; exclude: string[] },
  describe: (rate: string, limit: string) => string,
): Finding | undefined {
  const v = shareTest(ctx.history[share.metric], ctx.input.job_id, share.k, share.n, p);
  if (!v.fires) return undefined;
  const rate = share.k / share.n;
  return {
    attribute: a.name,
    metric: share.metric,
    observed: round(rate),
    metric_value: fmt(rate),
    expected: { low: 0, high: round(v.limit) },
    description: `${describe(pct(rate), pct(v.limit))} (${v.why}).`,
    strategy: v.usual === undefined ? "threshold" : "wilson_share",
    training_size: v.past.length,
    ...trainingWindow(v.past[0]?.time, v.past[v.past.length - 1]?.time),
    deviation: v.deviation,
    adaptable: true,
    exclude: share.exclude,
  };
}

export const completeness: Check<"completeness"> = (ctx, p) => {
  const findings: Finding[] = [];
  for (const a of ctx.profile.attributes) {
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

export const typeMismatch: Check<"type_mismatch"> = (ctx, p) => {
  const findings: Finding[] = [];
  for (const a of ctx.profile.attributes) {
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
