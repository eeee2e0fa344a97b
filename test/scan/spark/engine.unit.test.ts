import { describe, expect, it } from "vitest";
import { DEFAULT_FULL_SCAN_THRESHOLD_BYTES, decideEngine, type EngineInputs } from "../../../src/scan/spark/engine";

const GiB = 1024 ** 3;
const base: EngineInputs = {
  reads: "files",
  onlyLightScan: false,
  fullScanRequested: false,
  sizeBytes: 10 * 1024 ** 2,
  thresholdBytes: DEFAULT_FULL_SCAN_THRESHOLD_BYTES,
  spark: { provider: "EMR" },
};
const none = { missing: "the tenant has no Spark job configuration" };

describe("light or full (the documented rule)", () => {
  it("keeps small files and warehouses in the Worker", () => {
    expect(decideEngine(base)).toEqual({ engine: "WORKER", reason: "light scan: within the Worker's budget" });
    expect(decideEngine({ ...base, reads: "tables", sizeBytes: undefined }).engine).toBe("WORKER");
  });

  it("sends files over the threshold to Spark, or says why they stayed light", () => {
    expect(decideEngine({ ...base, sizeBytes: 2 * GiB })).toEqual({
      engine: "SPARK",
      reason: "full scan: 2.0 GiB exceed the full-scan threshold of 1.0 GiB; runs on EMR",
    });
    expect(decideEngine({ ...base, sizeBytes: 2 * GiB, spark: none })).toEqual({
      engine: "WORKER",
      reason:
        "light scan although 2.0 GiB exceed the full-scan threshold of 1.0 GiB: the tenant has no Spark job configuration",
    });
  });

  it("takes the tenant's threshold instead of the default", () => {
    expect(decideEngine({ ...base, thresholdBytes: 5 * 1024 ** 2 }).engine).toBe("SPARK");
    expect(decideEngine({ ...base, sizeBytes: 2 * GiB, thresholdBytes: 4 * GiB }).engine).toBe("WORKER");
  });

  it("sends a HIVE_ICEBERG table of unknown or large size to Spark when there is one", () => {
    const iceberg = { ...base, reads: "metastore" as const, sizeBytes: undefined };
    expect(decideEngine(iceberg).engine).toBe("SPARK");
    expect(decideEngine({ ...iceberg, spark: none }).engine).toBe("WORKER");
    expect(decideEngine({ ...iceberg, sizeBytes: 1024 }).engine).toBe("WORKER");
  });

  it("runs a requested full scan on Spark, and fails it (NONE) without a provider", () => {
    expect(decideEngine({ ...base, reads: "tables", fullScanRequested: true }).engine).toBe("SPARK");
    expect(decideEngine({ ...base, fullScanRequested: true, spark: none })).toEqual({
      engine: "NONE",
      reason: "a full scan was requested but the tenant has no Spark job configuration",
    });
  });

  it("never leaves the Worker with only_light_scan, whatever was asked", () => {
    const light = { ...base, onlyLightScan: true, sizeBytes: 50 * GiB };
    expect(decideEngine(light)).toEqual({
      engine: "WORKER",
      reason: "light scan: the asset's only_light_scan is 'true'",
    });
    expect(decideEngine({ ...light, fullScanRequested: true }).reason).toBe(
      "light scan: the asset's only_light_scan is 'true'; the requested full scan was not run",
    );
  });
});
