import { describe, expect, it } from "vitest";
import { attrMetric, escapeName, extractMetrics, isCategorical, unescapeName } from "../../src/detection";
import { ORDERS, ordersScan, profileRows } from "./fixtures";

describe("extractMetrics", () => {
  const scan = ordersScan(0);
  const points = extractMetrics(scan.profile, ORDERS, scan.scan_time);
  const get = (m: string) => points.find((p) => p.metric === m);

  it("names the asset and attribute series the policies watch", () => {
    expect(get("row_count")?.value).toBe(scan.profile.row_count);
    expect(get("duplicate_count")?.value).toBe(0);
    expect(get("freshness_age_hours")!.value).toBeGreaterThanOrEqual(0);
    expect(get("freshness_age_hours")!.value).toBeLessThan(12);
    const amount = scan.profile.attributes.find((a) => a.name === "amount")!;
    expect(get("attr:amount:null_rate")).toEqual({
      metric: "attr:amount:null_rate",
      value: amount.nulls / amount.count,
      attribute: "amount",
    });
    for (const stat of [
      "missing_rate",
      "distinct",
      "unique_ratio",
      "type_mismatch_rate",
      "mean",
      "min",
      "max",
      "p50",
    ]) {
      expect(get(`attr:amount:${stat}`), stat).toBeDefined();
    }
    expect(get("attr:amount:p99")?.value).toBe(amount.quantiles![9]);
    expect(get("attr:email:unique_ratio")?.value).toBe(1);
    expect(get("attr:email:mean")).toBeUndefined();
    expect(get("attr:email:pattern:a9@a.a")!.value).toBeGreaterThan(0.6);
    expect(get("attr:email:top_pattern_share")!.value).toBe(get("attr:email:pattern:a9@a.a")!.value);
  });

  it("records category shares only for categorical attributes", () => {
    const country = scan.profile.attributes.find((a) => a.name === "country")!;
    expect(isCategorical(country)).toBe(true);
    const shares = points.filter((p) => p.metric.startsWith("attr:country:value:"));
    expect(shares).toHaveLength(6);
    expect(shares.reduce((s, p) => s + p.value, 0)).toBeCloseTo(1, 12);
    expect(points.some((p) => p.metric.startsWith("attr:email:value:"))).toBe(false);
  });

  it("escapes names so that one can never read as another's prefix", () => {
    expect(attrMetric("a:b", "mean")).toBe("attr:a%3Ab:mean");
    expect(unescapeName(escapeName("50%:x"))).toBe("50%:x");
    const p = profileRows([{ name: "t:1", type: "string" }], [{ "t:1": "x" }, { "t:1": "" }, { "t:1": null }]);
    const m = extractMetrics(p, { id: 1, name: "n", type: "CSV" }, "2025-01-01T00:00:00Z");
    expect(m.find((x) => x.metric === "attr:t%3A1:missing_rate")?.value).toBeCloseTo(2 / 3, 12);
    expect(m.find((x) => x.metric === "duplicate_count")).toBeUndefined();
  });
});
