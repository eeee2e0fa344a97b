import { and, asc, eq, exists, gt, isNotNull, isNull, notExists, notInArray, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { alias, type SQLiteInsertValue } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import {
  dbTypesThatCannotHold,
  identifier,
  LIGHT_SCAN_TYPES,
  namesTheDatabaseCannotHold,
  sourceGroupOf,
} from "../connections";
import type { Db } from "../db";
import { insertJsonRows, insertWhere } from "../db/json-insert";
import type { ConnectionRow, ScanJobRow, SourceGroupRow } from "../db/schema";
import { assets, connections, type SOURCE_GROUP_TYPES, scanJobs, sourceGroups } from "../db/schema";
import { followMove } from "../incidents/monitor-store";
import { newScanJobRow } from "../jobs/scan-jobs";
import { nextRunIso } from "../lib/cron";
import { type FieldProblem, InvalidInputError, NotFoundError } from "../lib/errors";
import { inJsonList } from "../lib/sql";
import { nowIso } from "../lib/time";
import {
  connectionChecked,
  moveConditions,
  moveConnectionRead,
  movedConnectionColumns,
  moving,
  projectScoped,
  visibleFrom,
} from "./assets";
export type SourceGroupType = (typeof SOURCE_GROUP_TYPES)[number];
type ProjectRef = { tenantId: string; id: number };

export const GroupOptions = z.strictObject({ only_light_scan: z.boolean().optional() });
export type GroupOptions = z.infer<typeof GroupOptions>;

/** One asset of a group, in create and add requests. */
export const GroupAssetEntry = z.strictObject({
  name: z.string().trim().min(1).max(200),
  table_or_file_name: identifier,
  description: z.string().max(2000).optional(),
});
export type GroupAssetEntry = z.infer<typeof GroupAssetEntry>;

/** The schedule columns of a group: cron in UTC; null clears it. */
function scheduleColumns(cron: string | null) {
  return { scheduledUpload: cron, nextRunAt: cron === null ? null : nextRunIso(cron, "UTC", new Date()) };
}

/** Asset options derived from the group's: only_light_scan as the asset's 'true'/'false' string. */
function assetOptions(options: GroupOptions): Record<string, unknown> {
  return options.only_light_scan === undefined ? {} : { only_light_scan: String(options.only_light_scan) };
}

interface GroupShape {
  type: SourceGroupType;
  payload: Record<string, unknown>;
  options: GroupOptions;
}

/** Checks the payload for the type and the type-dependent options; returns the clean payload. */
function checkShape(shape: GroupShape, payloadSent: boolean, errors: FieldProblem[]): Record<string, unknown> {
  // Each type of the enum (SOURCE_GROUP_TYPES) has its group in its module (test/connections/registry.unit.test.ts).
  const group = sourceGroupOf(shape.type);
  if (!group) {
    errors.push({ field: "type", message: `${shape.type} connections have no source groups` });
    return {};
  }
  const parsed = group.payload.safeParse(shape.payload);
  if (!parsed.success) {
    const note = payloadSent ? "" : ` (the stored payload does not fit type ${shape.type}; send a payload for it)`;
    for (const issue of parsed.error.issues) {
      errors.push({ field: ["payload", ...issue.path.map(String)].join("."), message: issue.message + note });
    }
  }
  if (shape.options.only_light_scan && !LIGHT_SCAN_TYPES.includes(shape.type)) {
    errors.push({
      field: "options.only_light_scan",
      message: `light scans are supported for ${LIGHT_SCAN_TYPES.join(", ")} only, not ${shape.type}`,
    });
  }
  return parsed.success ? parsed.data : shape.payload;
}

function invalid(errors: FieldProblem[]): never {
  throw new InvalidInputError(errors);
}

/**
 * The names of a group's payload and of its entries' tables that the database behind `dbType`
 * cannot hold (connections/names.ts, namesTheDatabaseCannotHold), at their fields in the request.
 */
function groupNameProblems(
  dbType: string | null,
  payload: Record<string, unknown>,
  entries: GroupAssetEntry[],
  entriesField: string,
): FieldProblem[] {
  return [
    ...namesTheDatabaseCannotHold(dbType, payload, {}),
    ...entries.flatMap((entry, i) =>
      namesTheDatabaseCannotHold(dbType, { table: entry.table_or_file_name }, {}, () => {
        return `${entriesField}.${i}.table_or_file_name`;
      }),
    ),
  ];
}

/** One page of a tenant's groups in id order, restricted to projects `projectIds` when given (`limit + 1` rows). */
export function listSourceGroups(
  db: Db,
  tenantId: string,
  projectIds: readonly number[] | undefined,
  limit: number,
  after?: number,
) {
  if (projectIds && projectIds.length === 0) return Promise.resolve([]);
  return db.query.sourceGroups.findMany({
    where: and(
      eq(sourceGroups.tenantId, tenantId),
      projectIds ? inJsonList(sourceGroups.projectId, projectIds) : undefined,
      after === undefined ? undefined : gt(sourceGroups.id, after),
    ),
    orderBy: asc(sourceGroups.id),
    limit: limit + 1,
  });
}

/**
 * The reads of a project's source group's asset names (in asset id order), for the caller's batch:
 * `group` (none: not the project's, see groupAssetNamesRead) and `names`, which reads nothing of a
 * group of another project. `found` is SQL that holds where the group is the project's.
 */
export function groupAssetNamesStatements(db: Db, project: ProjectRef, groupId: number) {
  const group = and(
    eq(sourceGroups.tenantId, project.tenantId),
    eq(sourceGroups.projectId, project.id),
    eq(sourceGroups.id, groupId),
  );
  const found = exists(db.select({ one: sql`1` }).from(sourceGroups).where(group));
  return {
    found,
    group: db.select({ id: sourceGroups.id }).from(sourceGroups).where(group).limit(1),
    names: db
      .select({ name: assets.name })
      .from(assets)
      .where(and(eq(assets.tenantId, project.tenantId), eq(assets.sourceGroupId, groupId), found))
      .orderBy(asc(assets.id)),
  };
}

/** The names groupAssetNamesStatements read; no group is a 404. */
export function groupAssetNamesRead(group: readonly { id: number }[], names: readonly { name: string }[]): string[] {
  if (!group[0]) throw new NotFoundError("Source group");
  return names.map((r) => r.name);
}

/** What a group passes on to the assets of its entries. */
type GroupOfEntry = Pick<
  SourceGroupRow,
  "tenantId" | "projectId" | "type" | "payload" | "options" | "connectionId" | "dbType"
>;

/** The asset row of a group entry: the group's type, connection and options, its payload plus the table. */
function entryAsset(
  group: GroupOfEntry,
  entry: GroupAssetEntry,
  sourceGroupId: number | SQL,
  createdBy: string,
  now: string,
): SQLiteInsertValue<typeof assets> {
  return {
    tenantId: group.tenantId,
    projectId: group.projectId,
    connectionId: group.connectionId,
    sourceGroupId,
    name: entry.name,
    description: entry.description ?? "",
    type: group.type,
    options: assetOptions(group.options as GroupOptions),
    payload: { ...group.payload, table: entry.table_or_file_name },
    dbType: group.dbType,
    createdBy,
    createdAt: now,
    updatedAt: now,
  };
}

/** The insert of a group entry's asset, returning its id (read back from the batch's results). */
function insertGroupAsset(
  db: Db,
  group: GroupOfEntry,
  entry: GroupAssetEntry,
  sourceGroupId: number | SQL,
  createdBy: string,
  now: string,
) {
  return db
    .insert(assets)
    .values(entryAsset(group, entry, sourceGroupId, createdBy, now))
    .returning({ id: assets.id });
}

export interface CreateSourceGroupInput {
  name: string;
  description: string;
  type: SourceGroupType;
  connection_id: number;
  assets: GroupAssetEntry[];
  payload: Record<string, unknown>;
  options: GroupOptions;
  scheduled_upload?: string | null;
}

/**
 * The statements that create a group and one asset per entry, with one ANALYZE scan job per asset,
 * for the caller's batch: a read of the connection, the group's insert, its audit row (`audit`,
 * recorded if the group was inserted), the assets' and jobs' inserts, and a read of the new assets'
 * ids. Every write happens only where `allowed` holds (the caller's access, checked in the same
 * batch) and where the checks of the connection hold in SQL (visible from the project, of the
 * group's type, of a database that can hold the names); input that is wrong whatever is stored
 * writes nothing. Read the answer with sourceGroupCreated: nothing inserted is the 400 listing
 * every problem, as before. The jobs are sent to the scan queue once the batch has run.
 */
export function createSourceGroupStatements(
  db: Db,
  project: ProjectRef,
  input: CreateSourceGroupInput,
  createdBy: string,
  allowed: SQL | undefined,
  audit: (when: SQL | undefined) => BatchItem<"sqlite">,
) {
  const errors: FieldProblem[] = [];
  const payload = checkShape(input, true, errors);
  const refused = [
    ...new Set([
      ...dbTypesThatCannotHold(payload, {}),
      ...input.assets.flatMap((entry) => dbTypesThatCannotHold({ table: entry.table_or_file_name }, {})),
    ]),
  ];
  const usable = and(
    visibleFrom(project, input.connection_id),
    eq(connections.type, input.type),
    refused.length > 0 ? or(isNull(connections.dbType), notInArray(connections.dbType, refused)) : undefined,
  );
  const when = and(
    errors.length > 0 ? sql`0` : undefined,
    exists(db.select({ one: sql`1` }).from(connections).where(usable)),
    allowed,
  );
  const dbType = sql`(select ${connections.dbType} from ${connections} where ${visibleFrom(project, input.connection_id)})`;
  const now = nowIso();
  const group = {
    tenantId: project.tenantId,
    projectId: project.id,
    connectionId: input.connection_id,
    name: input.name,
    description: input.description,
    type: input.type,
    payload,
    options: input.options,
    ...scheduleColumns(input.scheduled_upload ?? null),
    createdBy,
    createdAt: now,
    updatedAt: now,
  };
  // The group's id is not known before the batch runs: each statement after its insert reads it
  // as the tenant's newest group, which is this one because a D1 batch runs alone, as one transaction.
  const groupId = sql`(select max(${sourceGroups.id}) from ${sourceGroups} where ${sourceGroups.tenantId} = ${project.tenantId})`;
  const entryRows = input.assets.map((entry) => ({
    ...entryAsset({ ...group, dbType: null }, entry, 0, createdBy, now),
  }));
  const ofGroup = and(eq(assets.tenantId, project.tenantId), sql`${assets.sourceGroupId} = ${groupId}`);
  const jobs = entryRows.map((_, i) => ({
    ...newScanJobRow(
      { tenantId: project.tenantId, assetId: 0, kind: "ANALYZE", trigger: "source_group", request: {} },
      now,
    ),
    at: i,
  }));
  return {
    errors,
    payload,
    jobs,
    connection: db.select().from(connections).where(visibleFrom(project, input.connection_id)).limit(1),
    insert: insertWhere(db, sourceGroups, { ...group, dbType }, when).returning(),
    audit: audit(when),
    writes: [
      ...insertJsonRows(db, assets, entryRows, {
        derived: { sourceGroupId: () => groupId, dbType: () => dbType },
        when,
      }),
      ...insertJsonRows(db, scanJobs, jobs, {
        derived: {
          // The job's asset: the entry's, the group's assets being in entry order.
          assetId: (field) =>
            sql`(select id from (select ${assets.id} as id, row_number() over (order by ${assets.id}) - 1 as at from ${assets} where ${ofGroup}) where at = ${field("at")})`,
          // The group's id in the request the job carries, as before.
          request: () => sql`json_object('source_group_id', ${groupId})`,
        },
        when,
      }),
    ],
    created: db.select({ id: assets.id }).from(assets).where(and(ofGroup, when)).orderBy(asc(assets.id)),
  };
}

/**
 * The group createSourceGroupStatements inserted, with its assets' ids and the jobs (their asset
 * ids set) to send to the scan queue, once its batch has shown the caller's access; none inserted
 * is the 400 of every problem, the connection's told from the batch's read of it.
 */
export function sourceGroupCreated(
  input: CreateSourceGroupInput,
  create: { errors: FieldProblem[]; payload: Record<string, unknown>; jobs: ScanJobRow[] },
  connectionRows: readonly ConnectionRow[],
  inserted: readonly SourceGroupRow[],
  created: readonly { id: number }[],
): { group: SourceGroupRow; jobs: ScanJobRow[] } {
  const group = inserted[0];
  if (group) {
    const jobs = create.jobs.map((j, i) => ({
      ...j,
      assetId: created[i]!.id,
      request: { source_group_id: group.id },
    }));
    return { group, jobs };
  }
  const errors = [...create.errors];
  const sent = { type: true, connection: true };
  const connection = connectionChecked(connectionRows[0], input.type, sent, errors);
  if (connection) errors.push(...groupNameProblems(connection.dbType, create.payload, input.assets, "assets"));
  invalid(errors);
}

export interface UpdateSourceGroupInput {
  name?: string;
  description?: string;
  type?: SourceGroupType;
  connection_id?: number;
  payload?: Record<string, unknown>;
  options?: GroupOptions;
  scheduled_upload?: string | null;
  assets_to_add?: GroupAssetEntry[];
  assets_to_delete?: number[];
}

/** What a checked update writes: the resulting shape, its clean payload, a new connection, the assets to delete. */
interface CheckedUpdate {
  shape: GroupShape;
  payload: Record<string, unknown>;
  connection: ConnectionRow | undefined;
  toDelete: number[];
}

/** Whether the update changes what every asset of the group inherits (type, payload, options, connection). */
function changesAssetConfig(changes: UpdateSourceGroupInput): boolean {
  return (
    changes.type !== undefined ||
    changes.payload !== undefined ||
    changes.options !== undefined ||
    changes.connection_id !== undefined
  );
}

/**
 * What an update of a project's group is checked against, for the batch of the caller's access
 * check: the group, the connection it would have (the one sent, else its own) when the type or
 * the connection changes, visible from the project, and the assets to delete that are the group's.
 * Answer with sourceGroupFound and updateSourceGroup.
 */
export function sourceGroupToUpdateQueries(
  db: Db,
  project: ProjectRef,
  groupId: number,
  changes: UpdateSourceGroupInput,
) {
  const ofProject = and(
    eq(sourceGroups.tenantId, project.tenantId),
    eq(sourceGroups.projectId, project.id),
    eq(sourceGroups.id, groupId),
  );
  const own = db.select({ id: sourceGroups.connectionId }).from(sourceGroups).where(ofProject);
  const connectionChanges = changes.type !== undefined || changes.connection_id !== undefined;
  const toDelete = [...new Set(changes.assets_to_delete ?? [])];
  return {
    group: db.select().from(sourceGroups).where(ofProject).limit(1),
    connection: db
      .select()
      .from(connections)
      .where(
        connectionChanges
          ? and(
              eq(connections.tenantId, project.tenantId),
              changes.connection_id === undefined
                ? sql`${connections.id} = (${own})`
                : eq(connections.id, changes.connection_id),
              or(isNull(connections.projectId), eq(connections.projectId, project.id)),
            )
          : sql`0`,
      )
      .limit(1),
    members: db
      .select({ id: assets.id })
      .from(assets)
      .where(
        toDelete.length > 0
          ? and(
              eq(assets.tenantId, project.tenantId),
              sql`${assets.sourceGroupId} = (select ${sourceGroups.id} from ${sourceGroups} where ${ofProject})`,
              inJsonList(assets.id, toDelete),
            )
          : sql`0`,
      ),
  };
}

/** The group sourceGroupToUpdateQueries read; 404 when none. */
export function sourceGroupFound(rows: readonly SourceGroupRow[]): SourceGroupRow {
  if (!rows[0]) throw new NotFoundError("Source group");
  return rows[0];
}

/**
 * Checks an update against the group and what sourceGroupToUpdateQueries read before anything is
 * written; 400 lists every problem: shape, connection, assets to delete.
 */
function checkUpdate(
  group: SourceGroupRow,
  changes: UpdateSourceGroupInput,
  connectionRows: readonly ConnectionRow[],
  memberRows: readonly { id: number }[],
): CheckedUpdate {
  const errors: FieldProblem[] = [];
  const shape: GroupShape = {
    type: changes.type ?? group.type,
    payload: changes.payload ?? group.payload,
    options: changes.options ?? (group.options as GroupOptions),
  };
  const payload = checkShape(shape, changes.payload !== undefined, errors);
  // The connection is checked only when the type or the connection changes; otherwise the group keeps its own.
  const connection =
    changes.type === undefined && changes.connection_id === undefined
      ? undefined
      : connectionChecked(
          connectionRows[0],
          shape.type,
          {
            type: changes.type !== undefined,
            connection: changes.connection_id !== undefined,
          },
          errors,
        );
  const dbType = connection ? connection.dbType : group.dbType;
  errors.push(...groupNameProblems(dbType, payload, changes.assets_to_add ?? [], "assets_to_add"));
  const toDelete = [...new Set(changes.assets_to_delete ?? [])];
  // Each requested id that is not an asset of the group is a problem at its index in the request.
  const found = new Set(memberRows.map((m) => m.id));
  changes.assets_to_delete?.forEach((id, i) => {
    if (!found.has(id)) errors.push({ field: `assets_to_delete.${i}`, message: "not an asset of this group" });
  });
  if (errors.length > 0) invalid(errors);
  return { shape, payload, connection, toDelete };
}

/** The group row after the update: the fields sent, the checked shape and, if it changed, the connection. */
function updatedGroup(
  group: SourceGroupRow,
  changes: UpdateSourceGroupInput,
  { shape, payload, connection }: CheckedUpdate,
  now: string,
): SourceGroupRow {
  return {
    ...group,
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.description !== undefined ? { description: changes.description } : {}),
    ...(changes.scheduled_upload !== undefined ? scheduleColumns(changes.scheduled_upload) : {}),
    type: shape.type,
    payload,
    options: shape.options,
    connectionId: connection?.id ?? group.connectionId,
    dbType: connection ? connection.dbType : group.dbType,
    updatedAt: now,
  };
}

/** Carries the group's type, connection, payload and light-scan option to every asset of the group in SQL. */
function inheritGroupConfig(db: Db, next: SourceGroupRow, now: string) {
  const lightScan = (next.options as GroupOptions).only_light_scan;
  return db
    .update(assets)
    .set({
      type: next.type,
      connectionId: next.connectionId,
      dbType: next.dbType,
      // The new group payload plus each asset's own table.
      payload: sql`json_patch(${JSON.stringify(next.payload)}, json_object('table', json_extract(${assets.payload}, '$.table')))`,
      // Other options of an asset (set through the assets API) are kept.
      options:
        lightScan === undefined
          ? sql`json_remove(${assets.options}, '$.only_light_scan')`
          : sql`json_set(${assets.options}, '$.only_light_scan', ${String(lightScan)})`,
      updatedAt: now,
    })
    .where(and(eq(assets.tenantId, next.tenantId), eq(assets.sourceGroupId, next.id)));
}

/** The writes of an update other than the asset inserts, in batch order: group row, deletions, inherited config. */
function updateStatements(
  db: Db,
  next: SourceGroupRow,
  toDelete: number[],
  configChanged: boolean,
  now: string,
): BatchItem<"sqlite">[] {
  const inGroup = and(eq(assets.tenantId, next.tenantId), eq(assets.sourceGroupId, next.id));
  const statements: BatchItem<"sqlite">[] = [
    db
      .update(sourceGroups)
      .set(next)
      .where(and(eq(sourceGroups.tenantId, next.tenantId), eq(sourceGroups.id, next.id))),
  ];
  if (toDelete.length > 0) statements.push(db.delete(assets).where(and(inGroup, inJsonList(assets.id, toDelete))));
  if (configChanged) statements.push(inheritGroupConfig(db, next, now));
  return statements;
}

/**
 * Updates the fields sent, checked against the group and what sourceGroupToUpdateQueries read; a
 * change of type, payload, options or connection is carried to every asset of the group (each
 * keeps its table). Deletes and adds assets, all in one batch with `after` (the caller's
 * statements that belong with it, e.g. its audit row, right after the group's UPDATE); then an
 * ANALYZE job per added asset (queueGroupAnalyses). Returns the added assets' ids.
 */
export async function updateSourceGroup(
  db: Db,
  group: SourceGroupRow,
  changes: UpdateSourceGroupInput,
  createdBy: string,
  connectionRows: readonly ConnectionRow[],
  memberRows: readonly { id: number }[],
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<number[]> {
  const checked = checkUpdate(group, changes, connectionRows, memberRows);
  const now = nowIso();
  const next = updatedGroup(group, changes, checked, now);
  const [update, ...others] = updateStatements(db, next, checked.toDelete, changesAssetConfig(changes), now);
  const statements = [update!, ...after, ...others];
  // The inserts come last so that their results, read back by position, are the new asset ids.
  const adds = (changes.assets_to_add ?? []).map((entry) =>
    insertGroupAsset(db, next, entry, group.id, createdBy, now),
  );
  const results = await db.batch([statements[0]!, ...statements.slice(1), ...adds]);
  return (results.slice(statements.length) as { id: number }[][]).map((r) => r[0]!.id);
}

/**
 * The statements that delete a project's source group with its assets, for the caller's batch,
 * where `allowed` holds (the caller's access, checked in the same batch). The group goes last: the
 * id it returns is the answer (none: the group is not the project's, see sourceGroupDeleted), and
 * the change a statement after it sees. The assets' delete returns their ids (their objects forget
 * their history).
 */
export function deleteSourceGroupStatements(db: Db, project: ProjectRef, groupId: number, allowed: SQL | undefined) {
  const group = and(
    eq(sourceGroups.tenantId, project.tenantId),
    eq(sourceGroups.projectId, project.id),
    eq(sourceGroups.id, groupId),
    allowed,
  );
  const ofGroup = db.select({ one: sql`1` }).from(sourceGroups).where(group);
  return [
    db
      .delete(assets)
      .where(and(eq(assets.tenantId, project.tenantId), eq(assets.sourceGroupId, groupId), exists(ofGroup)))
      .returning({ id: assets.id }),
    db.delete(sourceGroups).where(group).returning({ id: sourceGroups.id }),
  ] as const;
}

/** The answer of deleteSourceGroupStatements' batch: no group deleted is a 404. */
export function sourceGroupDeleted(gone: readonly { id: number }[]): void {
  if (gone.length === 0) throw new NotFoundError("Source group");
}

/** The groups of a move, seen from a condition of its statements. */
const movingGroup = alias(sourceGroups, "moving_group");
/** The connection of a group of a move, seen from a condition. */
const movingGroupConnection = alias(connections, "moving_group_connection");

/**
 * The statements that move groups with all their assets between projects, all or none, by the
 * rules of asset moves, for the caller's batch after its access checks: reads of the groups named,
 * of their assets and of the target connection, then the writes, which change anything only where
 * `allowed` holds (the caller's access to both projects) and where every check holds in SQL: every
 * id is a group of the source project; without a target connection every connection used (by the
 * groups and their assets) is GLOBAL; a target connection is visible from the target project and
 * of the type of every group and asset moved. The groups' update goes last (the audit row after it
 * sees its change); read the answer with sourceGroupsMoved.
 */
export function moveSourceGroupsStatements(
  db: Db,
  source: ProjectRef,
  target: ProjectRef,
  ids: number[],
  targetConnectionId: number | undefined,
  allowed: SQL | undefined,
) {
  const unique = [...new Set(ids)];
  const named = (t: typeof sourceGroups | typeof movingGroup) =>
    and(eq(t.tenantId, source.tenantId), eq(t.projectId, source.id), inJsonList(t.id, unique));
  const members = (t: typeof assets | typeof moving) =>
    and(eq(t.tenantId, source.tenantId), inJsonList(t.sourceGroupId, unique));
  const groupsOf = (where: SQL | undefined) =>
    db
      .select({ one: sql`1` })
      .from(movingGroup)
      .innerJoin(
        movingGroupConnection,
        and(
          eq(movingGroupConnection.tenantId, movingGroup.tenantId),
          eq(movingGroupConnection.id, movingGroup.connectionId),
        ),
      )
      .where(and(named(movingGroup), where));
  const groupsFit =
    targetConnectionId === undefined
      ? notExists(groupsOf(isNotNull(movingGroupConnection.projectId)))
      : notExists(
          groupsOf(
            sql`${movingGroup.type} <> ${db
              .select({ type: connections.type })
              .from(connections)
              .where(visibleFrom(target, targetConnectionId))}`,
          ),
        );
  const when = and(
    allowed,
    sql`${db.select({ n: sql`count(*)` }).from(movingGroup).where(named(movingGroup))} = ${unique.length}`,
    groupsFit,
    moveConditions(db, members(moving), target, targetConnectionId),
  );
  const now = nowIso();
  const newConnection = movedConnectionColumns(source.tenantId, targetConnectionId);
  return {
    unique,
    groups: db
      .select({
        id: sourceGroups.id,
        type: sourceGroups.type,
        connectionId: sourceGroups.connectionId,
        scoped: projectScoped(sourceGroups),
      })
      .from(sourceGroups)
      .where(named(sourceGroups)),
    members: db
      .select({
        id: assets.id,
        type: assets.type,
        groupId: assets.sourceGroupId,
        scoped: projectScoped(assets),
      })
      .from(assets)
      .where(members(assets))
      .orderBy(asc(assets.id)),
    connection: moveConnectionRead(db, target, targetConnectionId),
    writes: [
      ...followMove(
        db,
        source.tenantId,
        sql`${db.select({ id: moving.id }).from(moving).where(members(moving))}`,
        { projectId: target.id, ...(targetConnectionId !== undefined ? { connectionId: targetConnectionId } : {}) },
        when,
      ),
      db
        .update(assets)
        .set({ projectId: target.id, ...newConnection, updatedAt: now })
        .where(and(members(assets), when)),
    ],
    update: db
      .update(sourceGroups)
      .set({ projectId: target.id, ...newConnection, updatedAt: now })
      .where(and(named(sourceGroups), when))
      .returning({ id: sourceGroups.id }),
  };
}

/**
 * The answer of moveSourceGroupsStatements' batch, once it has shown the caller's access: the
 * groups and assets moved, or why none moved, told from its reads as before (a 404 naming the ids
 * that are not groups of the source project, a 400 listing every problem of the connections).
 */
export function sourceGroupsMoved(
  source: ProjectRef,
  unique: number[],
  groups: readonly { id: number; type: string; scoped: number }[],
  members: readonly { id: number; type: string; groupId: number | null; scoped: number }[],
  connectionRows: readonly ConnectionRow[],
  targetConnectionId: number | undefined,
  updated: readonly { id: number }[],
): { groups: number[]; assets: number[] } {
  if (updated.length > 0) return { groups: unique, assets: members.map((a) => a.id) };
  const found = new Set(groups.map((g) => g.id));
  const missing = unique.filter((id) => !found.has(id));
  if (missing.length > 0) throw new NotFoundError(`Source group ${missing.join(", ")} of project ${source.id}`);
  const errors: FieldProblem[] = [];
  const field = "target_connection_id";
  if (targetConnectionId === undefined) {
    for (const g of groups.filter((g) => g.scoped)) {
      errors.push({ field, message: `required: source group ${g.id} uses a PROJECT connection` });
    }
    for (const a of members.filter((a) => a.scoped)) {
      errors.push({ field, message: `required: asset ${a.id} of source group ${a.groupId} uses a PROJECT connection` });
    }
  } else {
    const connection = connectionRows[0];
    if (!connection) {
      errors.push({ field, message: "no such connection in the target project" });
    } else {
      const type = connection.type;
      for (const g of groups.filter((g) => g.type !== type)) {
        errors.push({ field, message: `is a ${type} connection; source group ${g.id} is ${g.type}` });
      }
      for (const a of members.filter((a) => a.type !== type)) {
        errors.push({ field, message: `is a ${type} connection; asset ${a.id} is ${a.type}` });
      }
    }
  }
  if (errors.length > 0) invalid(errors);
  // The reads saw every check pass on the state the updates saw: the groups moved.
  throw new Error("source group move: the checks passed but no group was moved");
}
