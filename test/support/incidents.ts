import { env } from "cloudflare:workers";
import { createDb } from "../../src/db";
import { alerts, incidentHistory, incidents } from "../../src/db/schema";
import { insertAsset } from "./settings";

/**
 * Read-side fixtures: incidents, their history and alerts written straight into D1, as the
 * AssetMonitor would have written them, so the API's reading can be tested on known rows.
 */
export interface AssetRef {
  tenant: string;
  projectId: number;
  assetId: number;
  connectionId: number;
}

/** An asset (and its S3 connection) of a project, straight in D1. */
export async function seedAsset(tenant: string, projectId: number): Promise<AssetRef> {
  const assetId = await insertAsset(tenant, projectId);
  const row = await env.DB.prepare("select connection_id from assets where id = ?")
    .bind(assetId)
    .first<{ connection_id: number }>();
  return { tenant, projectId, assetId, connectionId: row!.connection_id };
}

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

let jobSeq = 0;
/** One alert of an asset; returns its id. */
export async function seedAlert(asset: AssetRef, overrides: Partial<typeof alerts.$inferInsert> = {}): Promise<number> {
  jobSeq += 1;
  const time = overrides.metricTime ?? "2026-03-10T08:00:00.000Z";
  const [row] = await createDb(env.DB)
    .insert(alerts)
    .values({
      tenantId: asset.tenant,
      assetId: asset.assetId,
      projectId: asset.projectId,
      connectionId: asset.connectionId,
      jobId: `job-${Date.now().toString(36)}-${jobSeq}-${Math.random().toString(36).slice(2)}`,
      type: "completeness",
      policyName: "Completeness",
      attribute: "email",
      priority: "HIGH",
      description: "email is null in 40% of rows",
      sourceName: "orders",
      sourceType: "S3",
      isNotificationEnabled: true,
      metric: "attr:email:null_rate",
      metricValue: "0.4",
      metricTime: time,
      createTime: time,
      saveTime: time,
      details: { observed: 0.4, expected: { low: 0, high: 0.02 }, dimension: "completeness" },
      ...overrides,
    })
    .returning({ id: alerts.id });
  return row!.id;
}
