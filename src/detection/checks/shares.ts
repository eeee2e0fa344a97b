/**
 * The rate policies' finding (completeness, type_mismatch): the share of bad values of an
 * attribute against its own history by a test that knows the row count (see shareTest).
 */
import type { AttributeProfile } from "../../contracts/profile";
import {
  type CheckContext,
  type Finding,
  fmt,
  pct,
  round,
  type ShareTestParams,
  shareTest,
  trainingWindow,
} from "./common";

/** One attribute's share of k bad values in n, judged and, when it fires, written as a finding. */
export function shareFinding(
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
