import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import * as policySettings from "../../catalog/policy-settings";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import type * as routes from "./policies.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const getPolicies: Handler<"getPolicies"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const { asset } = await c.var.access.asset(tenant, assetId, "PROJECT_VIEWER");
  const [current, training] = await Promise.all([
    policySettings.assetPolicySettings(c.var.db, asset),
    assetMonitor(c.env, asset.tenantId, asset.id).training(),
  ]);
  return c.json({ ...current, training: training as Record<string, unknown>[] }, 200);
};

export const putPolicies: Handler<"putPolicies"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const { asset } = await c.var.access.asset(tenant, assetId, "PROJECT_EDITOR");
  const [current, training] = await Promise.all([
    policySettings.putAssetPolicySettings(c.var.db, asset, c.req.valid("json")),
    assetMonitor(c.env, asset.tenantId, asset.id).training(),
  ]);
  return c.json({ ...current, training: training as Record<string, unknown>[] }, 200);
};
