/**
 * uniqueness: how many rows repeat an earlier one, by the asset's id attributes, by every
 * attribute, or within an identifier attribute.
 */
import { z } from "zod";
import { baselinePoints } from "../anomaly";
import {
  assetName,
  type Check,
  type Finding,
  fmt,
  ignored,
  investigating,
  pct,
  round,
  shareTest,
  trainingWindow,
  withInvestigation,
} from "../checks/common";
import { investigateDuplicates } from "../investigate";
import { attrMetric, nonNull } from "../metrics";
import { ignoreAttributes, shareDefaults, shareShape } from "../params";
import { definePolicy } from "../policy";

const params = z.strictObject({
  ...shareShape,
  max_duplicates: z.number().int().min(0),
  duplicate_rows: z.boolean(),
  watch_unique_attributes: z.boolean(),
  min_unique_scans: z.number().int().min(1).max(1000),
  ignore_attributes: ignoreAttributes,
});
type Params = z.output<typeof params>;

/** The metric of the share of rows that repeat an earlier row exactly. */
export const DUPLICATE_ROW_RATE = "duplicate_row_rate";

const uniqueness: Check<Params> = (ctx, p) => {
  const findings: Finding[] = [];
  const ids = [...ctx.idAttributes];
  const dup = ctx.profile.duplicate_count;
  const dupFired = ids.length > 0 && dup !== undefined && dup > p.max_duplicates;
  if (dupFired) {
    const where = investigating(ctx) ? investigateDuplicates(ctx.profile, "duplicate_ids") : [];
    const finding: Finding = {
      attribute: ids.join(","),
      metric: "duplicate_count",
      observed: dup,
      expected: { low: 0, high: p.max_duplicates },
      description: `${dup} rows of ${assetName(ctx)} repeat the id (${ids.join(", ")}) of an earlier row; expected ${p.max_duplicates === 0 ? "none" : `at most ${p.max_duplicates}`}.`,
      strategy: "threshold",
      adaptable: false,
      exclude: ["duplicate_count"],
    };
    findings.push(withInvestigation(finding, where, "rows repeating an id"));
  }
  // Whole rows repeated: found without id attributes; rows with a repeated id already said so.
  const rows = ctx.profile.row_count;
  const repeated = ctx.profile.duplicate_rows;
  if (p.duplicate_rows && !dupFired && repeated !== undefined && rows > 0) {
    // No max_rate: judged only against history, since some tables hold repeated rows by design.
    const v = shareTest(ctx.history[DUPLICATE_ROW_RATE], ctx.input.job_id, repeated, rows, p);
    if (v.fires) {
      const rate = repeated / rows;
      const where = investigating(ctx) ? investigateDuplicates(ctx.profile, "duplicate_rows") : [];
      const finding: Finding = {
        metric: DUPLICATE_ROW_RATE,
        observed: round(rate),
        metric_value: fmt(rate),
        expected: { low: 0, high: round(v.limit) },
        description: `${repeated} rows of ${assetName(ctx)} (${pct(rate)}) repeat an earlier row exactly, above the allowed ${pct(v.limit)} (${v.why}).`,
        strategy: "wilson_share",
        training_size: v.past.length,
        ...trainingWindow(v.past[0]?.time, v.past[v.past.length - 1]?.time),
        deviation: v.deviation,
        adaptable: true,
        exclude: [DUPLICATE_ROW_RATE],
      };
      findings.push(withInvestigation(finding, where, "repeated rows"));
    }
  }
  if (!p.watch_unique_attributes) return { findings, training: [] };
  // Identifiers only (fits).
  for (const a of ctx.attributes) {
    const present = nonNull(a);
    // A lost key is already reported by the duplicate count.
    if (ignored(p, a) || present < 2 || (dupFired && ctx.idAttributes.has(a.name))) continue;
    if (a.name === ctx.input.asset.timestamp_attribute) continue;
    // An estimated distinct count is within ~2 %: do not read estimation noise as lost uniqueness.
    const tolerance = a.distinct_exact ? 0 : 0.03;
    const metric = attrMetric(a.name, "unique_ratio");
    const ratio = Math.min(1, a.distinct / present);
    const past = baselinePoints(ctx.history[metric], ctx.input.job_id).slice(-p.window);
    const wasUnique = past.length >= p.min_unique_scans && past.every((h) => h.value >= 1 - tolerance);
    if (!wasUnique || ratio >= 1 - tolerance) continue;
    findings.push({
      attribute: a.name,
      metric,
      observed: round(ratio),
      metric_value: fmt(ratio),
      expected: { low: 1 - tolerance, high: 1 },
      description: `Attribute ${a.name} (identifier) of ${assetName(ctx)} was unique in the last ${past.length} scans and now has ${a.distinct} distinct values among ${present} (${pct(ratio)} unique${tolerance > 0 ? `, expected at least ${pct(1 - tolerance)}: its distinct count is an estimate` : ""}).`,
      strategy: "threshold",
      training_size: past.length,
      ...trainingWindow(past[0]?.time, past[past.length - 1]?.time),
      adaptable: true,
      exclude: [metric],
    });
  }
  return { findings, training: [] };
};

export const uniquenessPolicy = definePolicy({
  id: "uniqueness",
  name: "Uniqueness",
  description:
    "Rows repeat the id attributes of earlier rows (more than max_duplicates); the share of rows that repeat an earlier row exactly rises (a share test, like completeness); or an identifier attribute that was unique in every recent scan is no longer.",
  dimension: "consistency",
  priority: "HIGH",
  kind: "rule",
  // Only identifiers are keys; measures and timestamps are unique by chance and lose it by chance
  // (two events in the same millisecond are not a data problem).
  fits: ["identifier"],
  scope: ["asset", "attribute", "segment"],
  after: [],
  params,
  defaults: {
    ...shareDefaults,
    max_duplicates: 0,
    duplicate_rows: true,
    watch_unique_attributes: true,
    min_unique_scans: 7,
    ignore_attributes: [],
  },
  // The consistency share counts the rows repeating an id.
  score: { measured: ["duplicate_count"] },
  details:
    "rows repeating the id attributes > 0; share of rows that repeat an earlier row exactly (share test); an identifier unique in the last 7+ scans that no longer is",
  check: uniqueness,
});
