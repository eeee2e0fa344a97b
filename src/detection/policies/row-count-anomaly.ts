/** row_count_anomaly: how many rows, against the band the asset's own history predicts. */
import { z } from "zod";
import { detect } from "../anomaly";
import {
  anomalyFields,
  assetName,
  bandText,
  type Check,
  countBand,
  deviationFrom,
  type Finding,
  investigating,
  withInvestigation,
} from "../checks/common";
import { investigateRowDrop } from "../investigate";
import { anomalyDefaults, anomalyShape } from "../params";
import { definePolicy } from "../policy";

const params = z.strictObject(anomalyShape);
type Params = z.output<typeof params>;

const rowCountAnomaly: Check<Params> = (ctx, p) => {
  const x = ctx.profile.row_count;
  const r = detect(ctx.history.row_count, x, ctx.input.job_id, ctx.input.scan_time, p);
  if (r.state === "training") {
    return { findings: [], training: [{ metric: "row_count", points: r.window_size, needed: r.needed }] };
  }
  if (!r.anomalous || !r.expected) return { findings: [], training: [] };
  const band = countBand(r.expected);
  if (x >= band.low && x <= band.high) return { findings: [], training: [] };
  const { strategyText: how, ...fields } = anomalyFields(r, p);
  // A drop: which values lost the rows (the investigator, from the category shares in history).
  const investigation =
    x < band.low && investigating(ctx) ? investigateRowDrop(ctx.profile, ctx.history, ctx.input.job_id) : [];
  const finding: Finding = {
    metric: "row_count",
    observed: x,
    expected: band,
    description: `Row count of ${assetName(ctx)} is ${x}, outside the expected ${bandText(band)} (${how}).`,
    ...fields,
    deviation: deviationFrom(x, band),
    adaptable: true,
    exclude: ["row_count"],
  };
  return {
    findings: [withInvestigation(finding, investigation, "rows lost")],
    training: [],
  };
};

export const rowCountAnomalyPolicy = definePolicy({
  id: "row_count_anomaly",
  name: "Row count anomaly",
  description: "The asset's row count leaves the band its own history predicts.",
  dimension: "completeness",
  priority: "HIGH",
  kind: "anomaly",
  fits: [],
  scope: ["asset", "segment"],
  after: [],
  params,
  defaults: anomalyDefaults("count"),
  score: "penalty",
  bands: (metric) => metric === "row_count",
  details:
    "robust z over 30 scans, threshold 3.5; band at least ±max(10 rows, 0.5 %); a weekly or daily cycle its history shows is taken out: the scan is judged against the same phase (strategy `seasonal`)",
  check: rowCountAnomaly,
});
