/** Alerts written straight into D1, as the AssetMonitor would have written them. */

import { env } from "cloudflare:workers";
import { createDb } from "../../src/db";
import { alerts } from "../../src/db/schema";
import type { AssetRef } from "./assets";

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
