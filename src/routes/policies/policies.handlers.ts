import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import * as policySettings from "../../catalog/policy-settings";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import { writeChecked } from "../access";
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

/**
 * One round trip: the access check, the upsert (conditioned on it, returning the row) and its
 * audit row (writeChecked); the asset's AssetMonitor is asked for its training once the check has
 * passed (it is no D1 round trip).
 */
export const putPolicies: Handler<"putPolicies"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const check = c.var.access.assetInBatch(tenant, assetId, "PROJECT_EDITOR");
  const asset = { tenantId: tenant, id: assetId };
  const put = policySettings.putAssetPolicySettingsStatement(c.var.db, asset, c.req.valid("json"), check.allowed);
  const { results } = await writeChecked(c, check, [put], { status: 200 });
  const training = await assetMonitor(c.env, tenant, assetId).training();
  return c.json(
    { ...policySettings.policySettingsOf(results[0][0]), training: training as Record<string, unknown>[] },
    200,
  );
};
