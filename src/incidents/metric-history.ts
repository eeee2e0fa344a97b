/**
 * A metric's history for the metrics route: the points the asset's AssetMonitor keeps, with the
 * alerts on them (kept there too: incidents/alerts.ts), drawn with their bands (detection/metric-history.ts).
 */

import type { RecordedPoint } from "../contracts/asset-monitor";
import type { Db } from "../db";
import { bandParams, type MetricHistoryPoint, withBands } from "../detection/metric-history";
import type { PolicyOverrides } from "../detection/policies";
import type { Band } from "../detection/types";
import { type AlertSource, readAlerts } from "./alerts";

/** Where a metric's points come from: the asset's AssetMonitor (or anything that reads its history). */
export interface MetricSource extends AlertSource {
  metricSeries(metric: string): Promise<RecordedPoint[]>;
}

function isBand(x: unknown): x is Band {
  return (
    typeof x === "object" && x !== null && typeof (x as Band).low === "number" && typeof (x as Band).high === "number"
  );
}

/** A metric's recent history with its bands and alerting points, oldest first. */
export async function metricHistory(
  db: Db,
  source: MetricSource,
  asset: { tenantId: string; id: number },
  metric: string,
  overrides: PolicyOverrides,
): Promise<MetricHistoryPoint[]> {
  const [points, rows] = await Promise.all([source.metricSeries(metric), readAlerts(db, source, asset, { metric })]);
  const byJob = new Map<string, Array<MetricHistoryPoint["alerts"][number] & { expected?: Band }>>();
  for (const r of rows) {
    const expected = isBand(r.details.expected) ? r.details.expected : undefined;
    const list = byJob.get(r.jobId) ?? [];
    list.push({ id: r.id, type: r.type, priority: r.priority, description: r.description, expected });
    byJob.set(r.jobId, list);
  }
  return withBands(points, bandParams(metric, overrides), byJob);
}
