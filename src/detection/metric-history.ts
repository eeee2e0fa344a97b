/**
 * A metric's history as a person reads it: each point as measured, with the band the anomaly
 * detector expected at that point and the alerts raised on it. An alert's own band wins: it is
 * the band the scan was judged by. Otherwise the band is rebuilt from the points before it as
 * the detector saw them then: a point adopted levels had moved by the time `p` was judged are
 * moved by the difference of their offsets (offset_j − offset_p), so a band after an adopted
 * change sits at the new level and one before it at the old. Metrics judged by share tests (rates) get the robust-z band of their
 * kind, an indication of their usual range rather than the test itself.
 */
import type { RecordedPoint } from "../contracts/asset-monitor";
import { type AnomalyParams, DEFAULT_ANOMALY_PARAMS, detect } from "./anomaly";
import { type MetricKind, MIN_CHANGE_BY_KIND } from "./metrics";
import { POLICIES } from "./policies";
import type { PolicyRegistry } from "./registry";
import type { Band, PolicyOverridesById } from "./types";

export interface MetricHistoryPoint {
  job_id: string;
  time: string;
  value: number;
  /** Kept out of the baselines (an anomalous point not accepted yet). */
  excluded: boolean;
  /** The band expected at this point; null while the detector was still learning. */
  expected: Band | null;
  /** Alerts raised on this point's metric by its scan. */
  alerts: Array<{ id: number; type: string; priority: string; description: string }>;
}

function kindOf(metric: string): MetricKind {
  if (metric === "row_count" || metric === "duplicate_count") return "count";
  if (metric.endsWith(":distinct") || metric.endsWith(":non_null")) return "distinct";
  if (/(_rate|_share|_ratio)$/.test(metric) || metric.includes(":value:") || metric.includes(":pattern:"))
    return "rate";
  return "value";
}

/** The anomaly parameters that draw a metric's band: its policy's where one judges it by a band (its `bands`). */
export function bandParams(
  metric: string,
  overrides: PolicyOverridesById = {},
  policies: PolicyRegistry = POLICIES,
): AnomalyParams {
  const owner = policies.bandsOf(metric);
  // The registry made sure a policy that draws bands has the anomaly detector's parameters.
  if (owner) return { ...policies.resolve(overrides)[owner.id]!.params } as unknown as AnomalyParams;
  const kind = MIN_CHANGE_BY_KIND[kindOf(metric)];
  return { ...DEFAULT_ANOMALY_PARAMS, min_abs_change: kind.absolute, min_rel_change: kind.relative };
}

/** Each point with the band the points before it give, and the alerts on it (pure). */
export function withBands(
  points: readonly RecordedPoint[],
  params: AnomalyParams,
  alertsByJob: ReadonlyMap<string, Array<MetricHistoryPoint["alerts"][number] & { expected?: Band }>>,
): MetricHistoryPoint[] {
  return points.map((p, i) => {
    const onPoint = alertsByJob.get(p.job_id) ?? [];
    const judged = onPoint.find((a) => a.expected)?.expected;
    const seen = points.slice(0, i).map((q) => ({ ...q, value: q.value + q.offset - p.offset }));
    const rebuilt = detect(seen, p.value, p.job_id, p.time, params).expected;
    return {
      job_id: p.job_id,
      time: p.time,
      value: p.value,
      excluded: p.excluded,
      expected: judged ?? rebuilt ?? null,
      alerts: onPoint.map(({ id, type, priority, description }) => ({ id, type, priority, description })),
    };
  });
}
