import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import * as assets from "../../catalog/assets";
import { assetMonitor } from "../../contracts/asset-monitor-client";
import type { AssetRow } from "../../db/schema";
import { NotFoundError } from "../../lib/errors";
import { loadAssetSchema, schemaInputQueries, schemaInputs } from "../../pipeline/asset-schema";
import { moveInBatch, settleCheck, settleInBatch, writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { afterKey, listed } from "../pagination";
import type * as routes from "./assets.routes";
import { assetView, assetViews, NO_EXTRAS } from "./assets.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

const extras = (q: { with_attributes: boolean; with_schedules: boolean; with_lineage: boolean }) => ({
  attributes: q.with_attributes,
  schedules: q.with_schedules,
  lineage: q.with_lineage,
});

/**
 * One round trip: the access check, the read of the asset's connection, the insert (conditioned
 * on the same access and on the connection's checks) and its audit row are one batch.
 */
export const createAsset: Handler<"createAsset"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const input = c.req.valid("json");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  const project = { tenantId: tenant, id: projectId };
  const create = assets.createAssetStatements(c.var.db, project, input, actorName(c.var.principal), check.allowed);
  const [, connection, inserted] = await writeInBatch(c, check, [
    create.connection,
    create.insert,
    auditInBatch(c, 201),
  ]);
  const row = assets.assetCreated(input, create, connection, inserted);
  auditedInBatch(c, 201);
  return c.json(assetView(row), 201);
};

/**
 * Two round trips: the access check, the asset and the connection it would have are read in one
 * batch; the change is checked against the stored asset in the Worker (a type, payload or
 * connection sent is checked with what is kept), then the UPDATE and its audit row are one batch.
 */
/**
 * One round trip as a rule: the access check, the reads of the asset and its connection, the
 * UPDATE (conditioned on the same access and on the change's checks, in SQL) and its audit row are
 * one batch, the answer read from what the batch saw (assets.updateAssetStatements). Two where the
 * change is checked against what is stored in the Worker: a payload kept for a new type, or stored
 * options that name attributes for a new connection's database.
 */
export const updateAsset: Handler<"updateAsset"> = async (c) => {
  const { tenant, projectId, assetId } = c.req.valid("param");
  const changes = c.req.valid("json");
  const { db } = c.var;
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  const update = assets.updateAssetStatements(db, { tenantId: tenant, id: projectId }, assetId, changes, check.allowed);
  const [access, asset, connection, written] = await db.batch([
    check.read,
    update.asset,
    update.connection,
    ...(update.write ? ([update.write, auditInBatch(c, 200)] as const) : []),
  ]);
  settleInBatch(c, () => check.settle(access));
  const row = await assets.assetUpdated(db, changes, asset, connection, written as AssetRow[] | undefined, () => [
    auditInBatch(c, 200),
  ]);
  auditedInBatch(c, 200);
  return c.json(assetView(row), 200);
};

export const listAllAssets: Handler<"listAllAssets"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const ids = await c.var.access.readableProjectIds(tenant);
  const query = c.req.valid("query");
  const page = await listed(
    c,
    query,
    (limit, cursor) => assets.listAssets(c.var.db, tenant, ids, limit, afterKey(cursor, "number")),
    (r) => [r.id],
  );
  return c.json(await assetViews(c.var.db, tenant, page, extras(query), true), 200);
};

export const listProjectAssets: Handler<"listProjectAssets"> = async (c) => {
  const { tenant, projectId } = c.req.valid("param");
  const query = c.req.valid("query");
  // The page is read with the project and the caller's membership, the route's access check
  // (inProjectInBatch): one query, the page sent only once the check has passed on it.
  const access = c.get("access");
  const page = await listed(
    c,
    query,
    async (limit, cursor) => {
      const read = assets.listProjectAssetsWithProject(
        c.get("db"),
        tenant,
        projectId,
        access.memberEmail(),
        limit,
        afterKey(cursor, "number"),
      );
      await settleCheck(c, access.projectFrom(tenant, "PROJECT_VIEWER", read));
      return (await read)!.assets;
    },
    (r) => [r.id],
  );
  return c.json(await assetViews(c.get("db"), tenant, page, extras(query), true), 200);
};

export const getAsset: Handler<"getAsset"> = async (c) => {
  const { tenant, projectId, assetId } = c.req.valid("param");
  // The asset with its project, the caller's role and its connection's db_type: one query.
  const { asset } = await c.get("access").assetWithConnectionType(tenant, assetId, "PROJECT_VIEWER");
  if (asset.projectId !== projectId) throw new NotFoundError("Asset");
  const [view] = await assetViews(c.get("db"), tenant, [asset], extras(c.req.valid("query")), true);
  return c.json(view!, 200);
};

/**
 * One round trip: the access check, the delete (conditioned on the same access) and its audit row
 * are one batch (Access.projectInBatch; the route's grant is checked here, not before).
 */
export const deleteAsset: Handler<"deleteAsset"> = async (c) => {
  const { tenant, projectId, assetId } = c.req.valid("param");
  const check = c.var.access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  const remove = assets.deleteAssetStatement(c.var.db, { tenantId: tenant, id: projectId }, assetId, check.allowed);
  const [access, gone] = await c.var.db.batch([check.read, remove, auditInBatch(c, 200)]);
  settleInBatch(c, () => check.settle(access));
  if (gone.length === 0) throw new NotFoundError("Asset");
  auditedInBatch(c, 200);
  // Its history (alerts, metric points, DQ scores) lives in its object, which forgets it.
  c.executionCtx.waitUntil(assetMonitor(c.env, tenant, assetId).forget());
  return c.json({ message: `Asset ${assetId} deleted` }, 200);
};

/**
 * One round trip: the access check, the reads of the asset and of the ids named, the edges'
 * deletes and inserts (conditioned on the same access and on every id being an asset the caller
 * can read), the audit row and the read of the lineage written are one batch.
 */
export const setAssetLineage: Handler<"setAssetLineage"> = async (c) => {
  const { tenant, projectId, assetId } = c.req.valid("param");
  const input = c.req.valid("json");
  const { access, db } = c.var;
  const check = access.projectInBatch(tenant, projectId, "PROJECT_EDITOR");
  const set = assets.setLineageStatements(
    db,
    { tenantId: tenant, id: projectId },
    assetId,
    input,
    (project) => access.readsProject(tenant, project),
    check.allowed,
  );
  const [checked, asset, known, ...rest] = await db.batch([
    check.read,
    set.asset,
    set.known,
    ...set.writes,
    auditInBatch(c, 200, set.when),
    set.lineage,
  ]);
  settleInBatch(c, () => check.settle(checked));
  const row = assets.lineageSet(assetId, input, asset, known);
  auditedInBatch(c, 200);
  const lineage = assets.lineageOf([assetId], rest.at(-1) as { parent: number; child: number }[]);
  return c.json(assetView(row, { ...NO_EXTRAS, lineage: true }, lineage.get(assetId)), 200);
};

/**
 * One round trip: both projects' access checks, the reads of the assets and of the target
 * connection, the moves (conditioned on both accesses and on every check of the move) and the audit
 * row are one batch (Access.projectInBatch; the route's grant, on the target, is settled first).
 */
export const moveAssets: Handler<"moveAssets"> = async (c) => {
  const { tenant, targetProjectId } = c.req.valid("param");
  const body = c.req.valid("json");
  const { db } = c.var;
  const check = moveInBatch(c, tenant, targetProjectId, body.source_project_id);
  const from = { tenantId: tenant, id: body.source_project_id };
  const move = assets.moveAssetsStatements(
    db,
    from,
    { tenantId: tenant, id: targetProjectId },
    body.source_asset_ids,
    body.target_connection_id,
    check.allowed,
  );
  const [targetRows, sourceRows, rows, connection, , , updated] = await db.batch([
    ...check.reads,
    move.read,
    move.connection,
    ...move.writes,
    auditInBatch(c, 200),
  ]);
  check.settle(targetRows, sourceRows);
  const moved = assets.assetsMoved(from, move.unique, rows, connection, body.target_connection_id, updated);
  auditedInBatch(c, 200);
  return c.json(
    { message: `${moved.length} asset(s) moved to project ${targetProjectId}`, assets: moved.map(String) },
    200,
  );
};

/**
 * Two round trips, the floor: the access check, the asset, its connection and the tenant's schema
 * source are read in one batch; the source is called (only once the check has passed); the
 * attributes and the audit row are then written in one batch.
 */
export const loadSchema: Handler<"loadSchema"> = async (c) => {
  const { tenant, assetId } = c.req.valid("param");
  const { db } = c.var;
  const check = c.var.access.assetInBatch(tenant, assetId, "PROJECT_EDITOR");
  const asset = assets.assetByIdQueries(db, tenant, assetId);
  const inputs = schemaInputQueries(db, tenant, asset);
  const [access, rows, connection, source] = await db.batch([check.read, asset.row, inputs.connection, inputs.source]);
  settleInBatch(c, () => check.settle(access));
  const row = assets.assetFound(rows);
  const loaded = await loadAssetSchema(c.env, db, row, schemaInputs(connection, source), [auditInBatch(c, 200)]);
  auditedInBatch(c, 200);
  return c.json(loaded, 200);
};
