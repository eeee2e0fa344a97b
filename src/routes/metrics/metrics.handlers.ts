import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { assetPolicySettings } from "../../catalog/policy-settings";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import { attrMetric } from "../../detection/metrics";
import * as metrics from "../../incidents/metric-history";
import type * as routes from "./metrics.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const listMetrics: Handler<"listMetrics"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const { attribute } = c.req.valid("query");
  const { asset } = await c.var.access.asset(tenant, assetId, "PROJECT_VIEWER");
  const prefix = attribute === undefined ? null : attrMetric(attribute, "");
  return c.json(await assetMonitor(c.env, asset.tenantId, asset.id).metricCatalog(prefix), 200);
};

export const metricHistory: Handler<"metricHistory"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const { metric } = c.req.valid("query");
  const { asset } = await c.var.access.asset(tenant, assetId, "PROJECT_VIEWER");
  const settings = await assetPolicySettings(c.var.db, asset);
  const monitor = assetMonitor(c.env, asset.tenantId, asset.id);
  const points = await metrics.metricHistory(c.var.db, monitor, asset, metric, settings.overrides);
  return c.json({ metric, points }, 200);
};
