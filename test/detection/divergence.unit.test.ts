import { describe, expect, it } from "vitest";
import { componentBaseline, type MetricHistory, quantileCdf } from "../../src/detection";

describe("quantileCdf", () => {
  it("reads a CDF off the quantiles at QUANTILE_POINTS, right-continuous at ties", () => {
    const q = [0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100]; // a uniform 0..100
    expect(quantileCdf(q, -1)).toBe(0);
    expect(quantileCdf(q, 50)).toBeCloseTo(0.5, 12);
    expect(quantileCdf(q, 60)).toBeCloseTo(0.6, 12);
    expect(quantileCdf(q, 100)).toBe(1);
    const tied = [1, 1, 1, 2, 2, 3, 3, 3, 4, 4, 4];
    expect(quantileCdf(tied, 1)).toBeCloseTo(0.05, 12);
    expect(quantileCdf(tied, 3)).toBeCloseTo(0.9, 12);
  });
});

describe("componentBaseline", () => {
  const pt = (job: string, day: number, value: number, excluded = false) => ({
    job_id: job,
    time: new Date(Date.UTC(2025, 0, day)).toISOString(),
    value,
    excluded,
  });
  const history: MetricHistory = {
    "attr:e:pattern:a@a.a": [pt("j1", 1, 0.8), pt("j2", 2, 0.7), pt("j3", 3, 0.9), pt("j4", 4, 0.1, true)],
    "attr:e:pattern:a": [pt("j1", 1, 0.2), pt("j3", 3, 0.1), pt("j4", 4, 0.9, true)],
    "attr:e:top_pattern_share": [pt("j1", 1, 0.8)],
  };

  it("takes per part the median over the scans that have a non-excluded part, missing parts as 0", () => {
    const b = componentBaseline(history, { prefix: "attr:e:pattern:" }, "now", 30, 0);
    expect(b.scans).toBe(3);
    expect(b.values.get("a@a.a")).toBeCloseTo(0.8, 12);
    expect(b.values.get("a")).toBeCloseTo(0.1, 12); // median of 0.2, 0 (j2), 0.1
    expect(b).toMatchObject({ from: "2025-01-01T00:00:00.000Z", to: "2025-01-03T00:00:00.000Z" });
  });

  it("keeps the last window scans, and takes a fixed list of metrics", () => {
    const b = componentBaseline(history, { prefix: "attr:e:pattern:" }, "now", 2, 0);
    expect(b.scans).toBe(2);
    expect(b.values.get("a@a.a")).toBeCloseTo(0.8, 12); // median of 0.7, 0.9
    const listed = componentBaseline(history, { metrics: ["attr:e:pattern:a"] }, "now", 30, undefined);
    expect(listed.scans).toBe(2);
    expect(listed.values.get("attr:e:pattern:a")).toBeCloseTo(0.15, 12);
  });
});
