import { and, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../db";
import { alerts, incidentHistory, incidents, type Level } from "../db/schema";
import { inJsonList } from "../lib/sql";

/** Consecutive clean scans after which an incident closes itself, unless the asset says otherwise. */
export const DEFAULT_AUTO_CLOSE_AFTER = 3;

const RANK: Record<Level, number> = { LOW: 1, MEDIUM: 2, HIGH: 3 };

/** An alert of this scan, as the incident rules need it. */
export interface ScanAlert {
  policy: string;
  policyName: string;
  attribute: string;
  priority: Level;
  dimension: string;
}

export interface IncidentAsset {
  tenantId: string;
  id: number;
  name: string;
  type: string;
  projectId: number;
  connectionId: number;
}

export type IncidentRow = typeof incidents.$inferSelect;

/** The key of an incident: one OPEN incident per (policy, attribute) of an asset. */
export const incidentKey = (policy: string, attribute: string) => `${policy}\u0000${attribute}`;

/** Impact from the asset's downstream lineage: every descendant, not only direct children. */
export async function impactOf(d1: D1Database, assetId: number): Promise<Level> {
  const row = await d1
    .prepare(
      `WITH RECURSIVE down(id, depth) AS (
         SELECT child_asset_id, 1 FROM asset_lineage WHERE parent_asset_id = ?1
         UNION SELECT l.child_asset_id, d.depth + 1 FROM asset_lineage l JOIN down d ON l.parent_asset_id = d.id
         WHERE d.depth < 20)
       SELECT count(DISTINCT id) AS n FROM down`,
    )
    .bind(assetId)
    .first<{ n: number }>();
  const n = row?.n ?? 0;
  return n >= 3 ? "HIGH" : n >= 1 ? "MEDIUM" : "LOW";
}

/** The open incidents of an asset, by (policy, attribute). */
export async function openIncidents(db: Db, asset: IncidentAsset): Promise<Map<string, IncidentRow>> {
  const rows = await db.query.incidents.findMany({
    where: and(eq(incidents.tenantId, asset.tenantId), eq(incidents.assetId, asset.id), eq(incidents.state, "OPEN")),
  });
  return new Map(rows.map((r) => [incidentKey(r.policy, r.attribute), r]));
}

/** The id of the alert a scan raised for a key, resolved inside the batch (ids exist once inserted). */
function alertRefs(jobId: string, a: { policy: string; attribute: string }) {
  return sql`json_array((SELECT id FROM alerts WHERE job_id = ${jobId} AND type = ${a.policy} AND attribute = ${a.attribute}))`;
}

/** The id of the OPEN incident of a key, resolved inside the batch. */
function openIncidentId(asset: IncidentAsset, a: { policy: string; attribute: string }) {
  return sql`(SELECT id FROM incidents WHERE tenant_id = ${asset.tenantId} AND asset_id = ${asset.id}
    AND policy = ${a.policy} AND attribute = ${a.attribute} AND state = 'OPEN')`;
}

/**
 * The statements that fold one scan's alerts into the asset's incidents (run in the same D1
 * batch as the alerts): an alert joins the open incident of its (policy, attribute) or opens
 * one; an open incident without an alert in this scan counts a clean scan and closes itself
 * after `autoCloseAfter` of them. Every change is a history entry naming its alerts and job.
 */
export function aggregationStatements(
  db: Db,
  input: {
    asset: IncidentAsset;
    jobId: string;
    scanTime: string;
    alerts: ScanAlert[];
    open: Map<string, IncidentRow>;
    impact: Level;
    autoCloseAfter: number;
  },
): BatchItem<"sqlite">[] {
  const { asset, jobId, scanTime } = input;
  const statements: BatchItem<"sqlite">[] = [];
  const hit = new Set<string>();
  for (const a of input.alerts) {
    const key = incidentKey(a.policy, a.attribute);
    hit.add(key);
    const existing = input.open.get(key);
    if (existing) {
      const severity = RANK[a.priority] > RANK[existing.severity] ? a.priority : existing.severity;
      statements.push(
        db
          .update(incidents)
          .set({
            alertCount: sql`${incidents.alertCount} + 1`,
            severity,
            lastAlertAt: scanTime,
            cleanScans: 0,
            updatedAt: scanTime,
          })
          .where(eq(incidents.id, existing.id)),
        db.insert(incidentHistory).values({
          tenantId: asset.tenantId,
          incidentId: existing.id,
          time: scanTime,
          fromState: "OPEN",
          toState: "OPEN",
          alertRefs: alertRefs(jobId, a) as unknown as number[],
          actor: "system",
          jobId,
        }),
      );
    } else {
      statements.push(
        db.insert(incidents).values({
          tenantId: asset.tenantId,
          assetId: asset.id,
          projectId: asset.projectId,
          connectionId: asset.connectionId,
          connectionType: asset.type,
          sourceName: asset.name,
          policy: a.policy,
          policyName: a.policyName,
          attribute: a.attribute,
          state: "OPEN",
          severity: a.priority,
          impact: input.impact,
          tag: a.dimension,
          alertCount: 1,
          cleanScans: 0,
          openedAt: scanTime,
          lastAlertAt: scanTime,
          updatedAt: scanTime,
        }),
        db.insert(incidentHistory).values({
          tenantId: asset.tenantId,
          incidentId: openIncidentId(asset, a) as unknown as number,
          time: scanTime,
          fromState: null,
          toState: "OPEN",
          alertRefs: alertRefs(jobId, a) as unknown as number[],
          actor: "system",
          jobId,
        }),
      );
    }
  }
  for (const [key, incident] of input.open) {
    if (hit.has(key)) continue;
    if (incident.cleanScans + 1 >= input.autoCloseAfter) {
      statements.push(
        db
          .update(incidents)
          .set({
            state: "CLOSED",
            cleanScans: incident.cleanScans + 1,
            closedAt: scanTime,
            closeReason: "AUTO_RESOLVED",
            updatedAt: scanTime,
          })
          .where(eq(incidents.id, incident.id)),
        db.insert(incidentHistory).values({
          tenantId: asset.tenantId,
          incidentId: incident.id,
          time: scanTime,
          fromState: "OPEN",
          toState: "CLOSED",
          alertRefs: [],
          actor: "system",
          reason: "AUTO_RESOLVED",
          note: `${incident.cleanScans + 1} consecutive clean scans`,
          jobId,
        }),
      );
    } else {
      statements.push(
        db
          .update(incidents)
          .set({ cleanScans: sql`${incidents.cleanScans} + 1`, updatedAt: scanTime })
          .where(eq(incidents.id, incident.id)),
      );
    }
  }
  return statements;
}

/**
 * Statements that carry moved assets' incidents and alerts to the assets' new project (and
 * connection): their copies of project and connection keep the list filters and project
 * visibility right. Not incident state, so they run in the move's batch, not in the monitor.
 */
export function followMove(
  db: Db,
  tenantId: string,
  assetIds: readonly number[],
  to: { projectId: number; connectionId?: number },
): BatchItem<"sqlite">[] {
  const connection = to.connectionId !== undefined ? { connectionId: to.connectionId } : {};
  return [
    db
      .update(incidents)
      .set({ projectId: to.projectId, ...connection })
      .where(and(eq(incidents.tenantId, tenantId), inJsonList(incidents.assetId, assetIds))),
    db
      .update(alerts)
      .set({ projectId: to.projectId, ...connection })
      .where(and(eq(alerts.tenantId, tenantId), inJsonList(alerts.assetId, assetIds))),
  ];
}
