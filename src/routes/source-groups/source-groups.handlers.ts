import type { RouteHandler } from "@hono/zod-openapi";
import { and } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import * as groups from "../../catalog/source-groups";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import { enqueueScanJobs, queueGroupAnalyses } from "../../jobs/scan-jobs";
import { moveInBatch, settleInBatch, writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { deprecationHeaders } from "../openapi";
import { afterKey, listed } from "../pagination";
import type * as routes from "./source-groups.routes";
import { sourceGroupView } from "./source-groups.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/**
 * Marks a response of the deprecated group API, naming the assets endpoint that replaces it.
 * Appended, so a page's `Link: rel="next"` and the successor link both reach the client.
 */
function deprecated(c: Context<AppEnv>, tenant: string, successor: string) {
  for (const [name, value] of Object.entries(deprecationHeaders(`/api/backend/${tenant}/configuration${successor}`))) {
    c.header(name, value, { append: true });
  }
}

/** Deleted assets' objects forget their history (metric points, alerts, DQ scores), after the answer. */
function forgetAssets(c: Context<AppEnv>, tenant: string, assetIds: readonly number[]) {
  for (const id of new Set(assetIds)) c.executionCtx.waitUntil(assetMonitor(c.env, tenant, id).forget());
}

/**
 * One round trip: the access check, the read of the connection, the group's, assets' and jobs'
 * inserts (conditioned on the same access and on the connection's checks), the audit row and the
 * read of the new assets' ids are one batch; the jobs are then sent to the scan queue.
 */
export const createSourceGroup: Handler<"createSourceGroup"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const input = c.req.valid("json");
  const { db } = c.var;
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  const project = { tenantId: tenant, id: projectId };
  const create = groups.createSourceGroupStatements(
    db,
    project,
    input,
    actorName(c.var.principal),
    check.allowed,
    (when) => auditInBatch(c, 201, when),
  );
  const [access, connection, inserted, , ...rest] = await db.batch([
    check.read,
    create.connection,
    create.insert,
    create.audit,
    ...create.writes,
    create.created,
  ]);
  settleInBatch(c, () => check.settle(access));
  deprecated(c, tenant, `/projects/${projectId}/assets`);
  const created = rest.at(-1) as { id: number }[];
  const { group, jobs } = groups.sourceGroupCreated(input, create, connection, inserted, created);
  auditedInBatch(c, 201);
  await enqueueScanJobs(c.env.SCAN_JOBS, jobs);
  return c.json(
    { group_id: group.id, assets: jobs.map((j) => ({ id: String(j.assetId), analyze_job_id: j.id })) },
    201,
  );
};

/**
 * Two round trips: the access check, the group, the connection it would have and the assets to
 * delete are read in one batch; the change is checked against the stored group in the Worker (its
 * stored payload parsed again for its type, its names for its database, whatever is sent), then
 * the writes and the audit row are one batch. That check cannot be a condition in SQL, so two is
 * the floor.
 */
export const updateSourceGroup: Handler<"updateSourceGroup"> = async (c) => {
  const { tenant, projectId, sourceGroupId } = c.req.valid("param");
  const changes = c.req.valid("json");
  const { db } = c.var;
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  const read = groups.sourceGroupToUpdateQueries(db, { tenantId: tenant, id: projectId }, sourceGroupId, changes);
  const [access, groupRows, connection, members] = await db.batch([
    check.read,
    read.group,
    read.connection,
    read.members,
  ]);
  settleInBatch(c, () => check.settle(access));
  deprecated(c, tenant, `/projects/${projectId}/assets`);
  const group = groups.sourceGroupFound(groupRows);
  const addedIds = await groups.updateSourceGroup(db, group, changes, actorName(c.var.principal), connection, members, [
    auditInBatch(c, 200),
  ]);
  auditedInBatch(c, 200);
  // The deleted assets (checked to be the group's, or nothing was written) forget their history.
  forgetAssets(c, group.tenantId, changes.assets_to_delete ?? []);
  const added = await queueGroupAnalyses(db, c.env.SCAN_JOBS, group.tenantId, group.id, addedIds);
  return c.json({ assets: added }, 200);
};

/**
 * One round trip: both projects' access checks, the reads of the groups, their assets and the
 * target connection, the moves (conditioned on both accesses and on every check of the move) and
 * the audit row are one batch (Access.projectInBatch; the route's grant, on the target, first).
 */
export const moveSourceGroups: Handler<"moveSourceGroups"> = async (c) => {
  const { tenant, targetProjectId } = c.req.valid("param");
  const body = c.req.valid("json");
  const { db } = c.var;
  const check = moveInBatch(c, tenant, targetProjectId, body.source_project_id);
  const from = { tenantId: tenant, id: body.source_project_id };
  const move = groups.moveSourceGroupsStatements(
    db,
    from,
    { tenantId: tenant, id: targetProjectId },
    body.source_group_ids,
    body.target_connection_id,
    check.allowed,
  );
  const [targetRows, sourceRows, groupRows, members, connection, , , , updated] = await db.batch([
    ...check.reads,
    move.groups,
    move.members,
    move.connection,
    move.writes[0]!,
    move.writes[1]!,
    move.writes[2]!,
    move.update,
    auditInBatch(c, 200),
  ]);
  check.settle(targetRows, sourceRows);
  deprecated(c, tenant, `/projects/${targetProjectId}/assets/move`);
  const moved = groups.sourceGroupsMoved(
    from,
    move.unique,
    groupRows,
    members,
    connection,
    body.target_connection_id,
    updated,
  );
  auditedInBatch(c, 200);
  return c.json(
    {
      message: `${moved.groups.length} source group(s) moved to project ${targetProjectId}`,
      source_groups: moved.groups,
      assets: moved.assets.map(String),
    },
    200,
  );
};

export const listProjectSourceGroups: Handler<"listProjectSourceGroups"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  await c.var.access.project(tenant, projectId, "PROJECT_VIEWER");
  // After listed, whose takePage sets (not appends) its own Link.
  const page = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => groups.listSourceGroups(c.var.db, tenant, [projectId], limit, afterKey(cursor, "number")),
    (r) => [r.id],
  );
  deprecated(c, tenant, `/projects/${projectId}/assets`);
  return c.json(page.map(sourceGroupView), 200);
};

export const listAllSourceGroups: Handler<"listAllSourceGroups"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const ids = await c.var.access.readableProjectIds(tenant);
  // After listed, whose takePage sets (not appends) its own Link.
  const page = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => groups.listSourceGroups(c.var.db, tenant, ids, limit, afterKey(cursor, "number")),
    (r) => [r.id],
  );
  deprecated(c, tenant, "/assets");
  return c.json(page.map(sourceGroupView), 200);
};

/**
 * One round trip: the access check, the deletes (conditioned on the same access) and the audit row
 * are one batch (Access.projectInBatch; the route's grant is checked here, not before).
 */
export const deleteSourceGroup: Handler<"deleteSourceGroup"> = async (c) => {
  const { tenant, projectId, sourceGroupId } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  const project = { tenantId: tenant, id: projectId };
  const remove = groups.deleteSourceGroupStatements(c.var.db, project, sourceGroupId, check.allowed);
  const [, removed, gone] = await writeInBatch(c, check, [...remove, auditInBatch(c, 200)]);
  deprecated(c, tenant, `/projects/${projectId}/assets`);
  groups.sourceGroupDeleted(gone);
  forgetAssets(
    c,
    tenant,
    removed.map((a) => a.id),
  );
  auditedInBatch(c, 200);
  return c.json({ message: `Source group ${sourceGroupId} and its assets deleted` }, 200);
};

/**
 * One round trip: the access check, the reads and the audit row (recorded where the caller may see
 * the group) are one batch (Access.projectInBatch; the route's grant is checked here, not before).
 */
export const listSourceGroupAssetNames: Handler<"listSourceGroupAssetNames"> = async (c) => {
  const { tenant, projectId, sourceGroupId } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_VIEWER");
  const read = groups.groupAssetNamesStatements(c.var.db, { tenantId: tenant, id: projectId }, sourceGroupId);
  const audit = auditInBatch(c, 200, and(check.allowed, read.found));
  const [, group, names] = await writeInBatch(c, check, [read.group, read.names, audit]);
  deprecated(c, tenant, `/projects/${projectId}/assets`);
  const answer = groups.groupAssetNamesRead(group, names);
  auditedInBatch(c, 200);
  return c.json(answer, 200);
};
