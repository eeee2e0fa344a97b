import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { alertsOfJob } from "../../incidents/alerts";
import * as incidents from "../../incidents/incidents";
import { getScanJob } from "../../jobs/scan-jobs";
import { NotFoundError } from "../../lib/errors";
import type * as routes from "./alerts.routes";
import { alertView } from "./alerts.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const scanAlerts: Handler<"scanAlerts"> = async (c) => {
  const { tenant, sourceID } = c.req.valid("param");
  const { job_id } = c.req.valid("query");
  await c.var.access.asset(tenant, sourceID, "PROJECT_VIEWER");
  if (!(await getScanJob(c.var.db, tenant, sourceID, job_id))) throw new NotFoundError("Scan job");
  const rows = await alertsOfJob(c.var.db, tenant, sourceID, job_id);
  return c.json(rows.map(alertView), 200);
};

export const alertsByFilters: Handler<"alertsByFilters"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { asset_id, alert_refs } = c.req.valid("json");
  const { asset } = await c.var.access.asset(tenant, Number(asset_id), "PROJECT_VIEWER");
  const rows = await incidents.alertsByRefs(c.var.db, tenant, asset.id, alert_refs);
  return c.json(rows.map(alertView), 200);
};
