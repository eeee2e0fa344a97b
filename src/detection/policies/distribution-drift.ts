/**
 * distribution_drift: quantities by the distance of their quantile profile from the baseline's
 * (checks/quantities.ts), codes by their categories (checks/categories.ts), quantities and
 * timestamps by their most frequent value's share.
 */
import type { z } from "zod";
import { codeDrift } from "../checks/categories";
import { type Check, type CheckResult, type Finding, ignored, kindOf } from "../checks/common";
import { modeShare, quantityDrift, withShift } from "../checks/quantities";
import { isNumeric } from "../metrics";
import { driftDefaults, driftParams } from "../params";
import { definePolicy } from "../policy";

const params = driftParams();
type Params = z.output<typeof params>;

const distributionDrift: Check<Params> = (ctx, p) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  // Quantities, codes and timestamps (fits).
  for (const a of ctx.attributes) {
    if (ignored(p, a)) continue;
    const kind = kindOf(ctx, a);
    let r: { finding?: Finding; training?: CheckResult["training"][number] } = {};
    if (kind === "quantity" && isNumeric(a)) {
      r = quantityDrift(ctx, p, a);
      const mode = r.finding || r.training ? undefined : modeShare(ctx, p, a);
      if (mode) r = { finding: mode };
      if (r.finding) r = { finding: withShift(ctx, r.finding, a) };
    } else if (kind === "code" && a.top_values.length > 0) {
      r = codeDrift(ctx, p, a);
    } else if (kind === "timestamp") {
      // Many rows stamped with one moment (a default, a load time written over the event time).
      const mode = modeShare(ctx, p, a);
      if (mode) r = { finding: mode };
    }
    if (r.finding) findings.push(r.finding);
    if (r.training) training.push(r.training);
  }
  return { findings, training };
};

export const distributionDriftPolicy = definePolicy({
  id: "distribution_drift",
  name: "Distribution drift",
  description:
    "Quantities: the quantile profile's largest CDF gap from the baseline (a KS distance) exceeds both the KS critical distance at alpha for the row count and the past scans' own distances. A quantity with atoms (exact values holding 5 % of its values or more, a toll of 0) has each atom's share judged as a category against its past scans, and the rest of its values by the KS distance their knots prove, so a share of zeros moving within its usual range is no drift. Codes: a new category (min_share and min_count), a vanished one (had vanish_share), or shares moved beyond their history's spread and sampling, by at least min_shift (or min_rel_shift of a smaller category's share), with a G-test below alpha.",
  dimension: "accuracy",
  priority: "LOW",
  kind: "anomaly",
  fits: ["quantity", "code", "timestamp"],
  scope: ["attribute", "segment"],
  after: [],
  params,
  defaults: { ...driftDefaults },
  score: "penalty",
  details:
    "quantities: KS distance of the quantile profiles above both the KS critical value (α 1e-6) and the past scans' own distances (where those distances follow a weekly or daily cycle, at least those of the same phase: strategy `ks_quantiles_seasonal`); with atoms (values holding ≥ 5 %), each atom's share rising or falling beyond its past scans (share test, z 3.5, ≥ 0.5 point), then the rest of the values by KS on their own CDF (at least 2 quantiles inside it; the gap its knots prove, between knots a CDF only bounded); codes: when every value is listed (up to 256), a new category (≥ 5 rows and ≥ 0.5 % beyond the share of new values the window's scans brought; or more scattered never-seen values than any of its scans brought) or a vanished one (had ≥ 1 %); always a share moved beyond sampling (times the dispersion of the column's shares between its past scans, Pearson χ² over its degrees of freedom, and with the baseline median's own uncertainty) and its spread by ≥ 5 points or, for a smaller category, ≥ 20 % of its share (≥ 0.5 point), with a G-test p < 1e-6, a rare value (< 0.5 %) whose count surged (Poisson p < 1e-6, ≥ 5 rows over its usual count); quantities and timestamps: the most frequent value's share rising (share test, z 3.5, ≥ 0.5 point)",
  check: distributionDrift,
});
