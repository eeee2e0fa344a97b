import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import * as spark from "../../settings/spark";
import { writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import type * as routes from "./spark-job-config.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const getSparkJobConfig: Handler<"getSparkJobConfig"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  return c.json(await spark.getSparkJobConfig(c.var.db, tenant), 200);
};

/**
 * One round trip: the access check, the upsert (conditioned on the same access) and its audit row
 * are one batch (Access.tenantInBatch; the route's grant is checked here, not before).
 */
export const putSparkJobConfig: Handler<"putSparkJobConfig"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const upsert = spark.putSparkJobConfigStatement(c.var.db, tenant, c.req.valid("json"), check.allowed);
  const [, rows] = await writeInBatch(c, check, [upsert, auditInBatch(c, 200)]);
  auditedInBatch(c, 200);
  return c.json(spark.sparkJobConfigView(rows), 200);
};

/** One round trip, as putSparkJobConfig; removing none is a success, audited on the access alone. */
export const deleteSparkJobConfig: Handler<"deleteSparkJobConfig"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const remove = spark.deleteSparkJobConfigStatement(c.var.db, tenant, check.allowed);
  await writeInBatch(c, check, [remove, auditInBatch(c, 200, check.allowed)]);
  auditedInBatch(c, 200);
  return c.json({ message: `Spark job configuration of tenant ${tenant} deleted` }, 200);
};
