/** cardinality_drift: the distinct count of an attribute, against the band its history predicts. */
import { z } from "zod";
import { baselinePoints, detect, median } from "../anomaly";
import {
  anomalyFields,
  assetName,
  bandText,
  type Check,
  type CheckResult,
  countBand,
  deviationFrom,
  type Finding,
  fmt,
  ignored,
  kindOf,
} from "../checks/common";
import { attrMetric, nonNull } from "../metrics";
import { anomalyDefaults, anomalyShape, ignoreAttributes } from "../params";
import { definePolicy } from "../policy";

const params = z.strictObject({ ...anomalyShape, ignore_attributes: ignoreAttributes });
type Params = z.output<typeof params>;

const cardinalityDrift: Check<Params> = (ctx, p, earlier) => {
  const findings: Finding[] = [];
  const training: CheckResult["training"] = [];
  // A lost key explains its distinct drop; uniqueness has already said so.
  const flagged = new Set(earlier.filter((al) => al.policy === "uniqueness").map((al) => al.attribute));
  for (const a of ctx.attributes) {
    const kind = kindOf(ctx, a);
    if (ignored(p, a) || ctx.idAttributes.has(a.name) || flagged.has(a.name)) continue;
    const metric = attrMetric(a.name, "distinct");
    const r = detect(ctx.history[metric], a.distinct, ctx.input.job_id, ctx.input.scan_time, p);
    if (r.state === "training") {
      training.push({ metric, attribute: a.name, points: r.window_size, needed: r.needed });
      continue;
    }
    if (!r.anomalous || !r.expected || r.baseline === undefined) continue;
    // Fewer (more) values can only show fewer (more) distinct ones, and at most in proportion:
    // scale the band by the change in non-null values so a row drop is row_count's alert alone.
    const pastValues = baselinePoints(ctx.history[attrMetric(a.name, "non_null")], ctx.input.job_id)
      .slice(-Math.max(p.window, p.min_history))
      .map((h) => h.value);
    const usualValues = pastValues.length > 0 ? median(pastValues) : nonNull(a);
    // An attribute that usually has no value (empty in its first batches) has no distinct count
    // to compare with: its first values are not a change of cardinality.
    if (!(usualValues > 0)) continue;
    const f = nonNull(a) / usualValues;
    const half = (r.expected.high - r.expected.low) / 2;
    // Whole counts, never below 0 nor above the values there are.
    const band = countBand(
      { low: Math.min(1, f) * r.baseline - half, high: Math.max(1, f) * r.baseline + half },
      nonNull(a),
    );
    if (a.distinct >= band.low && a.distinct <= band.high) continue;
    const { strategyText: how, ...fields } = anomalyFields(r, p);
    const scaled = f === 1 ? "" : `, scaled to ${nonNull(a)} non-null values against the usual ${fmt(usualValues)}`;
    findings.push({
      attribute: a.name,
      metric,
      observed: a.distinct,
      expected: band,
      description: `Attribute ${a.name} (${kind}) of ${assetName(ctx)} has ${a.distinct} distinct values, outside the expected ${bandText(band)} (${how}${scaled}).`,
      ...fields,
      deviation: deviationFrom(a.distinct, band),
      adaptable: true,
      exclude: [metric],
    });
  }
  return { findings, training };
};

export const cardinalityDriftPolicy = definePolicy({
  id: "cardinality_drift",
  name: "Cardinality drift",
  description:
    "The distinct count of an attribute leaves the band its history predicts, beyond what the change in non-null values explains.",
  dimension: "consistency",
  priority: "LOW",
  kind: "anomaly",
  // Identifiers are as many as the rows; timestamps as many as the moments.
  fits: ["code", "quantity", "text"],
  // A segment's distinct counts follow its size.
  scope: ["attribute"],
  // A lost key explains its distinct drop, and uniqueness says so first.
  after: ["uniqueness"],
  params,
  defaults: { ...anomalyDefaults("distinct"), ignore_attributes: [] },
  score: "penalty",
  bands: (metric) => metric.startsWith("attr:") && metric.endsWith(":distinct"),
  details:
    "distinct count out of its band (scaled by the non-null count; not judged while the attribute usually has no value; a weekly or daily cycle its history shows is taken out, strategy `seasonal`)",
  check: cardinalityDrift,
});
