import { and, asc, eq, gt, notExists, type SQL, sql } from "drizzle-orm";
import { forgetTenantAccess } from "../auth/access-cache";
import type { Db } from "../db";
import { insertWhere } from "../db/json-insert";
import { preparedOnce } from "../db/prepared";
import type { ProjectRow } from "../db/schema";
import {
  assets,
  type ProjectRole,
  projectMembers,
  projects,
  sourceGroups,
  type TenantRole,
  tenantMembers,
} from "../db/schema";
import { claimUnique } from "../db/unique";
import { ConflictError, NotFoundError } from "../lib/errors";
import { inJsonPlaceholder } from "../lib/sql";
import { nowIso } from "../lib/time";

type ProjectMemberRow = typeof projectMembers.$inferSelect;
type TenantMemberRow = typeof tenantMembers.$inferSelect;
/** A project named by its tenant and id. */
type ProjectRef = { tenantId: string; id: number };

const nameTaken = (name: string) => `A project named '${name}' already exists`;

/**
 * The statements that create a project, for the caller's batch: the project, then (`adminEmail`:
 * a creating user) its PROJECT_ADMIN membership. Both are written only where `allowed` holds (the
 * caller's standing in the tenant, checked in the same batch), so a project is never created for,
 * nor administered by, someone outside the tenant (a membership removed since the isolate cached
 * it, or concurrently). Only the project just inserted has this name in the tenant (the name is
 * unique). Run the batch through `createProjectConflicts` (a taken name is a 409, decided by the
 * unique index) and read the project with `projectCreated`. The membership goes last, so that the
 * project's insert is what a statement between them sees as the batch's last change.
 */
export function createProjectStatements(
  db: Db,
  tenantId: string,
  input: { name: string; description: string },
  createdBy: string,
  adminEmail: string | undefined,
  allowed: SQL | undefined,
) {
  const now = nowIso();
  const insert = insertWhere(
    db,
    projects,
    { tenantId, ...input, createdBy, createdAt: now, updatedAt: now },
    allowed,
  ).returning();
  const member = adminEmail
    ? db.insert(projectMembers).select(
        db
          .select({
            tenantId: projects.tenantId,
            projectId: projects.id,
            userEmail: sql<string>`${adminEmail}`.as("user_email"),
            role: sql<"PROJECT_ADMIN">`'PROJECT_ADMIN'`.as("role"),
            createdAt: sql<string>`${now}`.as("created_at"),
          })
          .from(projects)
          .where(and(eq(projects.tenantId, tenantId), eq(projects.name, input.name), allowed)),
      )
    : undefined;
  return { insert, member };
}

/** A batch with createProjectStatements, whose clash on the name is a 409 naming it. */
export const createProjectConflicts = <T>(batch: PromiseLike<T>, input: { name: string }) =>
  claimUnique(batch, nameTaken(input.name));

/** The project createProjectStatements inserted, once its batch has shown the caller's access. */
export function projectCreated(tenantId: string, rows: readonly ProjectRow[]): ProjectRow {
  forgetTenantAccess(tenantId);
  // The access passed on the state the insert saw, so it inserted.
  if (!rows[0]) throw new NotFoundError("Tenant");
  return rows[0];
}

/** One page of a tenant's projects in id order, restricted to `ids` when given (`limit + 1` rows). */
export function listProjects(db: Db, tenantId: string, ids: number[] | undefined, limit: number, after?: number) {
  if (ids && ids.length === 0) return Promise.resolve([]);
  const restricted = ids !== undefined;
  const paged = after !== undefined;
  const query = preparedOnce(db, `projects.list.${restricted}.${paged}`, () =>
    db.query.projects
      .findMany({
        where: and(
          eq(projects.tenantId, sql.placeholder("tenant")),
          restricted ? inJsonPlaceholder(projects.id, "ids") : undefined,
          paged ? gt(projects.id, sql.placeholder("after")) : undefined,
        ),
        orderBy: asc(projects.id),
        limit: sql.placeholder("limit"),
      })
      .prepare(),
  );
  return query.execute({ tenant: tenantId, ids: JSON.stringify(ids ?? []), after, limit: limit + 1 });
}

/**
 * The statement that updates a project's name or description (only the fields given), for the
 * caller's batch: it changes the project only where `allowed` holds (the caller's access, checked
 * in the same batch), and returns the updated row. Run it through `updateProjectConflicts`: a name
 * another project of the tenant has is a 409, decided by the unique index (tenant, name).
 */
export function updateProjectStatement(
  db: Db,
  tenantId: string,
  projectId: number,
  changes: { name?: string; description?: string },
  allowed: SQL | undefined,
) {
  return db
    .update(projects)
    .set({ ...changes, updatedAt: nowIso() })
    .where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId), allowed))
    .returning();
}

/** A batch with updateProjectStatement, whose clash on the name is a 409 naming it. */
export const updateProjectConflicts = <T>(batch: PromiseLike<T>, changes: { name?: string }) =>
  claimUnique(batch, nameTaken(changes.name ?? ""));

/**
 * The statement that deletes a project with its memberships and connections, for the caller's
 * batch: it deletes only where `allowed` holds (the caller's access, checked in the same batch)
 * and while the project holds no assets or source groups, which must be deleted or moved first.
 * Run its batch through `projectDeleted`. One conditional statement, so an asset created
 * meanwhile is never orphaned, and of concurrent deletes one succeeds.
 */
export function deleteProjectStatement(db: Db, tenantId: string, projectId: number, allowed: SQL | undefined) {
  const inProject = (table: typeof assets | typeof sourceGroups) =>
    db
      .select({ id: table.id })
      .from(table)
      .where(and(eq(table.tenantId, tenantId), eq(table.projectId, projectId)));
  return db
    .delete(projects)
    .where(
      and(
        eq(projects.tenantId, tenantId),
        eq(projects.id, projectId),
        allowed,
        notExists(inProject(assets)),
        notExists(inProject(sourceGroups)),
      ),
    )
    .returning({ id: projects.id });
}

/**
 * The answer of deleteProjectStatement, once its batch has shown the project there and the
 * caller's access (read earlier in the same batch): no row deleted means the project still holds
 * assets or source groups (409).
 */
export function projectDeleted(tenantId: string, gone: readonly { id: number }[]): void {
  if (gone.length === 0)
    throw new ConflictError("The project still has assets or source groups: delete or move them first");
  forgetTenantAccess(tenantId);
}

export function listProjectMembers(db: Db, project: ProjectRow) {
  return db.query.projectMembers.findMany({
    where: eq(projectMembers.projectId, project.id),
    orderBy: asc(projectMembers.userEmail),
  });
}

const alreadyMember = (email: string) => `${email} is already a member of this project`;

/**
 * The statements that add a member to a project, for the caller's batch, written only where
 * `allowed` holds (the caller's access, checked in the same batch): the user becomes a
 * TENANT_MEMBER if not in the tenant, then the membership. Run the batch through
 * `addProjectMemberConflicts`: the primary key (project, user) answers an existing member (409),
 * and rolls the batch back. The membership goes last: a statement after it sees it as the change.
 */
export function addProjectMemberStatements(
  db: Db,
  project: ProjectRef,
  email: string,
  role: ProjectRole,
  allowed: SQL | undefined,
) {
  const row: ProjectMemberRow = {
    tenantId: project.tenantId,
    projectId: project.id,
    userEmail: email,
    role,
    createdAt: nowIso(),
  };
  const tenantMember = insertWhere(
    db,
    tenantMembers,
    { tenantId: project.tenantId, userEmail: email, role: "TENANT_MEMBER", createdAt: row.createdAt },
    allowed,
  ).onConflictDoNothing();
  return { row, statements: [tenantMember, insertWhere(db, projectMembers, row, allowed)] as const };
}

/** A batch with addProjectMemberStatements, whose clash on the membership is a 409 naming the user. */
export const addProjectMemberConflicts = <T>(batch: PromiseLike<T>, tenantId: string, email: string) =>
  claimUnique(batch, alreadyMember(email)).finally(() => forgetTenantAccess(tenantId));

/** The statement that changes a member's role, where `allowed` holds (the caller's access, checked in the same batch). */
export function changeProjectMemberStatement(
  db: Db,
  project: ProjectRef,
  email: string,
  role: ProjectRole,
  allowed: SQL | undefined,
) {
  return db
    .update(projectMembers)
    .set({ role })
    .where(and(eq(projectMembers.projectId, project.id), eq(projectMembers.userEmail, email), allowed))
    .returning();
}

/** The statement that removes a member, where `allowed` holds (the caller's access, checked in the same batch). */
export function removeProjectMemberStatement(db: Db, project: ProjectRef, email: string, allowed: SQL | undefined) {
  return db
    .delete(projectMembers)
    .where(and(eq(projectMembers.projectId, project.id), eq(projectMembers.userEmail, email), allowed))
    .returning({ email: projectMembers.userEmail });
}

/**
 * The member a change or removal of a membership found, once its batch has shown the caller's
 * access: none is a 404 (the user is no member of the project).
 */
export function projectMemberChanged<R>(tenantId: string, rows: readonly R[]): R {
  forgetTenantAccess(tenantId);
  if (!rows[0]) throw new NotFoundError("Project member");
  return rows[0];
}

export function listTenantMembers(db: Db, tenantId: string, limit: number, after?: string) {
  return db.query.tenantMembers.findMany({
    where: and(
      eq(tenantMembers.tenantId, tenantId),
      after === undefined ? undefined : gt(tenantMembers.userEmail, after),
    ),
    orderBy: asc(tenantMembers.userEmail),
    limit: limit + 1,
  });
}

/**
 * The statements that set a user's tenant role, for the caller's batch, written only where
 * `allowed` holds (the caller's access, checked in the same batch): `update` changes a member's
 * role, then `insert` adds a user who is none (ON CONFLICT DO NOTHING: it adds nothing where
 * `update` changed one). One batch is one transaction: the member cannot vanish between them.
 * Read the answer with tenantMemberPut.
 */
export function putTenantMemberStatements(
  db: Db,
  tenantId: string,
  email: string,
  role: TenantRole,
  allowed: SQL | undefined,
) {
  const member = and(eq(tenantMembers.tenantId, tenantId), eq(tenantMembers.userEmail, email), allowed);
  return {
    update: db.update(tenantMembers).set({ role }).where(member).returning(),
    insert: insertWhere(db, tenantMembers, { tenantId, userEmail: email, role, createdAt: nowIso() }, allowed)
      .onConflictDoNothing()
      .returning(),
  };
}

/** The member putTenantMemberStatements set; `created` when it added the user to the tenant. */
export function tenantMemberPut(
  tenantId: string,
  updated: readonly TenantMemberRow[],
  inserted: readonly TenantMemberRow[],
): { row: TenantMemberRow; created: boolean } {
  forgetTenantAccess(tenantId);
  if (inserted[0]) return { row: inserted[0], created: true };
  // The access passed on the state the batch saw, so one of the two wrote.
  if (!updated[0]) throw new NotFoundError("Tenant");
  return { row: updated[0], created: false };
}

/**
 * The statements that remove a user from a tenant and from all of its projects, where `allowed`
 * holds (the caller's access, checked in the same batch). The tenant membership goes last: what
 * it removed is the answer (none: a 404, see tenantMemberRemoved), and the change a statement
 * after it sees.
 */
export function removeTenantMemberStatements(db: Db, tenantId: string, email: string, allowed: SQL | undefined) {
  return [
    db
      .delete(projectMembers)
      .where(and(eq(projectMembers.tenantId, tenantId), eq(projectMembers.userEmail, email), allowed)),
    db
      .delete(tenantMembers)
      .where(and(eq(tenantMembers.tenantId, tenantId), eq(tenantMembers.userEmail, email), allowed))
      .returning({ email: tenantMembers.userEmail }),
  ] as const;
}

/** The answer of removeTenantMemberStatements' batch: no membership removed is a 404. */
export function tenantMemberRemoved(tenantId: string, gone: readonly { email: string }[]): void {
  forgetTenantAccess(tenantId);
  if (gone.length === 0) throw new NotFoundError("Tenant member");
}
