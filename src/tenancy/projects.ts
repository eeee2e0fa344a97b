import { and, asc, eq, gt } from "drizzle-orm";
import type { Db } from "../db";
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
import { ConflictError, NotFoundError } from "../lib/errors";
import { inJsonList } from "../lib/sql";
import { nowIso } from "../lib/time";

type ProjectMemberRow = typeof projectMembers.$inferSelect;
type TenantMemberRow = typeof tenantMembers.$inferSelect;

async function assertNameFree(db: Db, tenantId: string, name: string, exceptId?: number) {
  const clash = await db.query.projects.findFirst({
    where: and(eq(projects.tenantId, tenantId), eq(projects.name, name)),
    columns: { id: true },
  });
  if (clash && clash.id !== exceptId) throw new ConflictError(`A project named '${name}' already exists`);
}

/** Creates a project; a creating user becomes its PROJECT_ADMIN. */
export async function createProject(
  db: Db,
  tenantId: string,
  input: { name: string; description: string },
  createdBy: string,
  adminEmail?: string,
): Promise<ProjectRow> {
  await assertNameFree(db, tenantId, input.name);
  const now = nowIso();
  const [row] = await db
    .insert(projects)
    .values({ tenantId, ...input, createdBy, createdAt: now, updatedAt: now })
    .returning();
  if (adminEmail) {
    await db
      .insert(projectMembers)
      .values({ tenantId, projectId: row!.id, userEmail: adminEmail, role: "PROJECT_ADMIN", createdAt: now });
  }
  return row!;
}

/** One page of a tenant's projects in id order, restricted to `ids` when given (`limit + 1` rows). */
export function listProjects(db: Db, tenantId: string, ids: number[] | undefined, limit: number, after?: number) {
  if (ids && ids.length === 0) return Promise.resolve([]);
  return db.query.projects.findMany({
    where: and(
      eq(projects.tenantId, tenantId),
      ids ? inJsonList(projects.id, ids) : undefined,
      after === undefined ? undefined : gt(projects.id, after),
    ),
    orderBy: asc(projects.id),
    limit: limit + 1,
  });
}

export async function updateProject(
  db: Db,
  project: ProjectRow,
  changes: { name?: string; description?: string },
): Promise<ProjectRow> {
  if (changes.name !== undefined && changes.name !== project.name) {
    await assertNameFree(db, project.tenantId, changes.name, project.id);
  }
  const [row] = await db
    .update(projects)
    .set({ ...changes, updatedAt: nowIso() })
    .where(and(eq(projects.tenantId, project.tenantId), eq(projects.id, project.id)))
    .returning();
  return row!;
}

/**
 * Deletes a project with its memberships and connections; refused (409) while it still holds
 * assets or source groups, which must be deleted or moved first.
 */
export async function deleteProject(db: Db, project: ProjectRow): Promise<void> {
  const inProject = (table: typeof assets | typeof sourceGroups) =>
    db
      .select({ id: table.id })
      .from(table)
      .where(and(eq(table.tenantId, project.tenantId), eq(table.projectId, project.id)))
      .limit(1);
  const [asset, group] = await Promise.all([inProject(assets), inProject(sourceGroups)]);
  if (asset.length > 0 || group.length > 0) {
    throw new ConflictError("The project still has assets or source groups: delete or move them first");
  }
  await db.delete(projects).where(and(eq(projects.tenantId, project.tenantId), eq(projects.id, project.id)));
}

export function listProjectMembers(db: Db, project: ProjectRow) {
  return db.query.projectMembers.findMany({
    where: eq(projectMembers.projectId, project.id),
    orderBy: asc(projectMembers.userEmail),
  });
}

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
  if (existing) throw new ConflictError(`${email} is already a member of this project`);
  const row: ProjectMemberRow = {
    tenantId: project.tenantId,
    projectId: project.id,
    userEmail: email,
    role,
    createdAt: nowIso(),
  };
  await db.batch([
    db
      .insert(tenantMembers)
      .values({ tenantId: project.tenantId, userEmail: email, role: "TENANT_MEMBER", createdAt: row.createdAt })
      .onConflictDoNothing(),
    db.insert(projectMembers).values(row),
  ]);
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

/** Sets a user's tenant role; `created` tells whether the user was new to the tenant. */
export async function putTenantMember(
  db: Db,
  tenantId: string,
  email: string,
  role: TenantRole,
): Promise<{ row: TenantMemberRow; created: boolean }> {
  const existing = await db.query.tenantMembers.findFirst({
    where: and(eq(tenantMembers.tenantId, tenantId), eq(tenantMembers.userEmail, email)),
  });
  const row: TenantMemberRow = { tenantId, userEmail: email, role, createdAt: existing?.createdAt ?? nowIso() };
  await db
    .insert(tenantMembers)
    .values(row)
    .onConflictDoUpdate({ target: [tenantMembers.tenantId, tenantMembers.userEmail], set: { role } });
  return { row, created: !existing };
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
  if (gone.length === 0) throw new NotFoundError("Tenant member");
}
