import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { Access } from "../../auth/access";
import type { Db } from "../../db";
import type { ProjectRole } from "../../db/schema";
import * as dqScore from "../../settings/dq-score";
import type * as routes from "./dq-score.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/**
 * Checks the caller's role in the asset's project. Tenant access comes first, so an outsider
 * learns nothing about which asset ids exist.
 */
async function authorizeAsset(access: Access, db: Db, tenant: string, assetId: number, need: ProjectRole) {
  await access.tenant(tenant);
  await access.project(tenant, await dqScore.assetProjectId(db, tenant, assetId), need);
}

export const getDqScoreConfig: Handler<"getDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await authorizeAsset(c.var.access, c.var.db, tenant, assetId, "PROJECT_VIEWER");
  return c.json({ dq_score_config: await dqScore.getDqScoreConfig(c.var.db, tenant, assetId) }, 200);
};

export const putDqScoreConfig: Handler<"putDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await authorizeAsset(c.var.access, c.var.db, tenant, assetId, "PROJECT_EDITOR");
  const config = await dqScore.putDqScoreConfig(c.var.db, tenant, assetId, c.req.valid("json"));
  return c.json({ dq_score_config: config }, 200);
};

export const deleteDqScoreConfig: Handler<"deleteDqScoreConfig"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await authorizeAsset(c.var.access, c.var.db, tenant, assetId, "PROJECT_EDITOR");
  return c.json({ dq_score_config: await dqScore.resetDqScoreConfig(c.var.db, tenant, assetId) }, 200);
};
