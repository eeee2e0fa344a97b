import type { RouteHandler } from "@hono/zod-openapi";
import { and, exists } from "drizzle-orm";
import type { AppEnv } from "../../app-env";
import { alertsOfJob } from "../../incidents/alerts";
import * as incidents from "../../incidents/incidents";
import { scanJobQuery } from "../../jobs/scan-jobs";
import { NotFoundError } from "../../lib/errors";
import { writeChecked } from "../access";
import type * as routes from "./alerts.routes";
import { alertView } from "./alerts.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/**
 * One round trip: the access check (Access.assetInBatch), the job, its alerts and the audit row of
 * this POST (written where the caller may see the asset and the job is there) are one batch.
 */
export const scanAlerts: Handler<"scanAlerts"> = async (c) => {
  const { tenant, sourceID } = c.req.valid("param");
  const { job_id } = c.req.valid("query");
  const { db } = c.var;
  const check = c.var.access.assetInBatch(tenant, sourceID, "PROJECT_VIEWER");
  const job = scanJobQuery(db, tenant, sourceID, job_id);
  const { results } = await writeChecked(c, check, [job, alertsOfJob(db, tenant, sourceID, job_id)], {
    status: 200,
    when: and(check.allowed, exists(scanJobQuery(db, tenant, sourceID, job_id))),
  });
  if (results[0].length === 0) throw new NotFoundError("Scan job");
  return c.json(results[1].map(alertView), 200);
};

/**
 * One round trip: the access check on the asset (Access.assetInBatch: the route's grant is the
 * tenant's, from the isolate's cache), its alerts and the audit row of this POST are one batch.
 */
export const alertsByFilters: Handler<"alertsByFilters"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { asset_id, alert_refs } = c.req.valid("json");
  const assetId = Number(asset_id);
  const check = c.var.access.assetInBatch(tenant, assetId, "PROJECT_VIEWER");
  const { results } = await writeChecked(c, check, [incidents.alertsByRefs(c.var.db, tenant, assetId, alert_refs)], {
    status: 200,
    when: check.allowed,
  });
  return c.json(results[0].map(alertView), 200);
};
