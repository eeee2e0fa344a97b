import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import * as spark from "../../settings/spark";
import type * as routes from "./spark-job-config.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const getSparkJobConfig: Handler<"getSparkJobConfig"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  return c.json(await spark.getSparkJobConfig(c.var.db, tenant), 200);
};

export const putSparkJobConfig: Handler<"putSparkJobConfig"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  return c.json(await spark.putSparkJobConfig(c.var.db, tenant, c.req.valid("json")), 200);
};

export const deleteSparkJobConfig: Handler<"deleteSparkJobConfig"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  await spark.deleteSparkJobConfig(c.var.db, tenant);
  return c.json({ message: `Spark job configuration of tenant ${tenant} deleted` }, 200);
};
