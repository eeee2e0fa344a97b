/** pattern_drift: the value shapes of a text attribute, by the category rules (checks/categories.ts). */
import type { z } from "zod";
import { PATTERN_LEGEND } from "../../scan/profiler/patterns";
import { counted, judgeShares, movedText } from "../checks/categories";
import {
  assetName,
  type Check,
  type CheckResult,
  type Finding,
  ignored,
  investigating,
  kindOf,
  trainingWindow,
  withInvestigation,
} from "../checks/common";
import { investigatePatterns } from "../investigate";
import { attrMetric, escapeName, isNumeric, nonNull, patternPrefix } from "../metrics";
import { driftDefaults, driftParams } from "../params";
import { definePolicy } from "../policy";

const params = driftParams();
type Params = z.output<typeof params>;

const patternDrift: Check<Params> = (ctx, p) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  for (const a of ctx.attributes) {
    // Numeric shapes follow the values, which value_range and distribution_drift watch.
    if (ignored(p, a) || isNumeric(a) || a.patterns.length === 0) continue;
    const kind = kindOf(ctx, a);
    const metric = attrMetric(a.name, "pattern_shares");
    const total = nonNull(a);
    const counts = new Map(a.patterns.map((pt) => [escapeName(pt.pattern), Math.round(pt.share * total)]));
    const complete = a.patterns.reduce((s, pt) => s + pt.share, 0) >= 0.999;
    // Free text takes new shapes all the time; codes and identifiers do not.
    const judged = judgeShares(
      ctx,
      patternPrefix(a.name),
      counts,
      total,
      complete,
      p,
      kind !== "text",
      attrMetric(a.name, "non_null"),
    );
    if (!judged) continue;
    if ("training" in judged) {
      training.push({ metric, attribute: a.name, points: judged.training, needed: p.min_history });
      continue;
    }
    if (judged.moved.length === 0) continue;
    const rising = judged.moved.filter((m) => m.change === "new" || m.change === "up").map((m) => m.value);
    const where = investigating(ctx) && rising.length ? investigatePatterns(ctx.profile, a.name, rising) : [];
    const finding: Finding = {
      attribute: a.name,
      metric,
      observed: judged.moved.length,
      metric_value: movedText(judged, total),
      expected: `the value patterns of the last ${judged.scans} scans`,
      description: `The value patterns of attribute ${a.name} (${kind}) in ${assetName(ctx)} changed from its baseline of the last ${judged.scans} scans, ${counted(judged.moved.length, "pattern")}: ${movedText(judged, total)}. Patterns: ${PATTERN_LEGEND}.`,
      strategy: "pattern_shares",
      training_size: judged.scans,
      ...trainingWindow(judged.from, judged.to),
      values: judged.moved,
      deviation: judged.deviation,
      adaptable: true,
      exclude: [
        ...[...counts.keys()].map((k) => `${patternPrefix(a.name)}${k}`),
        attrMetric(a.name, "top_pattern_share"),
      ],
    };
    findings.push(withInvestigation(finding, where, `values of ${a.name} with a new or rising pattern`));
  }
  return { findings, training };
};

export const patternDriftPolicy = definePolicy({
  id: "pattern_drift",
  name: "Pattern drift",
  description:
    "The value shapes of a text attribute change from its baseline, by the rules of categories: a new shape (not for free text), a vanished one, or shares that moved.",
  dimension: "consistency",
  priority: "MEDIUM",
  kind: "anomaly",
  // Not timestamps, whose shapes are their format; of the others, only values that are not numbers.
  fits: ["identifier", "code", "quantity", "text"],
  scope: ["attribute", "segment"],
  after: [],
  params,
  defaults: { ...driftDefaults },
  score: "penalty",
  details: 'the category rules over value shapes (no "new shape" for free text)',
  check: patternDrift,
});
