import { and, asc, eq, exists, gt, notExists, type SQL, sql } from "drizzle-orm";
import { forgetTenantAccess } from "../auth/access-cache";
import type { Db } from "../db";
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

const nameTaken = (name: string) => `A project named '${name}' already exists`;

/** Answers a taken name early; the unique index (tenant, name) decides a race (db/unique.ts). */
async function assertNameFree(db: Db, tenantId: string, name: string, exceptId?: number) {
  const clash = await db.query.projects.findFirst({
    where: and(eq(projects.tenantId, tenantId), eq(projects.name, name)),
    columns: { id: true },
  });
  if (clash && clash.id !== exceptId) throw new ConflictError(nameTaken(name));
}

/**
 * Creates a project (a taken name is a 409); a creating user becomes its PROJECT_ADMIN. The
 * project and its admin are one batch, and both are written only if the creator is still a
 * member of the tenant then: the access check before it may have read a membership removed
 * since (concurrently, or in another isolate within the access cache's 30 s), and a project must
 * never be created for, nor be administered by, someone outside the tenant. Such a create
 * writes nothing and is the tenant's 404.
 */
export async function createProject(
  db: Db,
  tenantId: string,
  input: { name: string; description: string },
  createdBy: string,
  adminEmail?: string,
): Promise<ProjectRow> {
  await assertNameFree(db, tenantId, input.name);
  const now = nowIso();
  if (!adminEmail) {
    const insert = db
      .insert(projects)
      .values({ tenantId, ...input, createdBy, createdAt: now, updatedAt: now })
      .returning();
    return (await claimUnique(insert, nameTaken(input.name)))[0]!;
  }
  const stillMember = exists(
    db
      .select({ one: sql`1` })
      .from(tenantMembers)
      .where(and(eq(tenantMembers.tenantId, tenantId), eq(tenantMembers.userEmail, adminEmail))),
  );
  const insert = db
    .insert(projects)
    .select(
      db
        .select({
          id: sql<null>`null`.as("id"),
          tenantId: sql<string>`${tenantId}`.as("tenant_id"),
          name: sql<string>`${input.name}`.as("name"),
          description: sql<string>`${input.description}`.as("description"),
          createdBy: sql<string>`${createdBy}`.as("created_by"),
          createdAt: sql<string>`${now}`.as("created_at"),
          updatedAt: sql<string>`${now}`.as("updated_at"),
        })
        .from(sql`(select 1)`)
        .where(stillMember),
    )
    .returning();
  // Only the project just inserted has this name in the tenant (the name is unique), and only if
  // the creator was still a member: the same condition, in the same transaction.
  const member = db.insert(projectMembers).select(
    db
      .select({
        tenantId: projects.tenantId,
        projectId: projects.id,
        userEmail: sql<string>`${adminEmail}`.as("user_email"),
        role: sql<"PROJECT_ADMIN">`'PROJECT_ADMIN'`.as("role"),
        createdAt: sql<string>`${now}`.as("created_at"),
      })
      .from(projects)
      .where(and(eq(projects.tenantId, tenantId), eq(projects.name, input.name), stillMember)),
  );
  const [rows] = await claimUnique(db.batch([insert, member]), nameTaken(input.name));
  forgetTenantAccess(tenantId);
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

/** Adds a member to a project (409 if already one); the user becomes a TENANT_MEMBER if not in the tenant. */
export async function addProjectMember(
  db: Db,
  project: ProjectRow,
  email: string,
  role: ProjectRole,
): Promise<ProjectMemberRow> {
  const existing = await db.query.projectMembers.findFirst({
    where: and(eq(projectMembers.projectId, project.id), eq(projectMembers.userEmail, email)),
  });
  if (existing) throw new ConflictError(alreadyMember(email));
  const row: ProjectMemberRow = {
    tenantId: project.tenantId,
    projectId: project.id,
    userEmail: email,
    role,
    createdAt: nowIso(),
  };
  // The primary key (project, user) settles a race between two adds: the loser's batch rolls back.
  await claimUnique(
    db.batch([
      db
        .insert(tenantMembers)
        .values({ tenantId: project.tenantId, userEmail: email, role: "TENANT_MEMBER", createdAt: row.createdAt })
        .onConflictDoNothing(),
      db.insert(projectMembers).values(row),
    ]),
    alreadyMember(email),
  );
  forgetTenantAccess(project.tenantId);
  return row;
}

export async function changeProjectMember(
  db: Db,
  project: ProjectRow,
  email: string,
  role: ProjectRole,
): Promise<ProjectMemberRow> {
  const [row] = await db
    .update(projectMembers)
    .set({ role })
    .where(and(eq(projectMembers.projectId, project.id), eq(projectMembers.userEmail, email)))
    .returning();
  if (!row) throw new NotFoundError("Project member");
  return row;
}

export async function removeProjectMember(db: Db, project: ProjectRow, email: string): Promise<void> {
  const gone = await db
    .delete(projectMembers)
    .where(and(eq(projectMembers.projectId, project.id), eq(projectMembers.userEmail, email)))
    .returning({ email: projectMembers.userEmail });
  forgetTenantAccess(project.tenantId);
  if (gone.length === 0) throw new NotFoundError("Project member");
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

/** Insert-or-update rounds of a PUT before it gives up on a row that keeps appearing and vanishing. */
const UPSERT_ROUNDS = 3;

/**
 * Sets a user's tenant role; `created` tells whether the user was new to the tenant. The insert
 * decides it (ON CONFLICT DO NOTHING), so of concurrent first PUTs exactly one creates.
 */
export async function putTenantMember(
  db: Db,
  tenantId: string,
  email: string,
  role: TenantRole,
): Promise<{ row: TenantMemberRow; created: boolean }> {
  const member = and(eq(tenantMembers.tenantId, tenantId), eq(tenantMembers.userEmail, email));
  // A member removed between the two statements is added on the next round.
  for (let round = 0; round < UPSERT_ROUNDS; round++) {
    const [inserted] = await db
      .insert(tenantMembers)
      .values({ tenantId, userEmail: email, role, createdAt: nowIso() })
      .onConflictDoNothing()
      .returning();
    if (inserted) {
      forgetTenantAccess(tenantId);
      return { row: inserted, created: true };
    }
    const [updated] = await db.update(tenantMembers).set({ role }).where(member).returning();
    if (updated) {
      forgetTenantAccess(tenantId);
      return { row: updated, created: false };
    }
  }
  throw new ConflictError("The membership kept changing while it was set; try again");
}

/** Removes a user from a tenant and from all of its projects. */
export async function removeTenantMember(db: Db, tenantId: string, email: string): Promise<void> {
  const [gone] = await db.batch([
    db
      .delete(tenantMembers)
      .where(and(eq(tenantMembers.tenantId, tenantId), eq(tenantMembers.userEmail, email)))
      .returning({ email: tenantMembers.userEmail }),
    db.delete(projectMembers).where(and(eq(projectMembers.tenantId, tenantId), eq(projectMembers.userEmail, email))),
  ]);
  forgetTenantAccess(tenantId);
  if (gone.length === 0) throw new NotFoundError("Tenant member");
}
