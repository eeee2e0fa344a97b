import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../db";
import { alerts } from "../db/schema";

/** The alerts one job raised for one asset, in a stable order. */
export function alertsOfJob(db: Db, tenantId: string, assetId: number, jobId: string) {
  return db.query.alerts.findMany({
    where: and(eq(alerts.tenantId, tenantId), eq(alerts.assetId, assetId), eq(alerts.jobId, jobId)),
    orderBy: asc(alerts.id),
  });
}
