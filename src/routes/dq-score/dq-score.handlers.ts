import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import * as dqScore from "../../settings/dq-score";
import { writeChecked } from "../access";
import { afterKey, listed } from "../pagination";
import type * as routes from "./dq-score.routes";
import { dqScoreView } from "./dq-score.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const getDqScoreConfig: Handler<"getDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await c.var.access.asset(tenant, assetId, "PROJECT_VIEWER");
  return c.json({ dq_score_config: await dqScore.getDqScoreConfig(c.var.db, tenant, assetId) }, 200);
};

/** One round trip: the access check, the upsert (conditioned on it) and its audit row (writeChecked). */
export const putDqScoreConfig: Handler<"putDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const check = c.var.access.assetInBatch(tenant, assetId, "PROJECT_EDITOR");
  const put = dqScore.putDqScoreConfigStatement(c.var.db, tenant, assetId, c.req.valid("json"), check.allowed);
  const { results } = await writeChecked(c, check, [put], { status: 200 });
  return c.json({ dq_score_config: dqScore.dqScoreConfigOf(results[0][0]) }, 200);
};

/**
 * One round trip, as putDqScoreConfig; the audit row is written on the caller's access, as an
 * asset without settings of its own is reset too (nothing deleted).
 */
export const deleteDqScoreConfig: Handler<"deleteDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const check = c.var.access.assetInBatch(tenant, assetId, "PROJECT_EDITOR");
  const reset = dqScore.resetDqScoreConfigStatement(c.var.db, tenant, assetId, check.allowed);
  await writeChecked(c, check, [reset], { status: 200, when: check.allowed });
  return c.json({ dq_score_config: dqScore.defaultDqScoreConfig() }, 200);
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
