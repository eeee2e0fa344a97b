import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import * as dqScore from "../../settings/dq-score";
import { afterKey, listed } from "../pagination";
import type * as routes from "./dq-score.routes";
import { dqScoreView } from "./dq-score.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const getDqScoreConfig: Handler<"getDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await c.var.access.asset(tenant, assetId, "PROJECT_VIEWER");
  return c.json({ dq_score_config: await dqScore.getDqScoreConfig(c.var.db, tenant, assetId) }, 200);
};

export const putDqScoreConfig: Handler<"putDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await c.var.access.asset(tenant, assetId, "PROJECT_EDITOR");
  const config = await dqScore.putDqScoreConfig(c.var.db, tenant, assetId, c.req.valid("json"));
  return c.json({ dq_score_config: config }, 200);
};

export const deleteDqScoreConfig: Handler<"deleteDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await c.var.access.asset(tenant, assetId, "PROJECT_EDITOR");
  return c.json({ dq_score_config: await dqScore.resetDqScoreConfig(c.var.db, tenant, assetId) }, 200);
};

export const dqScoreHistory: Handler<"dqScoreHistory"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const { asset } = await c.var.access.asset(tenant, assetId, "PROJECT_VIEWER");
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) =>
      dqScore.dqScoreHistory(
        c.var.db,
        assetMonitor(c.env, asset.tenantId, asset.id),
        asset,
        limit,
        afterKey(cursor, "string"),
      ),
    (r) => [r.scoredAt],
  );
  return c.json(rows.map(dqScoreView), 200);
};
