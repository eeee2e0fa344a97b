/**
 * bench/capacity: from a sample's measurements (sample.ts) to a workload's figures. Everything per
 * scan is measured; the workload only multiplies:
 *
 * - D1 bytes: a clean scan's share is the clean phase's growth of the tables and indexes ÷ its
 *   scans; an alerting scan's extra is the alert phase's growth less as many clean scans, ÷ the
 *   broken batches. What a tenant keeps whatever its age (catalog, and anything retention does not
 *   remove) is what is left after the retention run, per asset. Steady state: that, plus data_ttl + 1
 *   days of scans (retention runs once a day, so a day's worth waits for it).
 * - D1 bytes per asset and day: rows a scan adds only as the first of its asset's day and retention
 *   removes (an audit tally, decision 0014): the first round's growth of the tables retention
 *   empties, less as many scans at the clean phase's rate, per asset (bytes in use, priced as pages
 *   at the clean phase's ratio of page bytes to bytes in use). The sample runs within one UTC day.
 * - D1 write rate: a tenant's scan-path statements per second against the statements per second one
 *   database runs one at a time, at the probed cost of a statement on the local D1 (meter.ts).
 * - Durable Objects: the same growth arithmetic over all objects' files, per asset.
 */
import { type D1Counts, zeroCounts } from "./meter";
import { type SampleResult, total } from "./sample";
import { allObjects, inUseBytes, type Snapshot, usedBytes } from "./storage";

export interface Workload {
  tenants: number;
  assets: number;
  scansPerDay: number;
  alertRate: number;
  ttlDays: number;
}

/** D1's limits as Cloudflare documents them (developers.cloudflare.com/d1/platform/limits/). */
export const D1_MAX_BYTES = 10 * 1e9;

export interface Figures {
  sampleAssets: number;
  cleanScans: number;
  alertingScans: number;
  alertsPerAlertingScan: number;
  alertsPerCleanScan: number;
  failedJobs: number;
  /** Write statements of the bench's own requests during the phases (0: the bytes are the scans'). */
  benchWrites: number;
  /** Scan-path D1 statements per scan that the bench's own polls may have caused (control × polls per scan). */
  pollShare: number;
  openIncidents: number;
  /** D1 bytes (whole pages: what the database's size is made of). */
  d1PerScan: number;
  /** D1 bytes in use in those pages per scan (finer in a small sample). */
  d1InUsePerScan: number;
  d1PerAlertingScan: number;
  d1InUsePerAlertingScan: number;
  d1PerAlert: number;
  /** D1 bytes (pages) an asset adds once a day, on the day's first scan (decision 0014's audit tally). */
  d1PerAssetDay: number;
  /** The same in bytes in use, and the tables it comes from. */
  d1InUsePerAssetDay: number;
  perAssetDayTables: Array<{ table: string; bytes: number }>;
  /** What the tenant keeps after retention removed everything past data_ttl, per asset. */
  d1KeptPerAsset: number;
  d1Tenant: number;
  d1Schema: number;
  /** Statements of the scan path. */
  statementsPerScan: number;
  writesPerScan: number;
  callsPerScan: number;
  statementsPerAlertingScan: number;
  writesPerAlertingScan: number;
  /** Statements per scan by where they came from (upload request, queue consumer, Durable Object). */
  byOrigin: Array<{ origin: string; perScan: number; writesPerScan: number }>;
  /** Milliseconds of the scan's SQL alone (replayed on SQLite). */
  msPerScan: number;
  /** D1's own meta.duration in the local runtime, per scan (for comparison). */
  localDurationPerScan: number;
  /** A one-statement call to the local D1, one after another, from the Worker: a write, a read (ms). */
  probeWriteMs: number;
  probeReadMs: number;
  /** The same calls in CPU milliseconds of the runtime (the Worker's side included). */
  probeWriteCpuMs: number;
  probeReadCpuMs: number;
  replayFailures: number;
  replayError?: string;
  /** Durable Object bytes. */
  doPerScan: number;
  doPerAlertingScan: number;
  doKeptPerAsset: number;
  objects: number;
  /** Tables whose growth retention did not remove (bytes per scan each). */
  notRemoved: Array<{ table: string; perScan: number; perAlertingScan: number }>;
  retentionRuns: number;
  retentionStatementsPerAsset: number;
  /** The tables growing most per scan (D1): bytes in use per clean scan, extra per alerting scan, share kept by retention. */
  tables: Array<{ table: string; perScan: number; perAlertingScan: number; kept: number }>;
}

const grow = (from: Map<string, number>, to: Map<string, number>, name: string) =>
  (to.get(name) ?? 0) - (from.get(name) ?? 0);

/** The figures of one sample. */
export function figuresOf(s: SampleResult, sampleAssets: number): Figures {
  const snaps = s.snapshots;
  const cleanScans = s.clean.scans;
  const alertPhaseScans = s.alert.scans;
  const alerting = s.alert.alerting;
  const used = (x: Snapshot) => usedBytes(x.d1);
  const d1PerScan = (used(snaps.clean) - used(snaps.warm)) / cleanScans;
  const d1InUsePerScan = (inUseBytes(snaps.clean.d1) - inUseBytes(snaps.warm.d1)) / cleanScans;
  const d1PerAlertingScan = (used(snaps.alert) - used(snaps.clean) - alertPhaseScans * d1PerScan) / alerting;
  const d1InUsePerAlertingScan =
    (inUseBytes(snaps.alert.d1) - inUseBytes(snaps.clean.d1) - alertPhaseScans * d1InUsePerScan) / alerting;
  const alertsPerCleanScan = s.clean.alerts / cleanScans;
  // The broken batches' alerts: the phase's, less what its clean scans raise at the clean rate.
  const alertsPerAlertingScan = (s.alert.alerts - (alertPhaseScans - alerting) * alertsPerCleanScan) / alerting;

  const cleanTotal = total(s.clean.counts);
  const alertTotal = total(s.alert.counts);
  const extra = (phase: number, perScan: number) => (phase - alertPhaseScans * perScan) / alerting;
  const statementsPerScan = cleanTotal.statements / cleanScans;
  const writesPerScan = cleanTotal.writes / cleanScans;
  const msPerScan = s.clean.replay.ms / cleanScans;

  const objects = (x: Snapshot) => usedBytes(allObjects(x));
  const doPerScan = (objects(snaps.clean) - objects(snaps.warm)) / cleanScans;

  // Per table (bytes in use: finer than pages): growth per clean scan, extra per alerting scan, and
  // the share of its growth since the assets were created that retention left.
  const names = new Set([...snaps.retained.d1.inUse.keys(), ...snaps.alert.d1.inUse.keys()]);
  const tables = [...names].map((table) => {
    const perScan = grow(snaps.warm.d1.inUse, snaps.clean.d1.inUse, table) / cleanScans;
    const perAlertingScan =
      (grow(snaps.clean.d1.inUse, snaps.alert.d1.inUse, table) - alertPhaseScans * perScan) / alerting;
    const grown = grow(snaps.assets.d1.inUse, snaps.alert.d1.inUse, table);
    const left = grow(snaps.assets.d1.inUse, snaps.retained.d1.inUse, table);
    return { table, perScan, perAlertingScan, kept: grown > 0 ? Math.max(0, left) / grown : 0 };
  });
  tables.sort((a, b) => b.perScan + 0.02 * b.perAlertingScan - (a.perScan + 0.02 * a.perAlertingScan));
  // Tables that grow (by 10 bytes a scan, or 100 an alerting scan) and of whose growth retention left
  // more than half: that share grows without bound. Below that, rows an incident still open keeps
  // (its own, its rollups, its asset's later alerts) would read as growth: they are bounded.
  const notRemoved = tables
    .filter((t) => (t.perScan >= 10 || t.perAlertingScan >= 100) && t.kept > 0.5)
    .map((t) => ({
      table: t.table,
      perScan: Math.max(0, t.perScan) * t.kept,
      perAlertingScan: Math.max(0, t.perAlertingScan) * t.kept,
    }));

  // What the first scan of an asset's day adds beyond any scan, in the tables retention empties
  // (what it keeps, e.g. the asset's mark, is in d1KeptPerAsset).
  const firstScans = sampleAssets;
  const perAssetDayTables = tables
    .filter((t) => t.kept <= 0.5)
    .map((t) => ({
      table: t.table,
      bytes: (grow(snaps.assets.d1.inUse, snaps.first.d1.inUse, t.table) - firstScans * t.perScan) / sampleAssets,
    }))
    .filter((t) => t.bytes >= 1)
    .sort((a, b) => b.bytes - a.bytes);
  const d1InUsePerAssetDay = perAssetDayTables.reduce((sum, t) => sum + t.bytes, 0);
  // Pages per byte in use as the growing tables fill them (the clean phase's growth): the whole
  // sample database's ratio is far higher, its many small tables each on a page mostly empty.
  const pagesPerInUse = d1InUsePerScan > 0 && d1PerScan > 0 ? d1PerScan / d1InUsePerScan : 1;

  const scanOrigins = new Map<string, D1Counts>();
  for (const [key, c] of Object.entries(s.clean.counts)) {
    // "upload" for the request, else the origin's kind and name (queue scan-jobs, do AssetMonitor).
    const origin = key.slice(key.indexOf(" ") + 1);
    const name = origin.startsWith("fetch ") ? "upload request" : origin;
    const t = scanOrigins.get(name) ?? zeroCounts();
    for (const k of Object.keys(t) as (keyof D1Counts)[]) t[k] += c[k];
    scanOrigins.set(name, t);
  }

  return {
    sampleAssets,
    cleanScans,
    alertingScans: alerting,
    alertsPerAlertingScan,
    alertsPerCleanScan,
    failedJobs: s.clean.failed + s.alert.failed,
    benchWrites: s.clean.benchWrites + s.alert.benchWrites,
    pollShare: (s.pollControl * s.clean.polls) / cleanScans,
    openIncidents: s.openIncidents,
    d1PerScan,
    d1InUsePerScan,
    d1PerAlertingScan,
    d1InUsePerAlertingScan,
    d1PerAlert: alertsPerAlertingScan > 0 ? d1PerAlertingScan / alertsPerAlertingScan : Number.NaN,
    d1PerAssetDay: d1InUsePerAssetDay * pagesPerInUse,
    d1InUsePerAssetDay,
    perAssetDayTables,
    d1KeptPerAsset: (used(snaps.retained) - used(snaps.tenant)) / sampleAssets,
    d1Tenant: used(snaps.tenant) - used(snaps.empty),
    d1Schema: used(snaps.empty),
    statementsPerScan,
    writesPerScan,
    callsPerScan: cleanTotal.calls / cleanScans,
    statementsPerAlertingScan: extra(alertTotal.statements, statementsPerScan),
    writesPerAlertingScan: extra(alertTotal.writes, writesPerScan),
    byOrigin: [...scanOrigins].map(([origin, c]) => ({
      origin,
      perScan: c.statements / cleanScans,
      writesPerScan: c.writes / cleanScans,
    })),
    msPerScan,
    localDurationPerScan: cleanTotal.durationMs / cleanScans,
    probeWriteMs: s.probe.writeMs,
    probeReadMs: s.probe.readMs,
    probeWriteCpuMs: s.probe.writeCpuMs,
    probeReadCpuMs: s.probe.readCpuMs,
    replayFailures: s.clean.replay.failed + s.alert.replay.failed,
    ...(s.clean.replay.firstError || s.alert.replay.firstError
      ? { replayError: s.clean.replay.firstError ?? s.alert.replay.firstError }
      : {}),
    doPerScan,
    doPerAlertingScan: (objects(snaps.alert) - objects(snaps.clean) - alertPhaseScans * doPerScan) / alerting,
    doKeptPerAsset: (objects(snaps.retained) - objects(snaps.assets)) / sampleAssets,
    objects: allObjects(snaps.retained).count,
    notRemoved,
    retentionRuns: s.retention.runs,
    retentionStatementsPerAsset: total(s.retention.counts, (o) => o === "scheduled").statements / sampleAssets,
    tables,
  };
}

/** What a workload comes to at a sample's figures. */
export interface Capacity {
  scansPerDayPerTenant: number;
  /** Scans a tenant's D1 rows cover in steady state: data_ttl + 1 days of them. */
  scansKept: number;
  alertingScansKept: number;
  d1PerTenant: number;
  tenantsBySize: number;
  /** D1 bytes a tenant adds per year that retention does not remove (on top of the steady state). */
  notRemovedPerYear: number;
  /** One tenant's scan-path statements per second (and writes among them), averaged over the day. */
  statementsPerSecond: number;
  writesPerSecond: number;
  /** Statements per second one D1 runs, one at a time, at the probed CPU cost of a write. */
  d1StatementsPerSecond: number;
  tenantsByWriteRate: number;
  /** Tenants if every statement took 1 ms, the documentation's example. */
  tenantsAt1ms: number;
  doPerAsset: number;
  doPerTenant: number;
}

export function capacityOf(f: Figures, w: Workload): Capacity {
  const scansPerDayPerTenant = w.assets * w.scansPerDay;
  const scansKept = scansPerDayPerTenant * (w.ttlDays + 1);
  const alertingScansKept = scansKept * w.alertRate;
  const d1PerTenant =
    f.d1Tenant +
    w.assets * f.d1KeptPerAsset +
    w.assets * (w.ttlDays + 1) * f.d1PerAssetDay +
    scansKept * f.d1PerScan +
    alertingScansKept * f.d1PerAlertingScan;
  const scansPerSecond = scansPerDayPerTenant / 86_400;
  const statementsPerSecond = scansPerSecond * (f.statementsPerScan + w.alertRate * f.statementsPerAlertingScan);
  const writesPerSecond = scansPerSecond * (f.writesPerScan + w.alertRate * f.writesPerAlertingScan);
  // Every statement priced as a write called on its own (a batch's statements share one call, a read
  // costs less: this is the dear side), at its CPU cost: wall time adds this machine's disk syncs and
  // other processes' turns, which say little about a deployed database.
  const d1StatementsPerSecond = 1000 / f.probeWriteCpuMs;
  const doPerAsset =
    f.doKeptPerAsset + (scansKept / w.assets) * f.doPerScan + (alertingScansKept / w.assets) * f.doPerAlertingScan;
  return {
    scansPerDayPerTenant,
    scansKept,
    alertingScansKept,
    d1PerTenant,
    tenantsBySize: (D1_MAX_BYTES - f.d1Schema) / d1PerTenant,
    notRemovedPerYear:
      scansPerDayPerTenant *
      365 *
      f.notRemoved.reduce((sum, t) => sum + t.perScan + w.alertRate * t.perAlertingScan, 0),
    statementsPerSecond,
    writesPerSecond,
    d1StatementsPerSecond,
    tenantsByWriteRate: d1StatementsPerSecond / statementsPerSecond,
    tenantsAt1ms: 1000 / statementsPerSecond,
    doPerAsset,
    doPerTenant: doPerAsset * w.assets,
  };
}
