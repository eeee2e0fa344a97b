/** Incidents and their history written straight into D1, as the AssetMonitor would have written them. */

import { env } from "cloudflare:workers";
import type { AssetMonitorRpc } from "../../src/contracts/asset-monitor";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import { type IncidentEntry, incidentHistory, incidents } from "../../src/db/schema";
import type { AssetRef } from "./assets";

export type IncidentSeed = Partial<typeof incidents.$inferInsert>;

let incidentSeq = 0;
/** One incident of an asset; every field may be overridden (the attribute defaults to a fresh one, so OPEN ones never clash). */
export async function seedIncident(asset: AssetRef, overrides: IncidentSeed = {}): Promise<number> {
  incidentSeq += 1;
  const openedAt = overrides.openedAt ?? "2026-03-10T08:00:00.000Z";
  const [row] = await createDb(env.DB)
    .insert(incidents)
    .values({
      tenantId: asset.tenant,
      assetId: asset.assetId,
      projectId: asset.projectId,
      connectionId: asset.connectionId,
      connectionType: "S3",
      sourceName: "orders",
      policy: "completeness",
      policyName: "Completeness",
      attribute: `column_${incidentSeq}`,
      state: "OPEN",
      severity: "MEDIUM",
      impact: "LOW",
      tag: "completeness",
      alertCount: 1,
      openedAt,
      lastAlertAt: openedAt,
      updatedAt: openedAt,
      ...overrides,
    })
    .returning({ id: incidents.id });
  return row!.id;
}

/** History entries of an incident, in the order given. */
export async function seedHistory(
  tenant: string,
  incidentId: number,
  entries: Array<Partial<typeof incidentHistory.$inferInsert> & { time: string; toState: "OPEN" | "CLOSED" }>,
) {
  const db = createDb(env.DB);
  for (const e of entries) {
    await db.insert(incidentHistory).values({ tenantId: tenant, incidentId, alertRefs: [], actor: "system", ...e });
  }
}

/** An incident's history entries as its asset's AssetMonitor keeps them (issue 38), oldest first. */
export async function keptEntries(incidentId: number): Promise<IncidentEntry[]> {
  const row = await env.DB.prepare("select tenant_id, asset_id from incidents where id = ?")
    .bind(incidentId)
    .first<{ tenant_id: string; asset_id: number }>();
  if (!row) throw new Error(`no incident ${incidentId}`);
  const monitor: Pick<AssetMonitorRpc, "incidentHistory"> = assetMonitor(env, row.tenant_id, row.asset_id);
  return (await monitor.incidentHistory(incidentId)).entries;
}

/** keptEntries as D1's incident_history rows read (snake case, JSON as text), for tests written against them. */
export async function historyRows(incidentId: number) {
  return (await keptEntries(incidentId)).map((e) => ({
    from_state: e.fromState,
    to_state: e.toState,
    alert_refs: JSON.stringify(e.alertRefs),
    actor: e.actor,
    note: e.note,
    reason: e.reason,
    job_id: e.jobId,
    details: e.details === null ? null : JSON.stringify(e.details),
  }));
}
