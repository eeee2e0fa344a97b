import type { RouteHandler } from "@hono/zod-openapi";
import { and, exists } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import type { KeptAlert } from "../../db/schema";
import {
  type AlertQuery,
  type AlertSource,
  legacyAlertsStatements,
  mergedAlerts,
  readAlerts,
} from "../../incidents/alerts";
import { type EndedJobSource, scanJobQuery } from "../../jobs/scan-jobs";
import { NotFoundError } from "../../lib/errors";
import { writeChecked } from "../access";
import type * as routes from "./alerts.routes";
import { alertView } from "./alerts.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/** The asset's ended jobs (its AssetMonitor). */
const jobSource = (c: Context<AppEnv>, tenant: string, assetId: number): EndedJobSource =>
  assetMonitor(c.env, tenant, assetId);

/**
 * The asset's alerts `query` selects, from its object, asked in parallel with the route's one D1
 * batch (`batch`: given the two statements of the alerts still in D1, legacyAlertsStatements, it
 * runs them with the access check and answers their rows). The object's answer is used only once
 * the batch has passed the check: a refused request throws there, and what the object said is
 * dropped unread.
 */
async function checkedAlerts<T>(
  c: Context<AppEnv>,
  tenant: string,
  assetId: number,
  query: AlertQuery,
  batch: (legacy: ReturnType<typeof legacyAlertsStatements>) => Promise<T>,
  legacyOf: (out: T) => Parameters<typeof mergedAlerts>[1],
  asked?: ReturnType<AlertSource["alerts"]>,
): Promise<{ out: T; alerts: KeptAlert[] }> {
  const monitor: AlertSource = assetMonitor(c.env, tenant, assetId);
  const asset = { tenantId: tenant, id: assetId };
  const kept = asked ?? monitor.alerts(query);
  // Settled here: a refused request never waits on it, nor leaves its failure unhandled.
  kept.catch(() => undefined);
  const out = await batch(legacyAlertsStatements(c.var.db, asset, query));
  const alerts = mergedAlerts(await kept, legacyOf(out)) ?? (await readAlerts(c.var.db, monitor, asset, query));
  return { out, alerts };
}

/**
 * One sequential D1 round trip: the access check (Access.assetInBatch), the job, its alerts still
 * in D1 and the audit row of this POST (written where the caller may see the asset and the job is
 * there) are one batch. The asset's object is asked for its alerts of the job first: an ended job
 * is there (issue 38), and whether it is decides the audit row with D1's running job.
 */
export const scanAlerts: Handler<"scanAlerts"> = async (c) => {
  const { tenant, sourceID } = c.req.valid("param");
  const { job_id } = c.req.valid("query");
  const { db } = c.var;
  const check = c.var.access.assetInBatch(tenant, sourceID, "PROJECT_VIEWER");
  const job = scanJobQuery(db, tenant, sourceID, job_id);
  const source: AlertSource = assetMonitor(c.env, tenant, sourceID);
  const asked = source.alerts({ jobId: job_id });
  asked.catch(() => undefined);
  const endedJob = (await asked.catch(() => undefined))?.hasJob === true;
  const { out, alerts } = await checkedAlerts(
    c,
    tenant,
    sourceID,
    { jobId: job_id },
    async ([legacy, moved]) =>
      (
        await writeChecked(c, check, [job, legacy, moved], {
          status: 200,
          when: and(check.allowed, endedJob ? undefined : exists(scanJobQuery(db, tenant, sourceID, job_id))),
        })
      ).results,
    (results) => [results[1], results[2]],
    asked,
  );
  // In neither: asked again when the object's answer came before it kept the job that D1 let go.
  if (out[0].length === 0 && !endedJob && !(await jobSource(c, tenant, sourceID).scanJob(job_id)).job) {
    throw new NotFoundError("Scan job");
  }
  return c.json(
    alerts.map((a) => alertView({ ...a, assetId: sourceID })),
    200,
  );
};

/**
 * One sequential round trip: the access check on the asset (Access.assetInBatch: the route's grant
 * is the tenant's, from the isolate's cache), its alerts still in D1 and the audit row of this POST
 * are one batch, and the asset's object is asked for its alerts meanwhile.
 */
export const alertsByFilters: Handler<"alertsByFilters"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { asset_id, alert_refs } = c.req.valid("json");
  const assetId = Number(asset_id);
  const check = c.var.access.assetInBatch(tenant, assetId, "PROJECT_VIEWER");
  const { alerts } = await checkedAlerts(
    c,
    tenant,
    assetId,
    { ids: [...new Set(alert_refs)] },
    async (legacy) => (await writeChecked(c, check, [...legacy], { status: 200, when: check.allowed })).results,
    (results) => [results[0], results[1]],
  );
  return c.json(
    alerts.map((a) => alertView({ ...a, assetId })),
    200,
  );
};
