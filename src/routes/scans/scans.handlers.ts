import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import { spendPrincipalRequest } from "../../auth/rate-limit";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import { cancelUnrunJobStatement, keepEnded } from "../../jobs/lifecycle";
import { type EndedJobSource, getScanJob, type JobKey, listScanJobs, scanJobQuery } from "../../jobs/scan-jobs";
import type { ScanJobRequest } from "../../jobs/scan-requests";
import { NotFoundError } from "../../lib/errors";
import { cancelScan as cancelScanJob } from "../../pipeline/spark-runs";
import { writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { decodeCursor, listed } from "../pagination";
import { ApiError } from "../problems";
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

/**
 * The keyset a page of the job list starts after: [created_at, id]; [created_at] alone from a
 * cursor made before the id was in it (after every job of that time).
 */
function jobCursor(cursor: string | undefined): JobKey | undefined {
  if (cursor === undefined) return undefined;
  const [createdAt, id, ...rest] = decodeCursor(cursor);
  if (typeof createdAt !== "string" || (id !== undefined && typeof id !== "string") || rest.length > 0) {
    throw ApiError.badRequest("Invalid cursor", [{ path: "query.cursor", message: "not a cursor of this list" }]);
  }
  return { createdAt, id };
}

export const listScans: Handler<"listScans"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  await c.var.access.assetHead(tenant, assetId, "PROJECT_VIEWER");
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) =>
      listScanJobs(c.var.db, assetMonitor(c.env, tenant, assetId), tenant, assetId, limit, jobCursor(cursor)),
    (r) => [r.createdAt, r.id],
  );
  return c.json(rows.map(scanJobView), 200);
};

export const getScan: Handler<"getScan"> = async (c) => {
  const { tenant, assetId, job_id } = c.req.valid("param");
  await c.var.access.assetHead(tenant, assetId, "PROJECT_VIEWER");
  const job = await getScanJob(c.var.db, assetMonitor(c.env, tenant, assetId), tenant, assetId, job_id);
  if (!job) throw new NotFoundError("Scan job");
  return c.json(scanJobView(job), 200);
};

/**
 * One round trip for a job no provider runs (a queued one, as most are): the access check, the
 * job's read, its cancel (conditioned on the same access) and the audit row are one batch; the
 * cancelled job then goes to its asset's object (keepEnded), which takes it out of D1. A job that
 * ended is in that object, asked meanwhile (its answer used only once the batch has passed the
 * check). A job handed to a Spark provider is read in that batch too, then its run is cancelled at
 * the provider before the job is (the provider is called only once the check has passed): more
 * round trips.
 */
export const cancelScan: Handler<"cancelScan"> = async (c) => {
  const { tenant, assetId, job_id } = c.req.valid("param");
  const check = c.var.access.assetInBatch(tenant, assetId, "PROJECT_EDITOR");
  const { db } = c.var;
  const actor = actorName(c.var.principal);
  const job = { id: job_id, tenantId: tenant, assetId };
  const monitor: EndedJobSource = assetMonitor(c.env, tenant, assetId);
  const ended = monitor.scanJob(job_id);
  // Settled here: a refused request never waits on it, nor leaves its failure unhandled.
  ended.catch(() => undefined);
  const [, [read], [cancelled]] = await writeInBatch(c, check, [
    scanJobQuery(db, tenant, assetId, job_id),
    cancelUnrunJobStatement(db, job, `cancelled by ${actor}`, check.allowed),
    auditInBatch(c, 200),
  ]);
  if (cancelled) {
    auditedInBatch(c, 200);
    await keepEnded(c.env, cancelled);
    return c.json(scanJobView(cancelled), 200);
  }
  // Not in D1: ended, in the object; asked again when the first answer predates the job's keeping.
  const found = read ?? (await ended).job ?? (await monitor.scanJob(job_id)).job;
  if (!found) throw new NotFoundError("Scan job");
  await cancelScanJob(c.env, db, found, actor);
  return c.json(scanJobView((await getScanJob(db, monitor, tenant, assetId, job_id))!), 200);
};
