/**
 * Light and full scans agree: the comparison of the Worker's profile of a dataset with the Spark
 * driver's (docs/resources/light-and-full-scans.md, "What was and was not run here"). Counts, nulls, empties,
 * type counts and mismatches, inferred types, min/max, top values (below the Worker's 1,000
 * SpaceSaving counters) and freshness are equal; mean, stddev and mean length agree to 1e-9
 * relative; distinct counts within 2 %; each quantile's normalized rank in the data within 1 %.
 * Both lanes use it (expect.soft: every difference is reported).
 */

import { expect } from "vitest";
import type { AssetProfile, AttributeProfile } from "../../src/contracts/profile";

/** The Worker's SpaceSaving counters per attribute (ProfileBuilderOptions.topCapacity default). */
const TOP_CAPACITY = 1000;

/** The normalized rank of `v` among the sorted values (midpoint of its ties). */
function rank(sorted: number[], v: number): number {
  let below = 0;
  let equal = 0;
  for (const x of sorted) {
    if (x < v) below++;
    else if (x === v) equal++;
  }
  return (below + equal / 2) / sorted.length;
}

/** `numbers`: each numeric attribute's values, sorted, to judge quantiles by their rank. */
export function expectSameProfile(worker: AssetProfile, full: AssetProfile, numbers: Record<string, number[]>) {
  expect(full.row_count).toBe(worker.row_count);
  expect(full.duplicate_count).toBe(worker.duplicate_count);
  expect(full.duplicate_rows).toBe(worker.duplicate_rows);
  expect(Date.parse(String(full.freshness))).toBe(Date.parse(String(worker.freshness)));
  expect(full.attributes.map((a) => a.name)).toEqual(worker.attributes.map((a) => a.name));
  for (const w of worker.attributes) {
    const f = full.attributes.find((a) => a.name === w.name) as AttributeProfile;
    const exact = (a: AttributeProfile) => ({
      name: a.name,
      inferred_type: a.inferred_type,
      nulls: a.nulls,
      empties: a.empties,
      type_counts: a.type_counts,
      type_mismatches: a.type_mismatches,
      min: a.min,
      max: a.max,
      // SpaceSaving (1,000 counters) is exact below 1,000 distinct values; above, its counts overestimate.
      top_values: w.distinct < TOP_CAPACITY ? a.top_values : undefined,
    });
    expect.soft(exact(f)).toEqual(exact(w));
    expect.soft(Math.abs(f.distinct - w.distinct)).toBeLessThanOrEqual(Math.max(1, 0.02 * w.distinct));
    for (const key of ["mean", "stddev", "mean_length"] as const) {
      expect
        .soft({ name: w.name, key, has: f[key] !== undefined })
        .toEqual({ name: w.name, key, has: w[key] !== undefined });
      if (w[key] !== undefined && f[key] !== undefined)
        expect.soft((f[key] as number) / (w[key] as number)).toBeCloseTo(1, 9);
    }
    const sorted = numbers[w.name];
    expect
      .soft({ name: w.name, quantiles: f.quantiles?.length })
      .toEqual({ name: w.name, quantiles: w.quantiles?.length });
    if (w.quantiles && f.quantiles && sorted) {
      w.quantiles.forEach((q, i) => {
        expect.soft(Math.abs(rank(sorted, q) - rank(sorted, f.quantiles?.[i] as number))).toBeLessThanOrEqual(0.01);
      });
    }
  }
}
