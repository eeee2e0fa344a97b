/** Policy evaluation for the AssetMonitor: pure functions of a profile, its history and settings. */
export * from "./anomaly";
export * from "./divergence";
export * from "./evaluate";
export * from "./metrics";
export * from "./policies";
export * from "./types";
