import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import type { Access } from "../../auth/access";
import { actorName } from "../../auth/principal";
import type { Db } from "../../db";
import type { ProjectRole } from "../../db/schema";
import { getBackfillJob, startBackfill as recordBackfill } from "../../incidents/backfill";
import { assertRange } from "../../incidents/filters";
import * as incidents from "../../incidents/incidents";
import { ApiError } from "../../lib/errors";
import { decodeCursor, takePage } from "../../lib/pagination";
import { alertView } from "../../monitor/alerts";
import { assetMonitor } from "../../monitor/client";
import type * as routes from "./incidents.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/** An incident of the tenant in a project where the caller holds `need`; 404 when they cannot see it. */
export async function incidentWithAccess(access: Access, db: Db, tenant: string, id: number, need: ProjectRole) {
  await access.tenant(tenant);
  const row = await incidents.getIncident(db, tenant, id);
  try {
    await access.project(tenant, row.projectId, need);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw ApiError.notFound("Incident");
    throw err;
  }
  return row;
}

function listCursor(cursor: string | undefined) {
  if (cursor === undefined) return undefined;
  const [openedAt, id, ...rest] = decodeCursor(cursor);
  if (typeof openedAt !== "string" || typeof id !== "number" || rest.length > 0) {
    throw ApiError.badRequest("Invalid cursor", [{ path: "query.cursor", message: "not a cursor of this list" }]);
  }
  return { openedAt, id };
}

export const listIncidents: Handler<"listIncidents"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { limit, cursor, ...filters } = c.req.valid("query");
  assertRange(filters);
  const readable = await c.var.access.readableProjectIds(tenant);
  const rows = await incidents.listIncidents(c.var.db, tenant, readable, filters, limit, listCursor(cursor));
  return c.json(takePage(c, rows, limit, (r) => [r.openedAt, r.id]).map(incidents.incidentView), 200);
};

export const incidentDistribution: Handler<"incidentDistribution"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const filters = c.req.valid("query");
  assertRange(filters);
  const readable = await c.var.access.readableProjectIds(tenant);
  return c.json(await incidents.incidentDistribution(c.var.db, tenant, readable, filters, new Date()), 200);
};

export const incidentSummary: Handler<"incidentSummary"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const filters = c.req.valid("query");
  assertRange(filters);
  const readable = await c.var.access.readableProjectIds(tenant);
  return c.json(await incidents.incidentSummary(c.var.db, tenant, readable, filters, new Date()), 200);
};

export const startBackfill: Handler<"startBackfill"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { principal } = await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const job = await recordBackfill(c.env.UPLOADS, tenant, actorName(principal), new Date());
  // Runs after the response; progress is saved as it goes.
  // Steps through the scan-jobs queue, not waitUntil: a big tenant outlasts a request's life.
  await c.env.SCAN_JOBS.send(
    { kind: "incident_backfill", tenant_id: tenant, job_id: job.job_id, after_asset_id: 0 },
    { contentType: "json" },
  );
  const statusUrl = `/api/backend/${tenant}/incidents/historical/${job.job_id}`;
  c.header("Location", statusUrl);
  return c.json({ message: "Incident backfill started", job_id: job.job_id, status_url: statusUrl }, 202);
};

export const getBackfill: Handler<"getBackfill"> = async (c) => {
  const { tenant, jobId } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const job = await getBackfillJob(c.env.UPLOADS, tenant, jobId);
  if (!job) throw ApiError.notFound("Backfill job");
  return c.json(job, 200);
};

export const getIncident: Handler<"getIncident"> = async (c) => {
  const { tenant, incidentId } = c.req.valid("param");
  const row = await incidentWithAccess(c.var.access, c.var.db, tenant, incidentId, "PROJECT_VIEWER");
  return c.json(await incidents.incidentDetail(c.var.db, row), 200);
};

export const updateIncident: Handler<"updateIncident"> = async (c) => {
  const { tenant, incidentId } = c.req.valid("param");
  const row = await incidentWithAccess(c.var.access, c.var.db, tenant, incidentId, "PROJECT_EDITOR");
  const { state, note, reason } = c.req.valid("json");
  // The AssetMonitor alone writes incidents: the change is applied there, serially with its scans.
  const result = await assetMonitor(c.env, tenant, row.assetId).setIncidentState({
    tenantId: tenant,
    incidentId,
    state,
    ...(note !== undefined ? { note } : {}),
    ...(reason !== undefined ? { reason } : {}),
    actor: actorName(c.var.principal),
  });
  if (!result.ok) {
    throw result.status === 404 ? ApiError.notFound("Incident") : ApiError.conflict(result.message);
  }
  return c.json(
    await incidents.incidentDetail(c.var.db, await incidents.getIncident(c.var.db, tenant, incidentId)),
    200,
  );
};

export const alertsByFilters: Handler<"alertsByFilters"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const { asset_id, alert_refs } = c.req.valid("json");
  const { asset } = await c.var.access.asset(tenant, Number(asset_id), "PROJECT_VIEWER");
  const rows = await incidents.alertsByRefs(c.var.db, tenant, asset.id, alert_refs);
  return c.json(rows.map(alertView), 200);
};
