/**
 * The DQ score of one scan, 0-100 per dimension and overall. Pure: the scan time is an input.
 *
 * Each dimension is a measured share (what the profile says) times an alert factor (what the
 * policies found that the share cannot see): Π (1 − penalty(priority)) over the scan's alerts of
 * that dimension, penalty HIGH 0.3, MEDIUM 0.2, LOW 0.1. Alerts whose measure is already the
 * base share (completeness, type_mismatch, duplicate_count, freshness) are not counted twice: each
 * policy's `score` says which (docs/policies.md lists them). With the prebuilt policies:
 *
 *   completeness = 100 · (1 − Σ(nulls + empties) / Σ count)                over the attributes
 *                  · factor(row_count_anomaly)
 *   accuracy     = 100 · (1 − Σ type_mismatches / Σ (count − nulls))
 *                  · factor(value_range, distribution_drift)
 *   consistency  = 100 · (1 − duplicate_count / row_count)
 *                  · factor(schema_change, pattern_drift, cardinality_drift,
 *                           uniqueness of an attribute that lost its uniqueness)
 *   timeliness   = 100 without a timestamp attribute; else 100 · min(1, max_age / age), age =
 *                  scan_time − freshness (0 when the attribute has no values)
 *   overall      = Σ w_d · score_d with the weights normalised to sum 1
 *
 * An empty share (no rows, no values) counts as 100: nothing measured is nothing wrong. Scores
 * are rounded to one decimal.
 */

import { DQ_DIMENSIONS, type DqScore, type DqWeights, normaliseWeights } from "../contracts/dimensions";
import type { AssetProfile } from "../contracts/profile";
import { POLICIES } from "./policies";
import type { PolicyRegistry } from "./registry";
import type { PolicyAlert, Priority } from "./types";

export const ALERT_PENALTY: Record<Priority, number> = { HIGH: 0.3, MEDIUM: 0.2, LOW: 0.1 };

export interface DqScoreOptions {
  /** ISO 8601 time of the scan. */
  scan_time: string;
  timestamp_attribute?: string;
  /** The freshness policy's threshold, default 24 h. */
  max_age_hours?: number;
}

const share = (bad: number, total: number) => (total > 0 ? Math.min(1, Math.max(0, 1 - bad / total)) : 1);
const round1 = (n: number) => Math.round(n * 10) / 10;

/** Scores a scan from its profile, its alerts and the asset's dimension weights. */
export function computeDqScore(
  profile: AssetProfile,
  alerts: readonly Pick<PolicyAlert, "policy" | "priority" | "metric">[],
  weights: DqWeights,
  opts: DqScoreOptions,
  policies: PolicyRegistry = POLICIES,
): DqScore {
  const attrs = profile.attributes;
  const sum = (f: (a: (typeof attrs)[number]) => number) => attrs.reduce((s, a) => s + f(a), 0);
  const factor: DqWeights = { completeness: 1, accuracy: 1, consistency: 1, timeliness: 1 };
  for (const al of alerts) {
    // Alerts whose measure is in the dimension's share already lower nothing more (ScoreEffect).
    const d = policies.penalised(al);
    if (d) factor[d] *= 1 - ALERT_PENALTY[al.priority];
  }
  const base: DqWeights = {
    completeness: share(
      sum((a) => a.nulls + a.empties),
      sum((a) => a.count),
    ),
    accuracy: share(
      sum((a) => a.type_mismatches),
      sum((a) => Math.max(0, a.count - a.nulls)),
    ),
    consistency: share(profile.duplicate_count ?? 0, profile.row_count),
    timeliness: timeliness(profile, opts),
  };
  const w = normaliseWeights(weights);
  const score = Object.fromEntries(DQ_DIMENSIONS.map((d) => [d, 100 * base[d] * factor[d]])) as DqWeights;
  const overall = DQ_DIMENSIONS.reduce((s, d) => s + w[d] * score[d], 0);
  return {
    completeness: round1(score.completeness),
    accuracy: round1(score.accuracy),
    consistency: round1(score.consistency),
    timeliness: round1(score.timeliness),
    overall: round1(overall),
  };
}

function timeliness(profile: AssetProfile, opts: DqScoreOptions): number {
  if (!opts.timestamp_attribute) return 1;
  if (!profile.freshness) return profile.row_count > 0 ? 0 : 1;
  const maxAge = opts.max_age_hours ?? 24;
  const age = (Date.parse(opts.scan_time) - Date.parse(profile.freshness)) / 3_600_000;
  if (!Number.isFinite(age)) return 0;
  return age <= maxAge ? 1 : maxAge / age;
}
