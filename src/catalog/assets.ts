import { and, asc, eq, exists, gt, isNotNull, isNull, notExists, notInArray, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { alias, type SQLiteColumn, type SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { z } from "zod";
import {
  ASSET_PAYLOADS,
  dbTypesThatCannotHold,
  holdableName,
  LIGHT_SCAN_TYPES,
  namesTheDatabaseCannotHold,
} from "../connections";
import type { Db } from "../db";
import { insertJsonRows, insertWhere, writeWith } from "../db/json-insert";
import { preparedOnce } from "../db/prepared";
import { allRows } from "../db/rows";
import type { AssetRow, ConnectionRow, ProjectRole, ProjectRow } from "../db/schema";
import { assetLineage, assets, type ConnectionType, connections, projectMembers, projects } from "../db/schema";
import { MAX_SEGMENT_VALUES } from "../detection/segments";
import { followMove } from "../incidents/monitor-store";
import { CronError, isTimeZone, nextRunIso } from "../lib/cron";
import { type FieldProblem, InvalidInputError, NotFoundError } from "../lib/errors";
import { inJsonList, inJsonPlaceholder } from "../lib/sql";
import { nowIso } from "../lib/time";

type ProjectRef = { tenantId: string; id: number };

// ---------------------------------------------------------------------------------------------
// What an asset may hold: payload per type, options, schedule.

/** An attribute (column) named by the options. */
const attributeName = z.string().min(1).superRefine(holdableName);

const boolString = z.enum(["true", "false"]);
const filterValues = z.record(attributeName, z.array(z.union([z.string(), z.number(), z.boolean()])).max(1000));

/** Asset options (2.3); all optional, unknown keys refused. */
export const AssetOptions = z.strictObject({
  id_attributes: z.array(attributeName).max(100).optional(),
  /** One character: the field separator of delimited files (e.g. "," or "\t"). */
  separator: z.string().length(1).optional(),
  sample_fraction: z.number().int().min(1).max(100).optional(),
  skip_investigator: boolString.optional(),
  delta_only: boolString.optional(),
  timestamp_attribute: attributeName.optional(),
  limit: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  filter: filterValues.optional(),
  /** Each listed value is profiled and judged apart, and the rest of the attribute's rows as "(other)". */
  segments: filterValues
    .refine((s) => Object.values(s).reduce((n, values) => n + values.length, 0) <= MAX_SEGMENT_VALUES, {
      message: `at most ${MAX_SEGMENT_VALUES} segment values over all attributes (each is profiled and judged apart)`,
    })
    .refine((s) => Object.values(s).every((values) => values.length > 0), {
      message: "each segment attribute lists at least one value",
    })
    .optional(),
  only_light_scan: boolString.optional(),
  resolve_wildcards_to_folders: boolString.optional(),
});
export type AssetOptions = z.infer<typeof AssetOptions>;

/** A five-field cron expression that is due at least once. */
export const CronExpression = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .superRefine((cron, ctx) => {
    try {
      nextRunIso(cron, "UTC", new Date());
    } catch (e) {
      if (!(e instanceof CronError)) throw e;
      ctx.addIssue({ code: "custom", message: `not a valid cron expression: ${e.message}` });
    }
  })
  .transform((cron) => cron.split(/\s+/).join(" "));

/** The schedule of an asset's scans. */
export const AssetSchedule = z.strictObject({
  cron: CronExpression,
  timezone: z
    .string()
    .default("UTC")
    .refine((tz) => isTimeZone(tz), "not an IANA time zone"),
  enabled: z.boolean().default(true),
});
export type AssetSchedule = z.infer<typeof AssetSchedule>;

/** Stored schedule columns for a schedule (null clears it); next_run_at only while enabled. */
export function scheduleColumns(schedule: AssetSchedule | null, now = new Date()) {
  if (schedule === null) {
    return { scheduleCron: null, scheduleTimezone: "UTC", scheduleEnabled: false, nextRunAt: null };
  }
  return {
    scheduleCron: schedule.cron,
    scheduleTimezone: schedule.timezone,
    scheduleEnabled: schedule.enabled,
    nextRunAt: schedule.enabled ? nextRunIso(schedule.cron, schedule.timezone, now) : null,
  };
}

/** An asset's lineage: the ids (as strings) of its direct parents and children. */
export interface Lineage {
  parents: string[];
  children: string[];
}

/** The lineage edges of the assets `ids` (as parent or child), for loadLineage or a batch. */
export function lineageEdges(db: Db, tenantId: string, ids: number[]) {
  return db
    .select({ parent: assetLineage.parentAssetId, child: assetLineage.childAssetId })
    .from(assetLineage)
    .where(
      and(
        eq(assetLineage.tenantId, tenantId),
        or(inJsonList(assetLineage.parentAssetId, ids), inJsonList(assetLineage.childAssetId, ids)),
      ),
    )
    .orderBy(asc(assetLineage.parentAssetId), asc(assetLineage.childAssetId));
}

/** The lineage of each of `ids` from lineageEdges' rows. */
export function lineageOf(ids: number[], edges: readonly { parent: number; child: number }[]): Map<number, Lineage> {
  const out = new Map<number, Lineage>(ids.map((id) => [id, { parents: [], children: [] }]));
  for (const e of edges) {
    out.get(e.child)?.parents.push(String(e.parent));
    out.get(e.parent)?.children.push(String(e.child));
  }
  return out;
}

/** The lineage of each asset, in one query. */
export async function loadLineage(db: Db, tenantId: string, ids: number[]): Promise<Map<number, Lineage>> {
  if (ids.length === 0) return new Map();
  return lineageOf(ids, await lineageEdges(db, tenantId, ids));
}

// ---------------------------------------------------------------------------------------------
// Validation against the connection and the type.

/** The fields of an asset that depend on each other, after a create or update. */
interface AssetShape {
  type: ConnectionType;
  options: Record<string, unknown>;
  payload: Record<string, unknown>;
}

/** Which of the shape's fields the request sent (errors name the field the caller can fix). */
interface Sent {
  type: boolean;
  payload: boolean;
  connection: boolean;
}

/** Parses the payload for the type and checks type-dependent options; returns the clean payload. */
function checkShape(shape: AssetShape, sent: Sent, errors: FieldProblem[]): Record<string, unknown> {
  const parsed = ASSET_PAYLOADS[shape.type].safeParse(shape.payload);
  if (!parsed.success) {
    const note = sent.payload ? "" : ` (the stored payload does not fit type ${shape.type}; send a payload for it)`;
    for (const issue of parsed.error.issues) {
      errors.push({ field: ["payload", ...issue.path.map(String)].join("."), message: issue.message + note });
    }
  }
  if (shape.options.only_light_scan === "true" && !LIGHT_SCAN_TYPES.includes(shape.type)) {
    errors.push({
      field: "options.only_light_scan",
      message: `light scans are supported for ${LIGHT_SCAN_TYPES.join(", ")} only, not ${shape.type}`,
    });
  }
  return parsed.success ? parsed.data : shape.payload;
}

/** An UPLOAD asset is scanned when a batch arrives: a schedule would have nothing to read. */
function checkSchedule(type: ConnectionType, scheduled: boolean, errors: FieldProblem[]) {
  if (type === "UPLOAD" && scheduled) {
    errors.push({
      field: "scheduled_upload",
      message: "an UPLOAD asset is scanned when a batch is uploaded: it has nothing to scan on a schedule",
    });
  }
}

/**
 * The connection of an asset, as read (undefined: none visible from its project): it must be of
 * the asset's type. Errors are pushed on the field the request sent (connection_id, or else type).
 */
export function connectionChecked(
  connection: ConnectionRow | undefined,
  type: string,
  sent: { type: boolean; connection: boolean },
  errors: FieldProblem[],
  field = "connection_id",
): ConnectionRow | undefined {
  if (!connection) {
    errors.push({ field, message: "no such connection in this project" });
    return undefined;
  }
  if (connection.type !== type) {
    errors.push(
      sent.connection || !sent.type
        ? { field, message: `is a ${connection.type} connection; the type is ${type}` }
        : { field: "type", message: `must be ${connection.type}, the type of the connection` },
    );
  }
  return connection;
}

/** SQL: the connection `connectionId` is the tenant's and visible from the project (its own, or GLOBAL). */
export function visibleFrom(project: ProjectRef, connectionId: number): SQL | undefined {
  return and(
    eq(connections.tenantId, project.tenantId),
    eq(connections.id, connectionId),
    or(isNull(connections.projectId), eq(connections.projectId, project.id)),
  );
}

function invalid(errors: FieldProblem[]): never {
  throw new InvalidInputError(errors);
}

// ---------------------------------------------------------------------------------------------
// Reads.

/** An asset of a project; 404 when absent, of another project or of another tenant. */
export async function getAsset(db: Db, project: ProjectRef, assetId: number): Promise<AssetRow> {
  const row = await db.query.assets.findFirst({
    where: and(eq(assets.tenantId, project.tenantId), eq(assets.projectId, project.id), eq(assets.id, assetId)),
  });
  if (!row) throw new NotFoundError("Asset");
  return row;
}

/**
 * An asset of the tenant addressed by id alone, as a query for a batch (e.g. with
 * Access.assetInBatch), and SQL of its connection's id (for a query of the same batch).
 */
export function assetByIdQueries(db: Db, tenantId: string, assetId: number) {
  const byId = and(eq(assets.tenantId, tenantId), eq(assets.id, assetId));
  return {
    row: db.select().from(assets).where(byId).limit(1),
    connectionId: sql<number>`(select ${assets.connectionId} from ${assets} where ${byId})`,
  };
}

/**
 * One page of a tenant's assets in id order, restricted to projects `projectIds` when given
 * (`limit + 1` rows), each with its connection's db_type read in the same query.
 */
export async function listAssets(
  db: Db,
  tenantId: string,
  projectIds: readonly number[] | undefined,
  limit: number,
  after?: number,
): Promise<AssetRow[]> {
  if (projectIds && projectIds.length === 0) return [];
  const restricted = projectIds !== undefined;
  const paged = after !== undefined;
  const query = preparedOnce(db, `assets.list.${restricted}.${paged}`, () =>
    db
      .select({ asset: assets, connectionId: connections.id, connectionDbType: connections.dbType })
      .from(assets)
      .leftJoin(connections, and(eq(connections.tenantId, assets.tenantId), eq(connections.id, assets.connectionId)))
      .where(
        and(
          eq(assets.tenantId, sql.placeholder("tenant")),
          restricted ? inJsonPlaceholder(assets.projectId, "projects") : undefined,
          paged ? gt(assets.id, sql.placeholder("after")) : undefined,
        ),
      )
      .orderBy(asc(assets.id))
      .limit(sql.placeholder("limit"))
      .prepare(),
  );
  const rows = await allRows(query, {
    tenant: tenantId,
    projects: JSON.stringify(projectIds ?? []),
    after,
    limit: limit + 1,
  });
  return rows.map((r) => (r.connectionId === null ? r.asset : { ...r.asset, dbType: r.connectionDbType }));
}

/**
 * A page of a project's assets as listAssets reads it, with the project and the role of the user
 * `memberEmail` in it ("" for callers who are not users), in one query: the project's row joined
 * with its assets (and with nothing when it has none on the page). Undefined when the project is
 * not the tenant's. For the access check of the read (Access.projectFrom) and the read together.
 */
export async function listProjectAssetsWithProject(
  db: Db,
  tenantId: string,
  projectId: number,
  memberEmail: string,
  limit: number,
  after?: number,
): Promise<{ project: ProjectRow; role: ProjectRole | null; assets: AssetRow[] } | undefined> {
  const paged = after !== undefined;
  const query = preparedOnce(db, `assets.list.withProject.${paged}`, () =>
    db
      .select({
        project: projects,
        role: projectMembers.role,
        asset: assets,
        connectionId: connections.id,
        connectionDbType: connections.dbType,
      })
      .from(projects)
      .leftJoin(
        projectMembers,
        and(eq(projectMembers.projectId, projects.id), eq(projectMembers.userEmail, sql.placeholder("email"))),
      )
      .leftJoin(
        assets,
        and(
          eq(assets.tenantId, projects.tenantId),
          eq(assets.projectId, projects.id),
          paged ? gt(assets.id, sql.placeholder("after")) : undefined,
        ),
      )
      .leftJoin(connections, and(eq(connections.tenantId, assets.tenantId), eq(connections.id, assets.connectionId)))
      .where(and(eq(projects.tenantId, sql.placeholder("tenant")), eq(projects.id, sql.placeholder("id"))))
      .orderBy(asc(assets.id))
      .limit(sql.placeholder("limit"))
      .prepare(),
  );
  const rows = await allRows(query, { tenant: tenantId, id: projectId, email: memberEmail, after, limit: limit + 1 });
  const first = rows[0];
  if (!first) return undefined;
  const page: AssetRow[] = [];
  for (const r of rows) {
    if (r.asset) page.push(r.connectionId === null ? r.asset : { ...r.asset, dbType: r.connectionDbType });
  }
  return { project: first.project, role: first.role, assets: page };
}

// ---------------------------------------------------------------------------------------------
// Writes.

export interface CreateAssetInput {
  name: string;
  description: string;
  type: ConnectionType;
  options: AssetOptions;
  payload: Record<string, unknown>;
  connection_id: number;
  scheduled_upload?: AssetSchedule | null;
}

/**
 * The statements that create an asset, for the caller's batch: a read of its connection, then the
 * insert, which writes only where `allowed` holds (the caller's access, checked in the same batch)
 * and where the checks of the connection hold in SQL on the state it sees (visible from the
 * project, of the asset's type, of a database that can hold the names: checkConnection's and
 * namesTheDatabaseCannotHold's conditions). Input that is wrong whatever is stored inserts
 * nothing. Read the answer with assetCreated: no row inserted is a 400 listing every problem,
 * told from the connection read, as before.
 */
export function createAssetStatements(
  db: Db,
  project: ProjectRef,
  input: CreateAssetInput,
  createdBy: string,
  allowed: SQL | undefined,
) {
  const errors: FieldProblem[] = [];
  const sent = { type: true, payload: true, connection: true };
  const payload = checkShape(input, sent, errors);
  checkSchedule(input.type, Boolean(input.scheduled_upload), errors);
  const connection = db.select().from(connections).where(visibleFrom(project, input.connection_id)).limit(1);
  const refused = dbTypesThatCannotHold(payload, input.options);
  const now = nowIso();
  const insert = insertWhere(
    db,
    assets,
    {
      tenantId: project.tenantId,
      projectId: project.id,
      connectionId: input.connection_id,
      name: input.name,
      description: input.description,
      type: input.type,
      options: input.options,
      payload,
      dbType: sql`${connections.dbType}`,
      ...scheduleColumns(input.scheduled_upload ?? null),
      createdBy,
      createdAt: now,
      updatedAt: now,
    },
    and(
      errors.length > 0 ? sql`0` : undefined,
      visibleFrom(project, input.connection_id),
      eq(connections.type, input.type),
      refused.length > 0 ? or(isNull(connections.dbType), notInArray(connections.dbType, refused)) : undefined,
      allowed,
    ),
    sql`${connections}`,
  ).returning();
  return { connection, insert, errors, payload };
}

/**
 * The asset createAssetStatements inserted, once its batch has shown the caller's access; none
 * inserted is the 400 of every problem, the connection's told from the batch's read of it.
 */
export function assetCreated(
  input: CreateAssetInput,
  create: { errors: FieldProblem[]; payload: Record<string, unknown> },
  connectionRows: readonly ConnectionRow[],
  inserted: readonly AssetRow[],
): AssetRow {
  if (inserted[0]) return inserted[0];
  const errors = [...create.errors];
  const sent = { type: true, connection: true };
  const connection = connectionChecked(connectionRows[0], input.type, sent, errors);
  if (connection) errors.push(...namesTheDatabaseCannotHold(connection.dbType, create.payload, input.options));
  invalid(errors);
}

export type UpdateAssetInput = Partial<CreateAssetInput>;

/**
 * The columns an update of `asset` (as stored) sets: only the fields sent. The result must still
 * hold together: a new type needs a payload valid for it and a connection of that type
 * (`connectionRows`: assetToUpdateQueries'); a new connection must be visible and of the type.
 * Throws the 400 of every problem.
 */
function assetChange(
  asset: AssetRow,
  changes: UpdateAssetInput,
  connectionRows: readonly ConnectionRow[],
): Partial<typeof assets.$inferInsert> {
  const sent = {
    type: changes.type !== undefined,
    payload: changes.payload !== undefined,
    connection: changes.connection_id !== undefined,
  };
  const shape: AssetShape = {
    type: changes.type ?? asset.type,
    options: changes.options ?? asset.options,
    payload: changes.payload ?? asset.payload,
  };
  const errors: FieldProblem[] = [];
  const set: Partial<typeof assets.$inferInsert> = {};
  const scheduled =
    changes.scheduled_upload === undefined ? asset.scheduleCron !== null : changes.scheduled_upload !== null;
  checkSchedule(shape.type, scheduled, errors);
  if (sent.type || sent.payload || changes.options !== undefined) {
    set.payload = checkShape(shape, sent, errors);
    set.type = shape.type;
    set.options = shape.options;
  }
  if (sent.type || sent.connection) {
    const connection = connectionChecked(connectionRows[0], shape.type, sent, errors);
    if (connection) {
      set.connectionId = connection.id;
      set.dbType = connection.dbType;
    }
  }
  if (set.payload !== undefined || set.connectionId !== undefined) {
    const payload = set.payload ?? asset.payload;
    errors.push(...namesTheDatabaseCannotHold(set.dbType ?? asset.dbType, payload, shape.options));
  }
  if (errors.length > 0) invalid(errors);
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.scheduled_upload !== undefined) Object.assign(set, scheduleColumns(changes.scheduled_upload));
  return set;
}

/** The UPDATE of an asset setting `set`, returning the row; nothing where `when` fails. */
function assetUpdate(db: Db, tenantId: string, assetId: number, set: SQLiteUpdateSetSource<typeof assets>, when?: SQL) {
  return db
    .update(assets)
    .set({ ...set, updatedAt: nowIso() })
    .where(and(eq(assets.tenantId, tenantId), eq(assets.id, assetId), when))
    .returning();
}

/**
 * Updates only the fields sent, checked by assetChange against `asset` as stored. The UPDATE is
 * one batch with `after` (e.g. its audit row).
 */
export async function updateAsset(
  db: Db,
  asset: AssetRow,
  changes: UpdateAssetInput,
  connectionRows: readonly ConnectionRow[],
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<AssetRow> {
  const set = assetChange(asset, changes, connectionRows);
  const [row] = await writeWith(db, assetUpdate(db, asset.tenantId, asset.id, set), after);
  if (!row) throw new NotFoundError("Asset");
  return row;
}

/**
 * The statements of an update of the asset `assetId` of a project, for the caller's batch after
 * its access check: assetToUpdateQueries' reads (the asset and its connection as the batch found
 * them), then the UPDATE, which writes only where `allowed` holds (the caller's access) and every
 * check of assetChange holds in SQL on the state it sees: the schedule against the type, the
 * light-scan option, the connection (visible, of the type) and the names its database can hold.
 * That is when the type and the payload are sent with any change of what they shape (options,
 * connection), or none of these is: else the change is checked against what is stored in the
 * Worker (a kept payload parsed for a new type), and `write` is undefined. Where the stored
 * options name attributes, their names are checked against a new connection's database in the
 * Worker too: the UPDATE then writes nothing, and assetUpdated writes after its check. Read the
 * answer with assetUpdated.
 */
export function updateAssetStatements(
  db: Db,
  project: ProjectRef,
  assetId: number,
  changes: UpdateAssetInput,
  allowed: SQL | undefined,
) {
  const read = assetToUpdateQueries(db, project, assetId, changes.connection_id);
  const shapes =
    changes.type !== undefined ||
    changes.payload !== undefined ||
    changes.options !== undefined ||
    changes.connection_id !== undefined;
  const whole = changes.type !== undefined && changes.payload !== undefined;
  if (shapes && !whole) return { ...read, write: undefined };
  const errors: FieldProblem[] = [];
  const set: SQLiteUpdateSetSource<typeof assets> = {};
  const conditions: (SQL | undefined)[] = [allowed, eq(assets.projectId, project.id)];
  // An UPLOAD asset has no schedule: the type sent or stored, the schedule sent or stored.
  const upload =
    changes.type === undefined ? sql`${assets.type} = 'UPLOAD'` : sql`${changes.type === "UPLOAD" ? 1 : 0}`;
  const scheduled =
    changes.scheduled_upload === undefined
      ? sql`${assets.scheduleCron} is not null`
      : sql`${changes.scheduled_upload !== null ? 1 : 0}`;
  conditions.push(sql`not (${upload} and ${scheduled})`);
  if (whole) {
    const type = changes.type!;
    const sent = { type: true, payload: true, connection: changes.connection_id !== undefined };
    // The stored options' light-scan choice is tested in SQL below; the ones sent here.
    const payload = checkShape({ type, options: changes.options ?? {}, payload: changes.payload! }, sent, errors);
    set.payload = payload;
    set.type = type;
    if (changes.options !== undefined) set.options = changes.options;
    else if (!LIGHT_SCAN_TYPES.includes(type)) {
      conditions.push(sql`coalesce(json_extract(${assets.options}, '$.only_light_scan') = 'true', 0) = 0`);
    }
    const connectionId =
      changes.connection_id === undefined ? sql`${assets.connectionId}` : sql`${changes.connection_id}`;
    const connection = and(
      eq(connections.tenantId, project.tenantId),
      sql`${connections.id} = ${connectionId}`,
      or(isNull(connections.projectId), eq(connections.projectId, project.id)),
    );
    conditions.push(
      exists(
        db
          .select({ one: sql`1` })
          .from(connections)
          .where(and(connection, eq(connections.type, type))),
      ),
    );
    if (changes.connection_id !== undefined) set.connectionId = changes.connection_id;
    const connectionDbType = sql`(select ${connections.dbType} from ${connections} where ${connection})`;
    set.dbType = connectionDbType;
    // The names the new database must hold: the payload's and the options' (sent, or stored when
    // they name no attribute: else they are checked in the Worker, see above).
    if (changes.options === undefined) {
      conditions.push(
        sql`coalesce(json_extract(${assets.options}, '$.id_attributes'), json_extract(${assets.options}, '$.timestamp_attribute'), json_extract(${assets.options}, '$.filter'), json_extract(${assets.options}, '$.segments')) is null`,
      );
    }
    const refused = dbTypesThatCannotHold(payload, changes.options ?? {});
    if (refused.length > 0) {
      const dbType = sql`coalesce(${connectionDbType}, ${assets.dbType})`;
      conditions.push(
        sql`(${dbType} is null or ${dbType} not in ${sql.join(
          refused.map((t) => sql`${t}`),
          sql`, `,
        )})`,
      );
    }
  }
  if (errors.length > 0) conditions.push(sql`0`);
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.scheduled_upload !== undefined) Object.assign(set, scheduleColumns(changes.scheduled_upload));
  return { ...read, write: assetUpdate(db, project.tenantId, assetId, set, and(...conditions)) };
}

/**
 * The asset updateAssetStatements' batch updated, once it has shown the caller's access: the
 * change checked by assetChange against the asset and connection the batch read (404, then the
 * 400 of every problem, as before), the row it wrote; where it wrote nothing as the check passed
 * (no `write`, or stored options checked only here), the UPDATE with `after()`, a second round trip.
 */
export async function assetUpdated(
  db: Db,
  changes: UpdateAssetInput,
  assetRows: readonly AssetRow[],
  connectionRows: readonly ConnectionRow[],
  written: readonly AssetRow[] | undefined,
  after: () => readonly BatchItem<"sqlite">[],
): Promise<AssetRow> {
  const asset = assetFound(assetRows);
  const set = assetChange(asset, changes, connectionRows);
  if (written?.[0]) return written[0];
  const [row] = await writeWith(db, assetUpdate(db, asset.tenantId, asset.id, set), after());
  if (!row) throw new NotFoundError("Asset");
  return row;
}

/**
 * What updateAsset checks a change against, for the batch of the caller's access check: the asset
 * of the project, and the connection the asset would have (the one sent, else its own) if it is
 * visible from the project. Answers them with assetFound and the connection rows.
 */
export function assetToUpdateQueries(db: Db, project: ProjectRef, assetId: number, connectionId: number | undefined) {
  const ofProject = and(
    eq(assets.tenantId, project.tenantId),
    eq(assets.projectId, project.id),
    eq(assets.id, assetId),
  );
  const own = db.select({ id: assets.connectionId }).from(assets).where(ofProject);
  const asset = db.select().from(assets).where(ofProject).limit(1);
  const connection = db
    .select()
    .from(connections)
    .where(
      and(
        eq(connections.tenantId, project.tenantId),
        connectionId === undefined ? sql`${connections.id} = (${own})` : eq(connections.id, connectionId),
        or(isNull(connections.projectId), eq(connections.projectId, project.id)),
      ),
    )
    .limit(1);
  return { asset, connection };
}

/** The asset assetToUpdateQueries read; 404 when none. */
export function assetFound(rows: readonly AssetRow[]): AssetRow {
  if (!rows[0]) throw new NotFoundError("Asset");
  return rows[0];
}

/**
 * The statement that deletes an asset of a project, for the caller's batch: it deletes only where
 * `allowed` holds (the caller's access, checked in the same batch) and returns the deleted id. Its
 * lineage edges and DQ score configuration go with it (FK cascade). No id back is a 404: the asset
 * is not the project's, or a concurrent delete removed it first.
 */
export function deleteAssetStatement(db: Db, project: ProjectRef, assetId: number, allowed: SQL | undefined) {
  return db
    .delete(assets)
    .where(
      and(eq(assets.tenantId, project.tenantId), eq(assets.projectId, project.id), eq(assets.id, assetId), allowed),
    )
    .returning({ id: assets.id });
}

/**
 * The problems of a lineage, in the request's order: self-edges, ids that are no asset the caller
 * can read (when `known` is given: the ids that are), an asset both parent and child.
 */
function lineageProblems(
  assetId: number,
  input: { parents?: number[]; children?: number[] },
  known?: ReadonlySet<number>,
): FieldProblem[] {
  const errors: FieldProblem[] = [];
  const check = (side: "parents" | "children", other: number[] | undefined) => {
    input[side]?.forEach((id, i) => {
      const field = `${side}.${i}`;
      if (id === assetId) errors.push({ field, message: "an asset cannot be linked to itself" });
      else if (known && !known.has(id)) errors.push({ field, message: "no such asset" });
      else if (side === "children" && other?.includes(id)) {
        errors.push({ field, message: "is also a parent: lineage cannot loop" });
      }
    });
  };
  check("parents", input.children);
  check("children", input.parents);
  return errors;
}

/**
 * The statements that replace the lineage of an asset of a project on the sides sent (`parents`
 * feed it, it feeds `children`), for the caller's batch after its access check: reads of the asset
 * (with its connection's db_type) and of the ids named that are assets of the tenant in a project
 * the caller can read (`readable`: SQL on a project id column, undefined = all), then the writes,
 * which change anything only where `allowed` holds (the caller's access), the asset is the
 * project's and every id named is such an asset (no self-edge, no asset both parent and child),
 * then `when` (that condition, for the audit row) and a read of the lineage after them. Read the
 * answer with lineageSet.
 */
export function setLineageStatements(
  db: Db,
  project: ProjectRef,
  assetId: number,
  input: { parents?: number[]; children?: number[] },
  readable: (projectId: SQLiteColumn) => SQL | undefined,
  allowed: SQL | undefined,
) {
  const parents = input.parents ? [...new Set(input.parents)] : undefined;
  const children = input.children ? [...new Set(input.children)] : undefined;
  const named = [...new Set([...(parents ?? []), ...(children ?? [])])];
  const ofProject = and(
    eq(assets.tenantId, project.tenantId),
    eq(assets.projectId, project.id),
    eq(assets.id, assetId),
  );
  const known = (t: typeof assets | typeof moving) =>
    and(eq(t.tenantId, project.tenantId), inJsonList(t.id, named), readable(t.projectId));
  const when = and(
    allowed,
    lineageProblems(assetId, input).length > 0 ? sql`0` : undefined,
    exists(db.select({ one: sql`1` }).from(assets).where(ofProject)),
    named.length > 0
      ? sql`${db.select({ n: sql`count(*)` }).from(moving).where(known(moving))} = ${named.length}`
      : undefined,
  );
  const now = nowIso();
  const edges = [
    ...(parents ?? []).map((p) => ({ parentAssetId: p, childAssetId: assetId })),
    ...(children ?? []).map((c) => ({ parentAssetId: assetId, childAssetId: c })),
  ].map((e) => ({ ...e, tenantId: project.tenantId, createdAt: now }));
  const writes: BatchItem<"sqlite">[] = [];
  const ofTenant = eq(assetLineage.tenantId, project.tenantId);
  if (parents) writes.push(db.delete(assetLineage).where(and(ofTenant, eq(assetLineage.childAssetId, assetId), when)));
  if (children)
    writes.push(db.delete(assetLineage).where(and(ofTenant, eq(assetLineage.parentAssetId, assetId), when)));
  writes.push(...insertJsonRows(db, assetLineage, edges, { when }));
  return {
    asset: db
      .select({
        asset: assets,
        // Aliased: in a batch drizzle reads a row by its column names, where the connection's would be the asset's.
        connectionId: sql<number | null>`${connections.id}`.as("lineage_connection_id"),
        connectionDbType: sql<string | null>`${connections.dbType}`.as("lineage_connection_db_type"),
      })
      .from(assets)
      .leftJoin(connections, and(eq(connections.tenantId, assets.tenantId), eq(connections.id, assets.connectionId)))
      .where(ofProject)
      .limit(1),
    known: db
      .select({ id: assets.id })
      .from(assets)
      .where(named.length > 0 ? known(assets) : sql`0`),
    writes,
    when,
    lineage: lineageEdges(db, project.tenantId, [assetId]),
  };
}

/**
 * The asset setLineageStatements linked (its db_type its connection's), once its batch has shown
 * the caller's access: no asset is a 404, an id that is not an asset the caller can read (or a
 * self-edge, or an asset both parent and child) the 400 listing every problem, as before.
 */
export function lineageSet(
  assetId: number,
  input: { parents?: number[]; children?: number[] },
  assetRows: readonly { asset: AssetRow; connectionId: number | null; connectionDbType: string | null }[],
  knownRows: readonly { id: number }[],
): AssetRow {
  const row = assetRows[0];
  if (!row) throw new NotFoundError("Asset");
  const errors = lineageProblems(assetId, input, new Set(knownRows.map((r) => r.id)));
  if (errors.length > 0) invalid(errors);
  return row.connectionId === null ? row.asset : { ...row.asset, dbType: row.connectionDbType };
}

/** The assets of a move, seen from a condition of a statement on assets (or on their incidents). */
export const moving = alias(assets, "moving");
/** The connection of an asset of a move, seen from a condition. */
const movingConnection = alias(connections, "moving_connection");

/**
 * SQL over the assets `named` (a condition on `moving`, an alias of assets): the checks of a move (4.3)
 * as conditions of its writes, on the state the batch sees. Without `targetConnectionId` none of
 * them uses a PROJECT connection; with one, it is visible from the target project and of the type
 * of each of them.
 */
export function moveConditions(
  db: Db,
  named: SQL | undefined,
  target: ProjectRef,
  targetConnectionId: number | undefined,
): SQL | undefined {
  const of = (where: SQL | undefined) =>
    db
      .select({ one: sql`1` })
      .from(moving)
      .innerJoin(
        movingConnection,
        and(eq(movingConnection.tenantId, moving.tenantId), eq(movingConnection.id, moving.connectionId)),
      )
      .where(and(named, where));
  if (targetConnectionId === undefined) return notExists(of(isNotNull(movingConnection.projectId)));
  const connection = db
    .select({ type: connections.type })
    .from(connections)
    .where(visibleFrom(target, targetConnectionId));
  return and(
    exists(connection),
    notExists(
      db
        .select({ one: sql`1` })
        .from(moving)
        .where(and(named, sql`${moving.type} <> ${connection}`)),
    ),
  );
}

/** The target connection of a move, for the batch (none sent: a read of nothing). */
export function moveConnectionRead(db: Db, target: ProjectRef, targetConnectionId: number | undefined) {
  return db
    .select()
    .from(connections)
    .where(targetConnectionId === undefined ? sql`0` : visibleFrom(target, targetConnectionId))
    .limit(1);
}

/** SQL: whether the asset's connection (of `table`, assets or an alias) is PROJECT-scoped, as a column read. */
export function projectScoped(table: { tenantId: SQLiteColumn; connectionId: SQLiteColumn }) {
  const scoped = and(
    eq(connections.tenantId, table.tenantId),
    eq(connections.id, table.connectionId),
    isNotNull(connections.projectId),
  );
  return sql<number>`exists (select 1 from ${connections} where ${scoped})`.mapWith(Number);
}

/** The columns of a move's new connection (none: the assets keep theirs), db_type read in SQL. */
export function movedConnectionColumns(tenantId: string, targetConnectionId: number | undefined) {
  if (targetConnectionId === undefined) return {};
  return {
    connectionId: targetConnectionId,
    dbType: sql`(select ${connections.dbType} from ${connections} where ${connections.tenantId} = ${tenantId} and ${connections.id} = ${targetConnectionId})`,
  };
}

/**
 * The statements that move assets between projects of a tenant, all or none (move rules of 4.3),
 * for the caller's batch after its access checks: a read of the assets named (and of the target
 * connection), then the writes, which change anything only where `allowed` holds (the caller's
 * access to both projects) and where every check holds in SQL: every id is an asset of the source
 * project; without `targetConnectionId` the assets keep their connections, which must all be
 * GLOBAL; a target connection must be visible from the target project and of each asset's type.
 * A moved asset leaves its source group (the group stays in the source project). The assets'
 * update goes last (the audit row after it sees its change); read the answer with assetsMoved.
 */
export function moveAssetsStatements(
  db: Db,
  source: ProjectRef,
  target: ProjectRef,
  ids: number[],
  targetConnectionId: number | undefined,
  allowed: SQL | undefined,
) {
  const unique = [...new Set(ids)];
  const named = (t: typeof assets | typeof moving) =>
    and(eq(t.tenantId, source.tenantId), eq(t.projectId, source.id), inJsonList(t.id, unique));
  const when = and(
    allowed,
    sql`${db.select({ n: sql`count(*)` }).from(moving).where(named(moving))} = ${unique.length}`,
    moveConditions(db, named(moving), target, targetConnectionId),
  );
  const read = db
    .select({ id: assets.id, type: assets.type, connectionId: assets.connectionId, scoped: projectScoped(assets) })
    .from(assets)
    .where(named(assets));
  const follow = followMove(
    db,
    source.tenantId,
    unique,
    { projectId: target.id, ...(targetConnectionId !== undefined ? { connectionId: targetConnectionId } : {}) },
    when,
  );
  const update = db
    .update(assets)
    .set({
      projectId: target.id,
      sourceGroupId: null,
      ...movedConnectionColumns(source.tenantId, targetConnectionId),
      updatedAt: nowIso(),
    })
    .where(and(named(assets), when))
    .returning({ id: assets.id });
  return {
    unique,
    read,
    connection: moveConnectionRead(db, target, targetConnectionId),
    writes: [follow[0]!, follow[1]!, update] as const,
  };
}

/**
 * The answer of moveAssetsStatements' batch, once it has shown the caller's access: the ids moved,
 * or why none moved, told from its reads as before (a 404 naming the ids that are not assets of
 * the source project, a 400 listing every problem of the connections).
 */
export function assetsMoved(
  source: ProjectRef,
  unique: number[],
  rows: readonly { id: number; type: string; scoped: number }[],
  connectionRows: readonly ConnectionRow[],
  targetConnectionId: number | undefined,
  updated: readonly { id: number }[],
): number[] {
  if (updated.length > 0) return unique;
  const found = new Set(rows.map((r) => r.id));
  const missing = unique.filter((id) => !found.has(id));
  if (missing.length > 0) throw new NotFoundError(`Asset ${missing.join(", ")} of project ${source.id}`);
  const errors: FieldProblem[] = [];
  if (targetConnectionId === undefined) {
    for (const r of rows.filter((r) => r.scoped)) {
      errors.push({
        field: "target_connection_id",
        message: `required: asset ${r.id} uses a PROJECT connection, which cannot follow it to another project`,
      });
    }
  } else {
    const connection = connectionRows[0];
    if (!connection) {
      errors.push({ field: "target_connection_id", message: "no such connection in the target project" });
    } else {
      for (const r of rows.filter((r) => r.type !== connection.type)) {
        errors.push({
          field: "target_connection_id",
          message: `is a ${connection.type} connection; asset ${r.id} is ${r.type}`,
        });
      }
    }
  }
  if (errors.length > 0) invalid(errors);
  // The reads saw every check pass on the state the update saw: the update changed the assets.
  throw new Error("move: the checks passed but no asset was moved");
}

/** The db_type of each of `connectionIds`' connections: an asset's db_type is its connection's, read fresh. */
export async function connectionDbTypes(
  db: Db,
  tenantId: string,
  connectionIds: number[],
): Promise<Map<number, string | null>> {
  const ids = [...new Set(connectionIds)];
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: connections.id, dbType: connections.dbType })
    .from(connections)
    .where(and(eq(connections.tenantId, tenantId), inJsonList(connections.id, ids)));
  return new Map(rows.map((r) => [r.id, r.dbType]));
}
