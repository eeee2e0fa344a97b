import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import { spendPrincipalRequest } from "../../auth/rate-limit";
import { getScanJob, listScanJobs } from "../../jobs/scan-jobs";
import type { ScanJobRequest } from "../../jobs/scan-requests";
import { NotFoundError } from "../../lib/errors";
import { cancelScan as cancelScanJob } from "../../pipeline/spark-runs";
import { afterKey, listed } from "../pagination";
import { queueChecked } from "./scans.queue";
import type * as routes from "./scans.routes";
import { scanJobView } from "./scans.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const triggerScan: Handler<"triggerScan"> = async (c) => {
  await spendPrincipalRequest(c.env, "strict", c.var.principal);
  const { tenant, assetId } = c.req.valid("param");
  const body = (c.req.valid("json") as ScanJobRequest | undefined) ?? {};
  const job = await queueChecked(c, tenant, assetId, body, "api");
  return c.json({ message: `Scan of asset ${assetId} queued`, job_id: job.id }, 202);
};

export const listScans: Handler<"listScans"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await c.var.access.assetHead(tenant, assetId, "PROJECT_VIEWER");
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => listScanJobs(c.var.db, tenant, assetId, limit, afterKey(cursor, "string")),
    (r) => [r.createdAt],
  );
  return c.json(rows.map(scanJobView), 200);
};

export const getScan: Handler<"getScan"> = async (c) => {
  const { tenant, assetId, job_id } = c.req.valid("param");
  await c.var.access.assetHead(tenant, assetId, "PROJECT_VIEWER");
  const job = await getScanJob(c.var.db, tenant, assetId, job_id);
  if (!job) throw new NotFoundError("Scan job");
  return c.json(scanJobView(job), 200);
};

export const cancelScan: Handler<"cancelScan"> = async (c) => {
  const { tenant, assetId, job_id } = c.req.valid("param");
  await c.var.access.assetHead(tenant, assetId, "PROJECT_EDITOR");
  const { db } = c.var;
  const job = await getScanJob(db, tenant, assetId, job_id);
  if (!job) throw new NotFoundError("Scan job");
  await cancelScanJob(c.env, db, job, actorName(c.var.principal));
  return c.json(scanJobView((await getScanJob(db, tenant, assetId, job_id))!), 200);
};
