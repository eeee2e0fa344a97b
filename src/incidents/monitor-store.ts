/**
 * What the AssetMonitor reads from and writes to D1: its asset's incidents, alerts and mark. The
 * statements are built here and run by the monitor in one batch with the scan's other writes.
 */

import { and, desc, eq, is, isNotNull, SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteInsertValue } from "drizzle-orm/sqlite-core";
import type { MonitoredAsset } from "../contracts/asset-monitor";
import { type AssetProfile, type AttributeProfile, UNKNOWN_TYPE } from "../contracts/profile";
import { segmentKey } from "../contracts/segments";
import type { Db } from "../db";
import { insertJsonRows } from "../db/json-insert";
import {
  type AlertMetric,
  type AssetAttribute,
  type AttributeStats,
  alerts,
  assetMonitorMarks,
  assets,
  type CloseReason,
  dqScores,
  type IncidentEntry,
  type IncidentHistoryRow,
  type IncidentRow,
  incidentHistory,
  incidents,
  type KeptAlert,
  type Level,
  monitorAppliedJobs,
  type NewIncidentEntry,
} from "../db/schema";
import { round } from "../detection/checks/common";
import { seenSchema } from "../detection/checks/schema";
import {
  type IncidentAlert,
  type IncidentDecision,
  incidentKey,
  incidentKeyOf,
  type OpenIncident,
} from "../detection/incident-planner";
import type { KnownKind } from "../detection/kinds";
import type { PolicyAlert } from "../detection/types";
import { inJsonList } from "../lib/sql";

/** One scan's results, as the monitor writes them to D1. */
export interface ScanResults {
  asset: MonitoredAsset;
  jobId: string;
  /** When the job was created (upload time): the alerts' create_time. */
  createdAt: string;
  /** When the scan ran: the time of its metrics. */
  scanTime: string;
  /** When the results are written: the alerts' save_time. */
  savedAt: string;
  alerts: PolicyAlert[];
  /** The scan's freshness (newest timestamp), if its asset has a timestamp attribute. */
  freshness?: string;
  /** Whether a policy's alerts are notified (is_notification_enabled); all are when absent. */
  notifies?: (policy: string) => boolean;
}

/**
 * The statement of one scan's results in D1: the asset's mark (asset_monitor_marks, changed in
 * place), the last job whose results are in D1, which the monitor reads before it writes, so a
 * job replayed after its batch committed writes nothing twice; and when the scan alerted, the
 * time of its alerts (what "assets with alerts since" reads). The alerts, the DQ score and the
 * job's record are kept in the asset's Durable Object (issue 38).
 */
export function resultStatements(
  db: Db,
  r: Pick<ScanResults, "asset" | "jobId" | "savedAt" | "freshness"> & {
    alerted: boolean;
    /** The step the object counted for the job the batch ends (see HistoryStore.beginJobEnd). */
    movedSteps?: number;
  },
): [BatchItem<"sqlite">] {
  const { asset } = r;
  const lastAlertAt = r.alerted ? r.savedAt : null;
  return [
    db
      .insert(assetMonitorMarks)
      .values({
        assetId: asset.id,
        tenantId: asset.tenantId,
        lastJobId: r.jobId,
        appliedAt: r.savedAt,
        freshness: r.freshness ?? null,
        lastAlertAt,
        movedSteps: r.movedSteps ?? 0,
      })
      .onConflictDoUpdate({
        target: assetMonitorMarks.assetId,
        set: {
          ...(r.movedSteps === undefined ? {} : { movedSteps: movedStepsAtLeast }),
          lastJobId: r.jobId,
          appliedAt: r.savedAt,
          // The newest freshness of any applied scan: a scan without one keeps the last.
          freshness: sql`coalesce(excluded.freshness, ${assetMonitorMarks.freshness})`,
          lastAlertAt: sql`coalesce(excluded.last_alert_at, ${assetMonitorMarks.lastAlertAt})`,
        },
      }),
  ];
}

/** The mark's moved steps on conflict: the step written, unless a later one is there already. */
const movedStepsAtLeast = sql`max(${assetMonitorMarks.movedSteps}, excluded.moved_steps)`;

/**
 * The asset's mark counts a step out of D1 the object took (a job it keeps, whose D1 row the same
 * batch deletes): a read that finds the mark ahead of the object's count read again.
 */
export function movedStepStatement(db: Db, asset: Pick<MonitoredAsset, "tenantId" | "id">, step: number) {
  return db
    .insert(assetMonitorMarks)
    .values({ assetId: asset.id, tenantId: asset.tenantId, movedSteps: step })
    .onConflictDoUpdate({ target: assetMonitorMarks.assetId, set: { movedSteps: movedStepsAtLeast } });
}

/** One scan's alerts as its asset's object keeps them (their ids given there). */
export function keptAlertsOf(r: ScanResults): Array<Omit<KeptAlert, "id" | "jobId">> {
  return r.alerts.map((a) => {
    const { tenantId: _t, assetId: _a, projectId: _p, connectionId: _c, jobId: _j, ...kept } = alertRow(r, a);
    return { ...kept, attribute: kept.attribute ?? "", segment: kept.segment ?? "", details: kept.details };
  });
}

/** An alert as an incident's detail shows it (incident_history.alert_metrics): see incidentDetailView. */
export function alertMetricOf(
  a: Pick<KeptAlert, "id" | "jobId" | "metric" | "metricValue" | "metricTime" | "priority" | "details">,
): AlertMetric {
  return {
    id: a.id,
    jobId: a.jobId,
    metric: a.metric,
    metricValue: a.metricValue,
    metricTime: a.metricTime,
    priority: a.priority,
    // What the detail shows of the alert (incidentDetailView), not the rest of its details.
    details: Object.fromEntries(
      Object.entries(a.details).filter(([k]) => k === "observed" || k === "expected" || k === "investigation"),
    ),
  };
}

/** A DQ score row still in D1, without its tenant and asset (what the asset's object keeps). */
export type LegacyDqScore = Omit<typeof dqScores.$inferSelect, "tenantId" | "assetId">;

/**
 * The asset's DQ scores and job markers still in D1 (issue 38's move), newest first, at most
 * `limit` of each: what one step of the move copies into the object. One batch.
 */
export function legacyHistoryQueries(db: Db, asset: Pick<MonitoredAsset, "tenantId" | "id">, limit: number) {
  return [
    db
      .select({
        jobId: dqScores.jobId,
        scoredAt: dqScores.scoredAt,
        completeness: dqScores.completeness,
        accuracy: dqScores.accuracy,
        consistency: dqScores.consistency,
        timeliness: dqScores.timeliness,
        overall: dqScores.overall,
      })
      .from(dqScores)
      .where(and(eq(dqScores.tenantId, asset.tenantId), eq(dqScores.assetId, asset.id)))
      .orderBy(desc(dqScores.scoredAt))
      .limit(limit),
    db
      .select({
        jobId: monitorAppliedJobs.jobId,
        appliedAt: monitorAppliedJobs.appliedAt,
        freshness: monitorAppliedJobs.freshness,
      })
      .from(monitorAppliedJobs)
      .where(and(eq(monitorAppliedJobs.tenantId, asset.tenantId), eq(monitorAppliedJobs.assetId, asset.id)))
      .orderBy(desc(monitorAppliedJobs.appliedAt))
      .limit(limit),
    db
      .select()
      .from(alerts)
      .where(and(eq(alerts.tenantId, asset.tenantId), eq(alerts.assetId, asset.id)))
      .orderBy(desc(alerts.id))
      .limit(limit),
    legacyEntriesQuery(db, asset, limit),
  ] as const;
}

/** The history entries of the asset's incidents still in D1 (issue 38's move), newest first, at most `limit`. */
function legacyEntriesQuery(db: Db, asset: Pick<MonitoredAsset, "tenantId" | "id">, limit: number) {
  return db
    .select()
    .from(incidentHistory)
    .where(
      and(
        eq(incidentHistory.tenantId, asset.tenantId),
        sql`${incidentHistory.incidentId} IN (SELECT id FROM incidents WHERE tenant_id = ${asset.tenantId} AND asset_id = ${asset.id})`,
      ),
    )
    .orderBy(desc(incidentHistory.id))
    .limit(limit);
}

/** A D1 history entry as the asset's object keeps it (moved in, with its D1 id). */
export function entryOfRow({ id, tenantId: _t, ...row }: IncidentHistoryRow): IncidentEntry {
  return { ...row, legacyId: id, seq: 0 };
}

/**
 * The end of one step of the move, once its rows are in the object: deletes them from D1 and
 * counts the step on the asset's mark, keeping there the newest freshness the markers carried
 * (a freshness a later scan wrote wins) and the newest time of the moved alerts. Before the alerts
 * go, the history entries of the asset's incidents that refer to them take their alerts as the
 * incident's detail shows them (alert_metrics, from every alert of theirs still in D1: an entry is
 * filled by the first step that moves one of its alerts). One batch.
 */
export function movedOutStatements(
  db: Db,
  asset: Pick<MonitoredAsset, "tenantId" | "id">,
  moved: {
    scoreJobs: readonly string[];
    markers: ReadonlyArray<{ jobId: string; freshness: string | null }>;
    alerts: ReadonlyArray<{ id: number; saveTime: string }>;
    /** D1 ids of the history entries moved. */
    entries?: readonly number[];
  },
  step: number,
): [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] {
  const freshness = moved.markers.find((m) => m.freshness !== null)?.freshness ?? null;
  const alertIds = moved.alerts.map((a) => a.id);
  const lastAlertAt = moved.alerts.reduce<string | null>(
    (t, a) => (t === null || a.saveTime > t ? a.saveTime : t),
    null,
  );
  const fills: BatchItem<"sqlite">[] =
    alertIds.length === 0
      ? []
      : [
          db
            .update(incidentHistory)
            .set({
              alertMetrics: sql`(SELECT json_group_array(json_object('id', a.id, 'jobId', a.job_id, 'metric', a.metric,
                'metricValue', a.metric_value, 'metricTime', a.metric_time, 'priority', a.priority,
                'details', json(a.details))) FROM alerts a
                WHERE a.tenant_id = ${asset.tenantId} AND a.asset_id = ${asset.id}
                AND a.id IN (SELECT value FROM json_each(${incidentHistory.alertRefs})))`,
            })
            .where(
              and(
                eq(incidentHistory.tenantId, asset.tenantId),
                sql`${incidentHistory.alertMetrics} IS NULL`,
                sql`${incidentHistory.incidentId} IN (SELECT id FROM incidents WHERE tenant_id = ${asset.tenantId} AND asset_id = ${asset.id})`,
                sql`EXISTS (SELECT 1 FROM json_each(${incidentHistory.alertRefs}) r WHERE r.value IN (SELECT value FROM json_each(${JSON.stringify(alertIds)})))`,
              ),
            ),
          db
            .delete(alerts)
            .where(
              and(eq(alerts.tenantId, asset.tenantId), eq(alerts.assetId, asset.id), inJsonList(alerts.id, alertIds)),
            ),
        ];
  return [
    db
      .insert(assetMonitorMarks)
      .values({ assetId: asset.id, tenantId: asset.tenantId, freshness, movedSteps: step, lastAlertAt })
      .onConflictDoUpdate({
        target: assetMonitorMarks.assetId,
        set: {
          movedSteps: movedStepsAtLeast,
          freshness: sql`coalesce(${assetMonitorMarks.freshness}, excluded.freshness)`,
          lastAlertAt: sql`nullif(max(coalesce(${assetMonitorMarks.lastAlertAt}, ''), coalesce(excluded.last_alert_at, '')), '')`,
        },
      }),
    ...fills,
    ...(moved.entries && moved.entries.length > 0
      ? [
          db
            .delete(incidentHistory)
            .where(and(eq(incidentHistory.tenantId, asset.tenantId), inJsonList(incidentHistory.id, moved.entries))),
        ]
      : []),
    db
      .delete(dqScores)
      .where(
        and(
          eq(dqScores.tenantId, asset.tenantId),
          eq(dqScores.assetId, asset.id),
          inJsonList(dqScores.jobId, moved.scoreJobs),
        ),
      ),
    db.delete(monitorAppliedJobs).where(
      and(
        eq(monitorAppliedJobs.tenantId, asset.tenantId),
        eq(monitorAppliedJobs.assetId, asset.id),
        inJsonList(
          monitorAppliedJobs.jobId,
          moved.markers.map((m) => m.jobId),
        ),
      ),
    ),
  ];
}

/**
 * The steps of the move out of D1 that finished for the asset (asset_monitor_marks.moved_steps):
 * a read whose object had taken in fewer raced a step, and reads again.
 */
export function movedStepsQuery(db: Db, asset: Pick<MonitoredAsset, "tenantId" | "id">) {
  return db
    .select({ movedSteps: assetMonitorMarks.movedSteps })
    .from(assetMonitorMarks)
    .where(and(eq(assetMonitorMarks.tenantId, asset.tenantId), eq(assetMonitorMarks.assetId, asset.id)));
}

/** The asset's mark (one row at most): the last job whose results are in D1. */
export function lastJobQuery(db: Db, asset: Pick<MonitoredAsset, "tenantId" | "id">) {
  return db
    .select({ lastJobId: assetMonitorMarks.lastJobId })
    .from(assetMonitorMarks)
    .where(and(eq(assetMonitorMarks.tenantId, asset.tenantId), eq(assetMonitorMarks.assetId, asset.id)))
    .limit(1);
}

/** The asset's attributes as the scan saw them, with their kinds (GET …/assets?with_attributes=true). */
export function attributesStatement(
  db: Db,
  asset: Pick<MonitoredAsset, "tenantId" | "id">,
  profile: Pick<AssetProfile, "schema" | "attributes">,
  kinds: Readonly<Record<string, KnownKind>>,
  scanTime: string,
): BatchItem<"sqlite"> {
  const profiled = new Map(profile.attributes.map((a) => [a.name, a]));
  const attributes: AssetAttribute[] = seenSchema(profile).map((f) => {
    const k = kinds[f.name];
    const a = profiled.get(f.name);
    return {
      name: f.name,
      type: f.type,
      nullable: f.nullable,
      ...(k ? { kind: k.kind, kind_source: k.source } : {}),
      ...(a ? { stats: statsOf(a, scanTime, f.type === UNKNOWN_TYPE) } : {}),
    };
  });
  return db
    .update(assets)
    .set({ attributes })
    .where(and(eq(assets.tenantId, asset.tenantId), eq(assets.id, asset.id)));
}

/** Top values shown per attribute (the profile keeps 20). */
const STATS_TOP_VALUES = 10;

/** `untyped`: the attribute had no value to type (seenSchema), so it has no inferred type either. */
function statsOf(a: AttributeProfile, scanTime: string, untyped: boolean): AttributeStats {
  return {
    scanned_at: scanTime,
    count: a.count,
    nulls: a.nulls,
    empties: a.empties,
    distinct: a.distinct,
    distinct_exact: a.distinct_exact,
    inferred_type: untyped ? UNKNOWN_TYPE : a.inferred_type,
    type_mismatches: a.type_mismatches,
    ...(a.min !== undefined ? { min: a.min } : {}),
    ...(a.max !== undefined ? { max: a.max } : {}),
    ...(a.mean !== undefined ? { mean: a.mean } : {}),
    ...(a.stddev !== undefined ? { stddev: a.stddev } : {}),
    ...(a.quantiles ? { quantiles: a.quantiles } : {}),
    ...(a.top_values.length > 0 ? { top_values: a.top_values.slice(0, STATS_TOP_VALUES) } : {}),
  };
}

/**
 * The freshness of the asset's last applied scan that had one: where a delta_only scan starts. The
 * asset's mark holds it; an asset not scanned since its job markers left D1 (issue 38's move)
 * still finds it in the markers its history has not moved yet. One query.
 */
export async function lastFreshness(
  db: Db,
  asset: Pick<MonitoredAsset, "tenantId" | "id">,
): Promise<string | undefined> {
  const legacy = db
    .select({ freshness: monitorAppliedJobs.freshness })
    .from(monitorAppliedJobs)
    .where(
      and(
        eq(monitorAppliedJobs.tenantId, asset.tenantId),
        eq(monitorAppliedJobs.assetId, asset.id),
        isNotNull(monitorAppliedJobs.freshness),
      ),
    )
    .orderBy(desc(monitorAppliedJobs.appliedAt))
    .limit(1);
  const mark = db
    .select({ freshness: assetMonitorMarks.freshness })
    .from(assetMonitorMarks)
    .where(and(eq(assetMonitorMarks.tenantId, asset.tenantId), eq(assetMonitorMarks.assetId, asset.id)));
  const [row] = await db
    .select({ freshness: sql<string | null>`coalesce((${mark}), (${legacy}))` })
    .from(sql`(SELECT 1)`);
  return row?.freshness ?? undefined;
}

function alertRow(r: ScanResults, a: PolicyAlert): typeof alerts.$inferInsert {
  const { asset } = r;
  return {
    tenantId: asset.tenantId,
    assetId: asset.id,
    projectId: asset.projectId,
    connectionId: asset.connectionId,
    jobId: r.jobId,
    type: a.policy,
    policyName: a.policy_name,
    attribute: a.attribute ?? "",
    segment: segmentKey(a.segment),
    priority: a.priority,
    description: a.description,
    sourceName: asset.name,
    sourceType: asset.type,
    isNotificationEnabled: r.notifies ? r.notifies(a.policy) : true,
    metric: a.metric,
    metricValue: a.metric_value,
    metricTime: r.scanTime,
    createTime: r.createdAt,
    saveTime: r.savedAt,
    details: alertDetails(a),
  };
}

/** An alert's `details`: what the alert objects of the API carry beside its text. */
export function alertDetails(a: PolicyAlert): Record<string, unknown> {
  return {
    observed: a.observed,
    ...(a.expected !== undefined ? { expected: a.expected } : {}),
    ...(a.unit ? { unit: a.unit } : {}),
    ...(a.strategy ? { strategy: a.strategy } : {}),
    ...(a.training_window ? { training_window: a.training_window } : {}),
    ...(a.training_size !== undefined ? { training_size: a.training_size } : {}),
    ...(a.attribute_kind ? { attribute_kind: a.attribute_kind } : {}),
    ...(a.values ? { values: a.values } : {}),
    ...(a.schema_changes ? { schema_changes: a.schema_changes } : {}),
    ...(a.investigation ? { investigation: a.investigation } : {}),
    ...(a.segment ? { segment: a.segment } : {}),
    // Signed distance from the baseline in allowed changes (a band's half-width: beyond ±1 is outside).
    ...(a.deviation !== undefined && Math.abs(a.deviation) < 1e12 ? { deviation: round(a.deviation) } : {}),
    ...(a.after_close ? { after_close: a.after_close } : {}),
    dimension: a.dimension,
  };
}

/**
 * The ids of the alerts the asset's incidents' entries still in D1 refer to (for a rebuild, which
 * folds the others, with those of the entries its object keeps), and the ids of the asset's
 * incidents (whose entries there count): only this asset's incidents can refer to its alerts, so
 * the read is per asset, not per tenant. One batch.
 */
export async function referredAlertIds(
  db: Db,
  asset: Pick<MonitoredAsset, "tenantId" | "id">,
): Promise<{ referred: Set<number>; incidentIds: number[] }> {
  const [rows, ids] = await db.batch([
    db
      .select({ id: sql<number>`r.value` })
      .from(sql`incidents i JOIN incident_history h ON h.incident_id = i.id, json_each(h.alert_refs) r`)
      .where(sql`i.tenant_id = ${asset.tenantId} AND i.asset_id = ${asset.id}`),
    db
      .select({ id: incidents.id })
      .from(incidents)
      .where(and(eq(incidents.tenantId, asset.tenantId), eq(incidents.assetId, asset.id))),
  ]);
  return { referred: new Set(rows.map((r) => Number(r.id))), incidentIds: ids.map((r) => r.id) };
}

/**
 * The newest alert of an incident's condition (its policy, attribute and segment on its asset) still
 * in D1 (issue 38's move has not reached it): its metric and details.
 */
export async function legacyLastAlertOf(
  db: Db,
  incident: Pick<IncidentRow, "tenantId" | "assetId" | "policy" | "attribute" | "segment">,
): Promise<{ metric: string; details: Record<string, unknown> } | undefined> {
  const [row] = await db
    .select({ metric: alerts.metric, details: alerts.details })
    .from(alerts)
    .where(
      and(
        eq(alerts.tenantId, incident.tenantId),
        eq(alerts.assetId, incident.assetId),
        eq(alerts.type, incident.policy),
        eq(alerts.attribute, incident.attribute),
        eq(alerts.segment, incident.segment),
      ),
    )
    .orderBy(desc(alerts.id))
    .limit(1);
  return row;
}

/** How many incidents the asset has had. */
export function countIncidents(db: Db, asset: MonitoredAsset): Promise<number> {
  return db.$count(incidents, and(eq(incidents.tenantId, asset.tenantId), eq(incidents.assetId, asset.id)));
}

/** Impact from the asset's downstream lineage: every descendant, not only direct children. */
export async function impactOf(db: Db, assetId: number): Promise<Level> {
  return impactLevel(await impactQuery(db, assetId));
}

/**
 * The count of the asset's descendants in the lineage (for impactLevel), as a query a batch can
 * carry (a builder, not raw SQL: drizzle's D1 batch prepares only those); one row.
 */
export function impactQuery(db: Db, assetId: number) {
  return db
    .select({
      n: sql<number>`(WITH RECURSIVE down(id, depth) AS (
         SELECT child_asset_id, 1 FROM asset_lineage WHERE parent_asset_id = ${assetId}
         UNION SELECT l.child_asset_id, d.depth + 1 FROM asset_lineage l JOIN down d ON l.parent_asset_id = d.id
         WHERE d.depth < 20)
       SELECT count(DISTINCT id) FROM down)`,
    })
    .from(sql`(SELECT 1)`);
}

/** The impact of a new incident from its asset's count of descendants. */
export function impactLevel(rows: readonly { n: number }[]): Level {
  const n = rows[0]?.n ?? 0;
  return n >= 3 ? "HIGH" : n >= 1 ? "MEDIUM" : "LOW";
}

/** The open incidents of an asset, by (policy, attribute, segment). */
export async function openIncidents(
  db: Db,
  asset: Pick<MonitoredAsset, "tenantId" | "id">,
): Promise<Map<string, OpenIncident>> {
  return byIncidentKey(await openIncidentsQuery(db, asset));
}

/**
 * What a scan's rules read of an open incident (OpenIncident), not the whole row: an asset's open
 * incidents are read by every scan, and a row of all 27 columns is ~600 B of D1's JSON.
 */
const openIncidentColumns = {
  id: incidents.id,
  policy: incidents.policy,
  attribute: incidents.attribute,
  segment: incidents.segment,
  state: incidents.state,
  severity: incidents.severity,
  cleanScans: incidents.cleanScans,
  levelScans: incidents.levelScans,
  deviation: incidents.deviation,
  openedAt: incidents.openedAt,
  lastAlertAt: incidents.lastAlertAt,
} satisfies Record<keyof OpenIncident, unknown>;

/** The open incidents of an asset (for byIncidentKey), as a query a batch can carry (a select: cheaper than findMany). */
export function openIncidentsQuery(db: Db, asset: Pick<MonitoredAsset, "tenantId" | "id">) {
  return db
    .select(openIncidentColumns)
    .from(incidents)
    .where(and(eq(incidents.tenantId, asset.tenantId), eq(incidents.assetId, asset.id), eq(incidents.state, "OPEN")));
}

/** Incidents by (policy, attribute, segment). */
export function byIncidentKey<R extends Pick<OpenIncident, "policy" | "attribute" | "segment">>(
  rows: readonly R[],
): Map<string, R> {
  return new Map(rows.map((r) => [incidentKey(r.policy, r.attribute, r.segment), r]));
}

/**
 * What a history entry says of the alert the scan raised for a finding: its id (the asset's object
 * gave it before the batch) and the alert as the incident's detail shows it.
 */
function alertOfEntry(scan: ScanContext, a: IncidentAlert): { alertRefs: number[]; alertMetrics: AlertMetric[] } {
  const alert = scan.alerts.get(incidentKeyOf(a));
  return alert ? { alertRefs: [alert.id], alertMetrics: [alertMetricOf(alert)] } : { alertRefs: [], alertMetrics: [] };
}

/** Where a scan's decisions come from: its asset, job and time, and the impact of a new incident. */
export interface ScanContext {
  asset: MonitoredAsset;
  jobId: string;
  scanTime: string;
  impact: Level;
  /** For each incident adopted as the new normal: what its history entry says (bands before and after). */
  adoptions?: ReadonlyMap<number, Record<string, unknown>>;
  /** The scan's alerts as its asset's object keeps them, by incident key (incidentKey). */
  alerts: ReadonlyMap<string, KeptAlert>;
}

/** A scan's alerts by incident key, for ScanContext. */
export function alertsByKey(kept: readonly KeptAlert[]): Map<string, KeptAlert> {
  return new Map(kept.map((a) => [incidentKey(a.type, a.attribute, a.segment), a]));
}

/** What a confirming scan measured, for its history entry. */
function measured(a: IncidentAlert): Record<string, unknown> {
  const alert = a as Partial<PolicyAlert>;
  return {
    ...(alert.metric ? { metric: alert.metric } : {}),
    ...(alert.observed !== undefined ? { observed: alert.observed } : {}),
    ...(alert.expected !== undefined ? { expected: alert.expected } : {}),
    ...(alert.values ? { values: alert.values } : {}),
  };
}

/**
 * The statements that write one scan's incident decisions to D1 (run in the same batch as its
 * other writes); their history entries are the asset's object's (decisionEntries).
 */
export function decisionStatements(db: Db, scan: ScanContext, decisions: IncidentDecision[]): BatchItem<"sqlite">[] {
  // New incidents go in one INSERT (and their history entries in another) and clean scans in one
  // UPDATE: a scan opens or cleans dozens at a time, and each statement of a batch costs its own
  // building and preparation.
  const opened = decisions.flatMap((d) => (d.kind === "open" ? [d.alert] : []));
  const cleaned = decisions.flatMap((d) => (d.kind === "clean" ? [d.incident.id] : []));
  return [
    ...openStatements(db, scan, opened),
    ...cleanStatements(db, scan, cleaned),
    ...decisions.flatMap((d) => (d.kind === "open" || d.kind === "clean" ? [] : statementsOf(db, scan, d))),
  ];
}

/** Clean scans of open incidents: the same change for each, in one statement. */
function cleanStatements(db: Db, scan: ScanContext, ids: readonly number[]): BatchItem<"sqlite">[] {
  if (ids.length === 0) return [];
  return [
    db
      .update(incidents)
      .set({ cleanScans: sql`${incidents.cleanScans} + 1`, levelScans: 0, updatedAt: scan.scanTime })
      .where(inJsonList(incidents.id, ids)),
  ];
}

function statementsOf(db: Db, scan: ScanContext, d: IncidentDecision): BatchItem<"sqlite">[] {
  switch (d.kind) {
    case "open":
      return openStatements(db, scan, [d.alert]);
    case "escalate":
      return [
        db
          .update(incidents)
          .set({
            alertCount: sql`${incidents.alertCount} + 1`,
            severity: d.severity,
            lastAlertAt: scan.scanTime,
            cleanScans: 0,
            levelScans: 1,
            deviation: d.alert.deviation ?? null,
            updatedAt: scan.scanTime,
          })
          .where(eq(incidents.id, d.incident.id)),
      ];
    case "confirm":
      return [
        db
          .update(incidents)
          .set({ cleanScans: 0, levelScans: d.levelScans, updatedAt: scan.scanTime })
          .where(eq(incidents.id, d.incident.id)),
      ];
    case "adopt":
      return [
        db
          .update(incidents)
          .set({
            state: "CLOSED",
            cleanScans: 0,
            levelScans: d.levelScans,
            closedAt: scan.scanTime,
            closeReason: "NEW_NORMAL",
            updatedAt: scan.scanTime,
          })
          .where(and(eq(incidents.id, d.incident.id), eq(incidents.state, "OPEN"))),
      ];
    case "clean":
      return cleanStatements(db, scan, [d.incident.id]);
    case "auto_close":
      return autoCloseStatements(db, scan, d.incident.id, d.cleanScans);
  }
}

/** New OPEN incidents (their first history entries are the object's: decisionEntries). */
function openStatements(db: Db, scan: ScanContext, opened: readonly IncidentAlert[]): BatchItem<"sqlite">[] {
  const { asset, scanTime } = scan;
  const incidentRow = (alert: IncidentAlert): SQLiteInsertValue<typeof incidents> => ({
    tenantId: asset.tenantId,
    assetId: asset.id,
    projectId: asset.projectId,
    connectionId: asset.connectionId,
    connectionType: asset.type,
    sourceName: asset.name,
    policy: alert.policy,
    policyName: alert.policy_name,
    attribute: alert.attribute,
    segment: segmentKey(alert.segment),
    state: "OPEN",
    severity: alert.priority,
    impact: scan.impact,
    tag: alert.dimension,
    alertCount: 1,
    cleanScans: 0,
    levelScans: 1,
    deviation: alert.deviation ?? null,
    openedAt: scanTime,
    lastAlertAt: scanTime,
    updatedAt: scanTime,
  });
  return insertJsonRows(db, incidents, opened.map(incidentRow));
}

/** The clean scan that closes an incident (only if it is still OPEN) and its history entry. */
function autoCloseStatements(db: Db, scan: ScanContext, incidentId: number, cleanScans: number): BatchItem<"sqlite">[] {
  const { scanTime } = scan;
  return [
    db
      .update(incidents)
      .set({ state: "CLOSED", cleanScans, closedAt: scanTime, closeReason: "AUTO_RESOLVED", updatedAt: scanTime })
      .where(and(eq(incidents.id, incidentId), eq(incidents.state, "OPEN"))),
  ];
}

/** The key by which a scan's entry names the incident its D1 batch opens (see openedIncidentsQuery). */
export const openedKey = (policy: string, attribute: string, segment: string) =>
  JSON.stringify([policy, attribute, segment]);

/**
 * The incidents of the asset opened at `scanTime` (a scan's, read at the end of its batch, or again
 * by its replay): the ids its entries that open them take, by openedKey (the newest of a key).
 */
export function openedIncidentsQuery(db: Db, asset: Pick<MonitoredAsset, "tenantId" | "id">, scanTime: string) {
  return db
    .select({ id: incidents.id, policy: incidents.policy, attribute: incidents.attribute, segment: incidents.segment })
    .from(incidents)
    .where(
      and(eq(incidents.tenantId, asset.tenantId), eq(incidents.assetId, asset.id), eq(incidents.openedAt, scanTime)),
    )
    .orderBy(incidents.id);
}

/** The rows of openedIncidentsQuery as settleIncidentEntries takes them. */
export function openedIds(rows: ReadonlyArray<{ id: number; policy: string; attribute: string; segment: string }>) {
  const byKey = new Map(rows.map((r) => [openedKey(r.policy, r.attribute, r.segment), r.id]));
  return [...byKey].map(([key, id]) => ({ key, id }));
}

/** The fields every history entry of a scan shares. */
function entryOf(scan: ScanContext) {
  return { time: scan.scanTime, actor: "system", jobId: scan.jobId, note: null, reason: null, details: null };
}

/**
 * The history entries of one scan's incident decisions, as the asset's object keeps them (issue 38):
 * every change of state or alert is an entry naming its alerts and job; an incident the scan opens
 * is named by its key until its D1 batch gives its id.
 */
export function decisionEntries(scan: ScanContext, decisions: IncidentDecision[]): NewIncidentEntry[] {
  // An entry of an open incident the scan changes: no alert unless `fields` names one.
  const entry = (incidentId: number, toState: "OPEN" | "CLOSED", fields: Partial<NewIncidentEntry>) =>
    ({
      ...entryOf(scan),
      incidentId,
      fromState: "OPEN",
      toState,
      alertRefs: [],
      alertMetrics: null,
      ...fields,
    }) as NewIncidentEntry;
  return decisions.flatMap((d): NewIncidentEntry[] => {
    switch (d.kind) {
      case "open":
        return [
          {
            ...entryOf(scan),
            incidentId: null,
            opens: openedKey(d.alert.policy, d.alert.attribute, segmentKey(d.alert.segment)),
            fromState: null,
            toState: "OPEN",
            ...alertOfEntry(scan, d.alert),
          },
        ];
      case "escalate":
        return [
          entry(d.incident.id, "OPEN", { ...alertOfEntry(scan, d.alert), note: "escalated: the problem got worse" }),
        ];
      case "confirm":
        return [
          entry(d.incident.id, "OPEN", {
            note: `confirmed: scan ${d.levelScans} at this level`,
            details: measured(d.alert),
          }),
        ];
      case "adopt":
        return [
          entry(d.incident.id, "CLOSED", {
            reason: "NEW_NORMAL",
            note: `${d.levelScans} scans at this level: adopted as the new baseline`,
            details: { ...measured(d.alert), ...(scan.adoptions?.get(d.incident.id) ?? {}) },
          }),
        ];
      case "auto_close":
        return [
          entry(d.incident.id, "CLOSED", {
            reason: "AUTO_RESOLVED",
            note: `${d.cleanScans} consecutive clean scans`,
          }),
        ];
      default:
        // A clean scan changes the incident's counts, not its history.
        return [];
    }
  });
}

/** A manual state change: the incident's new state, in one batch (its history entry: transitionEntry). */
export function transitionStatements(
  db: Db,
  incident: IncidentRow,
  change: { to: "OPEN" | "CLOSED"; actor: string; note?: string; reason?: CloseReason; now: string },
): [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] {
  const { now } = change;
  return [
    db
      .update(incidents)
      .set(
        change.to === "CLOSED"
          ? { state: "CLOSED", closedAt: now, closeReason: change.reason ?? "NO_ACTION_NEEDED", updatedAt: now }
          : { state: "OPEN", closedAt: null, closeReason: null, cleanScans: 0, updatedAt: now },
      )
      .where(and(eq(incidents.id, incident.id), eq(incidents.state, incident.state))),
    db
      .update(incidents)
      .set({ firstResponseAt: now })
      .where(and(eq(incidents.id, incident.id), sql`${incidents.firstResponseAt} IS NULL`)),
  ];
}

/** A manual state change's history entry, as the asset's object keeps it (after transitionStatements' batch). */
export function transitionEntry(
  incident: Pick<IncidentRow, "id" | "state">,
  change: { to: "OPEN" | "CLOSED"; actor: string; note?: string; reason?: CloseReason; now: string },
): NewIncidentEntry {
  return {
    incidentId: incident.id,
    time: change.now,
    fromState: incident.state,
    toState: change.to,
    alertRefs: [],
    actor: change.actor,
    note: change.note ?? null,
    reason: change.reason ?? null,
    jobId: null,
    details: null,
    alertMetrics: null,
  };
}

/**
 * Statements that carry moved assets' incidents and alerts to the assets' new project (and
 * connection): their copies of project and connection keep the list filters and project
 * visibility right. Not incident state, so they run in the move's batch, not in the monitor.
 * `assetIds` is a list, or a subquery of ids (`select id from …`); `when` a condition of the move
 * checked in the same batch (nothing follows where it does not hold).
 */
export function followMove(
  db: Db,
  tenantId: string,
  assetIds: readonly number[] | SQL,
  to: { projectId: number; connectionId?: number },
  when?: SQL,
): BatchItem<"sqlite">[] {
  const connection = to.connectionId !== undefined ? { connectionId: to.connectionId } : {};
  const moved = (column: typeof incidents.assetId | typeof alerts.assetId) =>
    is(assetIds, SQL) ? sql`${column} in (${assetIds})` : inJsonList(column, assetIds as readonly number[]);
  return [
    db
      .update(incidents)
      .set({ projectId: to.projectId, ...connection })
      .where(and(eq(incidents.tenantId, tenantId), moved(incidents.assetId), when)),
    db
      .update(alerts)
      .set({ projectId: to.projectId, ...connection })
      .where(and(eq(alerts.tenantId, tenantId), moved(alerts.assetId), when)),
  ];
}
