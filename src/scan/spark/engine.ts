/**
 * Light or full: where a scan runs (docs/resources/light-and-full-scans.md). A light scan runs in the
 * Worker (SQL pushdown, streamed files); a full scan runs on the tenant's Spark cluster.
 *
 * The rule, in order:
 * 1. `only_light_scan: 'true'` on the asset: the Worker, always (sampled by the asset's options).
 * 2. `{"full_scan": true}` on the request: Spark; without a Spark provider the job FAILS, saying why.
 * 3. Files (a connection type with an object store) whose listed size exceeds the threshold (default
 *    1 GiB, the tenant's `full_scan_threshold_bytes` overrides it), and Iceberg tables found through a
 *    metastore (HIVE_ICEBERG) whose current snapshot's
 *    data files (sizes from its manifests) exceed it, or whose size is not known: Spark when a
 *    provider is configured, else the Worker, with the reason recorded on the job.
 * 4. Everything else (warehouses and databases push SQL down; small files): the Worker.
 */

/**
 * A Worker streams about 25 MB/s of CSV (bench:profile before issue 17,
 * bench/log/2026-11-22-profile-before-issue-17.md): 1 GiB is ~45 s of a queue consumer's CPU.
 */
export const DEFAULT_FULL_SCAN_THRESHOLD_BYTES = 1024 ** 3;

/**
 * What an asset's scan reads, as its connection type's module says (src/connections; scan/ does not
 * import it): files in an object store, Iceberg tables found through a metastore, or tables a SQL
 * runner pushes down to (and anything else).
 */
export type ScanSource = "files" | "metastore" | "tables";

export interface EngineInputs {
  reads: ScanSource;
  onlyLightScan: boolean;
  fullScanRequested: boolean;
  /** Bytes the scan would read, when known before reading (listed files). */
  sizeBytes?: number;
  thresholdBytes: number;
  /** The provider a full scan would go to, or why there is none. */
  spark: { provider: string } | { missing: string };
}

export type EngineDecision =
  | { engine: "WORKER"; reason: string }
  | { engine: "SPARK"; reason: string }
  | { engine: "NONE"; reason: string };

/** Bytes as a person reads them: 812 bytes, 3.5 KiB, 120.0 MiB, 2.0 GiB. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const [unit, scale] = bytes < 1024 ** 2 ? ["KiB", 1024] : bytes < 1024 ** 3 ? ["MiB", 1024 ** 2] : ["GiB", 1024 ** 3];
  return `${(bytes / scale).toFixed(1)} ${unit}`;
}

/** Where a scan runs, and why, in words shown on the job. */
export function decideEngine(inputs: EngineInputs): EngineDecision {
  const { spark } = inputs;
  if (inputs.onlyLightScan) {
    const asked = inputs.fullScanRequested ? "; the requested full scan was not run" : "";
    return { engine: "WORKER", reason: `light scan: the asset's only_light_scan is 'true'${asked}` };
  }
  if (inputs.fullScanRequested) {
    if ("provider" in spark) return { engine: "SPARK", reason: `full scan requested: runs on ${spark.provider}` };
    return { engine: "NONE", reason: `a full scan was requested but ${spark.missing}` };
  }
  const over = inputs.sizeBytes !== undefined && inputs.sizeBytes > inputs.thresholdBytes;
  const iceberg = inputs.reads === "metastore" && (inputs.sizeBytes === undefined || over);
  if ((inputs.reads === "files" && over) || iceberg) {
    const why =
      inputs.sizeBytes === undefined
        ? "the table's size is not known before reading it"
        : `${size(inputs.sizeBytes)} exceed the full-scan threshold of ${size(inputs.thresholdBytes)}`;
    if ("provider" in spark) return { engine: "SPARK", reason: `full scan: ${why}; runs on ${spark.provider}` };
    return { engine: "WORKER", reason: `light scan although ${why}: ${spark.missing}` };
  }
  return { engine: "WORKER", reason: "light scan: within the Worker's budget" };
}
