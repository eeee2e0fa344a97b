/** Incidents and their history written straight into D1, as the AssetMonitor would have written them. */

import { env } from "cloudflare:workers";
import { createDb } from "../../src/db";
import { incidentHistory, incidents } from "../../src/db/schema";
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
