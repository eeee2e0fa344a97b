/** freshness: the age of the newest timestamp at scan time; a fixed rule, no baseline. */
import { z } from "zod";
import { assetName, type Check, fmt, round } from "../checks/common";
import { definePolicy } from "../policy";

const params = z.strictObject({ max_age_hours: z.number().positive().max(100_000) });
type Params = z.output<typeof params>;

/** An age of days or years in those words too: " (16.5 days)", " (45.2 years)"; nothing under two days. */
function inDays(hours: number): string {
  const days = hours / 24;
  if (days < 2) return "";
  return days < 730 ? ` (${days.toFixed(1)} days)` : ` (${(days / 365.25).toFixed(1)} years)`;
}

const freshness: Check<Params> = (ctx, p) => {
  const ts = ctx.input.asset.timestamp_attribute;
  if (!ts) return { findings: [], training: [] };
  const newest = ctx.profile.freshness;
  if (!newest) {
    if (ctx.profile.row_count <= 0) return { findings: [], training: [] };
    return {
      findings: [
        {
          attribute: ts,
          metric: "freshness_age_hours",
          observed: "unknown",
          metric_value: "unknown",
          expected: { low: 0, high: p.max_age_hours },
          unit: "hours",
          description: `Timestamp attribute ${ts} of ${assetName(ctx)} has no values, so the data's age is unknown; expected at most ${fmt(p.max_age_hours)} h.`,
          strategy: "threshold",
          adaptable: false,
          event: true,
          exclude: [],
        },
      ],
      training: [],
    };
  }
  const age = ctx.current.get("freshness_age_hours");
  if (age === undefined || !(age > p.max_age_hours)) return { findings: [], training: [] };
  return {
    findings: [
      {
        attribute: ts,
        metric: "freshness_age_hours",
        observed: round(age),
        metric_value: fmt(age),
        expected: { low: 0, high: p.max_age_hours },
        unit: "hours",
        description: `The newest ${ts} in ${assetName(ctx)} is ${newest}, ${fmt(age)} h${inDays(age)} before the scan at ${ctx.input.scan_time}; expected at most ${fmt(p.max_age_hours)} h.`,
        strategy: "threshold",
        adaptable: false,
        exclude: ["freshness_age_hours"],
      },
    ],
    training: [],
  };
};

export const freshnessPolicy = definePolicy({
  id: "freshness",
  name: "Freshness",
  description: "The newest value of the timestamp attribute is older than max_age_hours at scan time.",
  dimension: "timeliness",
  priority: "HIGH",
  kind: "rule",
  // The asset's timestamp_attribute, which is a timestamp.
  fits: ["timestamp"],
  // A segment is as fresh as its asset.
  scope: ["attribute"],
  after: [],
  params,
  defaults: { max_age_hours: 24 },
  // The timeliness share measures the age itself.
  score: "measured",
  details: "newest timestamp older than 24 h at scan time",
  check: freshness,
});
