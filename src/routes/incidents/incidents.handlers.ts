import type { RouteHandler } from "@hono/zod-openapi";
import { exists } from "drizzle-orm";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import type { AssetMonitorRpc } from "../../contracts/asset-monitor";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import { backfillStarted, getBackfillJob, startBackfillStatement } from "../../incidents/backfill";
import { assertRange } from "../../incidents/filters";
import * as incidents from "../../incidents/incidents";
import { ConflictError, NotFoundError } from "../../lib/errors";
import { writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { decodeCursor, listed } from "../pagination";
import { ApiError } from "../problems";
import { backfillView } from "./backfill.views";
import type * as routes from "./incidents.routes";
import { incidentDetailView, incidentView } from "./incidents.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

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
  const rows = await listed(
    c,
    { limit, cursor },
    (size, after) => incidents.listIncidents(c.var.db, tenant, readable, filters, size, listCursor(after)),
    (r) => [r.openedAt, r.id],
  );
  return c.json(rows.map(incidentView), 200);
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
  const readable = await c.get("access").readableProjectIds(tenant);
  return c.json(await incidents.incidentSummary(c.get("db"), tenant, readable, filters, new Date()), 200);
};

export const startBackfill: Handler<"startBackfill"> = async (c) => {
  const { tenant } = c.req.valid("param");
  // One round trip: the access check (its grant is checked here, in the batch), the job
  // (conditioned on it) and its audit row.
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const insert = startBackfillStatement(c.var.db, tenant, actorName(c.var.principal), new Date(), check.allowed);
  const [, rows] = await writeInBatch(c, check, [insert, auditInBatch(c, 202)]);
  const job = backfillStarted(rows);
  auditedInBatch(c, 202);
  // Runs after the response, step by step through the scan-jobs queue (not waitUntil: a big
  // tenant outlasts a request's life); each step saves its progress.
  await c.env.SCAN_JOBS.send(
    { kind: "incident_backfill", tenant_id: tenant, job_id: job.id, after_asset_id: job.afterAssetId },
    { contentType: "json" },
  );
  const statusUrl = `/api/backend/${tenant}/incidents/historical/${job.id}`;
  c.header("Location", statusUrl);
  return c.json({ message: "Incident backfill started", job_id: job.id, status_url: statusUrl }, 202);
};

export const getBackfill: Handler<"getBackfill"> = async (c) => {
  const { tenant, jobId } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const job = await getBackfillJob(c.var.db, tenant, jobId);
  if (!job) throw new NotFoundError("Backfill job");
  return c.json(backfillView(job), 200);
};

export const getIncident: Handler<"getIncident"> = async (c) => {
  const { tenant, incidentId } = c.req.valid("param");
  const { incident } = await c.var.access.incident(tenant, incidentId, "PROJECT_VIEWER");
  // The history is the asset's object's (issue 38): read beside the detail's D1 batch.
  const monitor = assetMonitor(c.env, tenant, incident.assetId);
  return c.json(incidentDetailView(await incidents.incidentDetail(c.var.db, monitor, incident)), 200);
};

export const updateIncident: Handler<"updateIncident"> = async (c) => {
  const { tenant, incidentId } = c.req.valid("param");
  const { assetId } = (await c.var.access.incident(tenant, incidentId, "PROJECT_EDITOR")).incident;
  const { state, note, reason } = c.req.valid("json");
  // The AssetMonitor alone writes incidents: the change is applied there, serially with its scans.
  // Typed by the contract (the stub's types drop an answer that carries JSON details).
  const monitor: Pick<AssetMonitorRpc, "setIncidentState" | "incidentHistory"> = assetMonitor(c.env, tenant, assetId);
  const result = await monitor.setIncidentState({
    tenantId: tenant,
    incidentId,
    state,
    ...(note !== undefined ? { note } : {}),
    ...(reason !== undefined ? { reason } : {}),
    actor: actorName(c.var.principal),
  });
  if (!result.ok) {
    throw result.problem === "not_found" ? new NotFoundError("Incident") : new ConflictError(result.message);
  }
  // The monitor wrote outside this request's D1 session: read its write from the primary, in one
  // batch with the audit row (two round trips in all: the check is read before the monitor is
  // called), with the history the monitor answered (issue 38: its entries are kept there).
  const db = c.var.dbFromPrimary();
  const [incident, history, metrics, marks] = incidents.incidentDetailStatements(db, tenant, incidentId, assetId);
  const rows = await db.batch([incident, history, metrics, marks, auditInBatch(c, 200, exists(incident), db)]);
  auditedInBatch(c, 200);
  const detail =
    incidents.incidentDetailOf([rows[0], rows[1], rows[2], rows[3]], result.history) ??
    // A step of the history's move raced the reads: read the detail again.
    (await incidents.incidentDetail(db, monitor, rows[0][0]!));
  return c.json(incidentDetailView(detail), 200);
};
