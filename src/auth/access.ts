import { and, eq, exists, inArray, or, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Db } from "../db";
import { preparedOnce } from "../db/prepared";
import { allRows } from "../db/rows";
import {
  assetHeadColumns,
  assets,
  connections,
  incidents,
  PROJECT_ROLES,
  type ProjectRole,
  projectMembers,
  projects,
  type TenantRole,
  tenantMembers,
  tenants,
} from "../db/schema";
import { ForbiddenError, NotFoundError } from "../lib/errors";
import { accessGeneration, type CachedAccess, recallAccess, rememberAccess } from "./access-cache";
import type { Principal } from "./principal";

const PROJECT_RANK: Record<ProjectRole, number> = { PROJECT_VIEWER: 1, PROJECT_EDITOR: 2, PROJECT_ADMIN: 3 };

import type { AssetHead, AssetRow, IncidentRow, ProjectRow } from "../db/schema";

/** What the caller may do in a tenant. */
export interface TenantAccess {
  tenantId: string;
  role: TenantRole;
  principal: Principal;
}

/** What the caller may do in a project. */
export interface ProjectAccess extends TenantAccess {
  project: ProjectRow;
  projectRole: ProjectRole;
}

/** What the caller may do with an asset (through its project). */
export interface AssetAccess<A extends AssetHead = AssetRow> extends ProjectAccess {
  asset: A;
}

/** What the caller may do with an incident (through its asset's project). */
export interface IncidentAccess extends ProjectAccess {
  incident: IncidentRow;
}

/** How much of an asset an access check reads: its head, its whole row, or its row with its connection's db_type. */
type AssetRead = "head" | "row" | "connectionType";
/** The reads that answer for each: a fuller read serves a leaner one. */
const SERVES: Record<AssetRead, readonly AssetRead[]> = {
  head: ["head", "row", "connectionType"],
  row: ["row", "connectionType"],
  connectionType: ["connectionType"],
};

/**
 * The permission checks of one request, one line per route:
 * `await c.var.access.project(tenant, projectId, "PROJECT_EDITOR")`.
 *
 * Rules (docs/api.md, "Roles and permissions"): a resource of a tenant the caller is not in, or
 * of a project the caller is not a member of, is a 404 (its existence is not revealed); a resource the caller
 * can see but lacks the role to change is a 403. The platform administrator and tenant admins
 * hold every project role in their tenants.
 */
/** The request's D1 bookmarks (src/db/sessions.ts): what the client has seen, and what the request has. */
export interface SessionBookmarks {
  /** The bookmark the client sent: the request must not read an older state. */
  readonly sent?: string | undefined;
  /** The newest state the request's queries have seen so far. */
  seen(): string | undefined;
}

export class Access {
  private readonly tenantCache = new Map<string, Promise<TenantAccess>>();
  /** The projects the calling user is a member of, per tenant, read with the tenant access. */
  private readonly memberOf = new Map<string, readonly number[]>();
  /**
   * The resource reads of this request's checks, by what they read: the route's access check runs
   * before its input is validated (src/routes/access.ts), and the handler's own check of the same
   * resource then costs no second round trip.
   */
  private readonly reads = new Map<string, Promise<unknown>>();

  constructor(
    private readonly db: Db,
    readonly principal: Principal,
    private readonly bookmarks?: SessionBookmarks,
  ) {}

  /** The platform administrator only (403 for anyone else). */
  platformAdmin(): void {
    if (this.principal.kind !== "admin") throw new ForbiddenError("Only the platform administrator may do this");
  }

  /** The calling user's e-mail; 403 for the platform administrator and tenant-scoped keys. */
  user(): string {
    if (this.principal.kind !== "user") throw new ForbiddenError("This needs a user identity (a user token or key)");
    return this.principal.email;
  }

  /** The caller's access to a tenant, requiring `need` (default: any membership). */
  async tenant(tenantId: string, need: TenantRole = "TENANT_MEMBER"): Promise<TenantAccess> {
    let pending = this.tenantCache.get(tenantId);
    if (!pending) {
      pending = this.loadTenant(tenantId);
      this.tenantCache.set(tenantId, pending);
    }
    const access = await pending;
    if (need === "TENANT_ADMIN" && access.role !== "TENANT_ADMIN") {
      throw new ForbiddenError("This needs the TENANT_ADMIN role");
    }
    return access;
  }

  /**
   * The caller's standing in a tenant: from the isolate's cache while it is fresh
   * (src/auth/access-cache.ts), else the tenant with the caller's membership and the projects it
   * is a member of, in one round trip.
   */
  private async loadTenant(tenantId: string): Promise<TenantAccess> {
    const p = this.principal;
    // Errors are built only when thrown: building one captures a stack, a cost on every request.
    const notFound = () => new NotFoundError("Tenant");
    if (p.kind === "tenant_key" && p.tenantId !== tenantId) throw notFound();
    const email = p.kind === "user" ? p.email : undefined;
    const cached = recallAccess(tenantId, email, this.bookmarks?.sent) ?? (await this.readAccess(tenantId, email));
    if (!cached) throw notFound();
    this.memberOf.set(tenantId, cached.projectIds);
    return { tenantId, role: cached.role, principal: p };
  }

  /** The caller's standing in a tenant from D1 (kept in the cache); undefined when it has none. */
  private async readAccess(tenantId: string, email: string | undefined): Promise<CachedAccess | undefined> {
    const readAt = accessGeneration();
    let access: CachedAccess | undefined;
    if (email === undefined) {
      // The platform administrator and tenant keys hold every role: the tenant need only exist.
      const tenant = await this.db.query.tenants.findFirst({ where: eq(tenants.id, tenantId), columns: { id: true } });
      access = tenant ? { role: "TENANT_ADMIN", projectIds: [] } : undefined;
    } else {
      const [[row], projectRows] = await this.db.batch([
        this.db
          .select({ role: tenantMembers.role })
          .from(tenantMembers)
          .where(and(eq(tenantMembers.tenantId, tenantId), eq(tenantMembers.userEmail, email)))
          .limit(1),
        this.db
          .select({ id: projectMembers.projectId })
          .from(projectMembers)
          .where(and(eq(projectMembers.tenantId, tenantId), eq(projectMembers.userEmail, email))),
      ]);
      access = row ? { role: row.role, projectIds: projectRows.map((r) => r.id) } : undefined;
    }
    if (access) rememberAccess(tenantId, email, access, readAt, this.bookmarks?.seen());
    return access;
  }

  /**
   * The caller's role in a project it may see — every role for tenant admins and keys, else its
   * membership (none: `missing`) — required to be at least `need`.
   */
  private projectRole(
    t: TenantAccess,
    membership: ProjectRole | null,
    need: ProjectRole,
    missing: () => NotFoundError,
  ): ProjectRole {
    let role: ProjectRole;
    if (t.role === "TENANT_ADMIN" || t.principal.kind !== "user") role = "PROJECT_ADMIN";
    else if (!membership) throw missing();
    else role = membership;
    if (PROJECT_RANK[role] < PROJECT_RANK[need]) throw new ForbiddenError(`This needs the ${need} role`);
    return role;
  }

  /** Whose project membership the access queries join: the calling user's, none for others. */
  memberEmail(): string {
    return this.principal.kind === "user" ? this.principal.email : "";
  }

  /**
   * The caller's access to a project of a tenant, requiring at least `need`. The tenant (unless
   * this request has it already) and the project with the caller's membership are read together.
   */
  async project(tenantId: string, projectId: number, need: ProjectRole): Promise<ProjectAccess> {
    const query = preparedOnce(this.db, "access.project", () =>
      this.db
        .select({ project: projects, role: projectMembers.role })
        .from(projects)
        .leftJoin(projectMembers, membershipOn)
        .where(and(eq(projects.tenantId, sql.placeholder("tenant")), eq(projects.id, sql.placeholder("id"))))
        .limit(1)
        .prepare(),
    );
    const [t, rows] = await Promise.all([
      this.tenant(tenantId),
      this.readOnce(`project\n${tenantId}\n${projectId}`, () =>
        allRows(query, { tenant: tenantId, id: projectId, email: this.memberEmail() }),
      ),
    ]);
    const row = rows[0];
    const missing = () => new NotFoundError("Project");
    if (!row) throw missing();
    return { ...t, project: row.project, projectRole: this.projectRole(t, row.role, need, missing) };
  }

  /**
   * As project(), from the project and the caller's membership read by the route's own query
   * (`read`: undefined when the project is not the tenant's), e.g. a page of the project's assets
   * joined with them: one round trip for the check and the read. The tenant comes as in project().
   */
  async projectFrom(
    tenantId: string,
    need: ProjectRole,
    read: Promise<{ project: ProjectRow; role: ProjectRole | null } | undefined>,
  ): Promise<ProjectAccess> {
    const [t, row] = await Promise.all([this.tenant(tenantId), read]);
    const missing = () => new NotFoundError("Project");
    if (!row) throw missing();
    return { ...t, project: row.project, projectRole: this.projectRole(t, row.role, need, missing) };
  }

  /**
   * The caller's access to a tenant, checked inside the tenant write's own batch (one round trip
   * for the check and the write), as projectInBatch does for a project. `read` goes first in the
   * batch: the tenant and the caller's tenant role as they are when the batch runs. `allowed` goes
   * into the write's WHERE (an INSERT … SELECT … WHERE for a new row): on that same state it holds
   * exactly when the check passes. `settle` answers as tenant() does (404 for a tenant the caller
   * is not in, 403 for a lesser role).
   */
  tenantInBatch(tenantId: string, need: TenantRole) {
    const p = this.principal;
    if (p.kind === "tenant_key" && p.tenantId !== tenantId) throw new NotFoundError("Tenant");
    const read = this.db
      .select({
        tenant: sql<string>`${tenants.id}`.as("access_tenant"),
        tenantRole: sql<TenantRole | null>`${tenantMembers.role}`.as("access_tenant_role"),
      })
      .from(tenants)
      .leftJoin(tenantMembers, tenantMemberOn(this.memberEmail()))
      .where(eq(tenants.id, tenantId))
      .limit(1);
    // The platform administrator and tenant keys hold every role: the tenant need only exist.
    const allowed =
      p.kind === "user"
        ? this.hasTenantRole(tenantId, ...(need === "TENANT_ADMIN" ? (["TENANT_ADMIN"] as const) : []))
        : exists(this.db.select({ one: sql`1` }).from(tenants).where(eq(tenants.id, tenantId)));
    const settle = (rows: { tenantRole: TenantRole | null }[]): TenantAccess => {
      const t = this.tenantFromBatch(tenantId, rows[0]);
      if (need === "TENANT_ADMIN" && t.role !== "TENANT_ADMIN") {
        throw new ForbiddenError("This needs the TENANT_ADMIN role");
      }
      return t;
    };
    return { read, allowed, settle };
  }

  /** SQL: the calling user is a member of the tenant, with one of `roles` when given. */
  private hasTenantRole(tenantId: string, ...roles: TenantRole[]): SQL {
    return exists(
      this.db
        .select({ one: sql`1` })
        .from(tenantMembers)
        .where(
          and(
            eq(tenantMembers.tenantId, tenantId),
            eq(tenantMembers.userEmail, this.memberEmail()),
            roles.length > 0 ? inArray(tenantMembers.role, roles) : undefined,
          ),
        ),
    );
  }

  /** The caller's standing in a tenant from an in-batch read's row (none: the tenant is not the caller's, 404). */
  private tenantFromBatch(tenantId: string, row: { tenantRole: TenantRole | null } | undefined): TenantAccess {
    const p = this.principal;
    if (!row || (p.kind === "user" && !row.tenantRole)) throw new NotFoundError("Tenant");
    return { tenantId, role: row.tenantRole ?? "TENANT_ADMIN", principal: p };
  }

  /**
   * The caller's access to a project, checked inside the project write's own batch (one round
   * trip for the check and the write). `read` goes first in the batch: the tenant, the caller's
   * tenant role, the project and the caller's project role as they are when the batch runs.
   * `allowed` goes into the write's WHERE: on that same state it holds exactly when the check
   * passes, so a refused caller's write changes nothing. `settle` answers the check from `read`'s
   * rows as project() does (404 for a tenant or project the caller cannot see, 403 for a lesser
   * role), from the state the write saw rather than the isolate's cache of memberships.
   */
  projectInBatch(tenantId: string, projectId: number, need: ProjectRole) {
    const p = this.principal;
    if (p.kind === "tenant_key" && p.tenantId !== tenantId) throw new NotFoundError("Tenant");
    const email = this.memberEmail();
    const read = this.db
      .select({ ...ROLES_READ, project: projects })
      .from(tenants)
      .leftJoin(tenantMembers, tenantMemberOn(email))
      .leftJoin(projects, and(eq(projects.tenantId, tenants.id), eq(projects.id, projectId)))
      .leftJoin(projectMembers, and(eq(projectMembers.projectId, projects.id), eq(projectMembers.userEmail, email)))
      .where(eq(tenants.id, tenantId))
      .limit(1);
    // The platform administrator and tenant keys hold every role: the project need only be the tenant's.
    // The project must be the tenant's (a new row that names it, e.g. a membership, is written only
    // then); the platform administrator and tenant keys hold every role in it.
    const ofTenant = exists(
      this.db
        .select({ one: sql`1` })
        .from(projects)
        .where(and(eq(projects.tenantId, tenantId), eq(projects.id, projectId))),
    );
    const allowed = and(ofTenant, this.roleInProject(tenantId, projectId, need));
    const settle = (rows: (RolesRead & { project: ProjectRow | null })[]) => {
      const missing = () => new NotFoundError("Project");
      const t = this.settleRoles(tenantId, need, missing, rows[0], rows[0]?.project);
      return { ...t, project: rows[0]!.project! };
    };
    return { read, allowed, settle };
  }

  /**
   * The answer of an in-batch check from its read's row (ROLES_READ and the resource `found`): 404
   * for a tenant the caller is not in or a resource it cannot see, 403 for a lesser role.
   */
  private settleRoles(
    tenantId: string,
    need: ProjectRole,
    missing: () => NotFoundError,
    row: RolesRead | undefined,
    found: unknown,
  ): TenantAccess & { projectRole: ProjectRole } {
    const t = this.tenantFromBatch(tenantId, row);
    if (!found) throw missing();
    return { ...t, projectRole: this.projectRole(t, row!.role, need, missing) };
  }

  /**
   * The SQL condition that the calling user holds `need` in the project `projectId` (an id, or a
   * column of the statement it goes into) of the tenant, as project() decides it: undefined for
   * the platform administrator and tenant keys, who hold every role.
   */
  private roleInProject(tenantId: string, projectId: number | SQLiteColumn, need: ProjectRole): SQL | undefined {
    if (this.principal.kind !== "user") return undefined;
    const email = this.principal.email;
    const enough = PROJECT_ROLES.filter((r) => PROJECT_RANK[r] >= PROJECT_RANK[need]);
    const projectRole = exists(
      this.db
        .select({ one: sql`1` })
        .from(projectMembers)
        .where(
          and(
            eq(projectMembers.projectId, projectId),
            eq(projectMembers.userEmail, email),
            inArray(projectMembers.role, enough),
          ),
        ),
    );
    return or(this.hasTenantRole(tenantId, "TENANT_ADMIN"), and(this.hasTenantRole(tenantId), projectRole));
  }

  /**
   * SQL: the caller can read the project `projectId` (a column of the statement it goes into), as
   * readableProjectIds decides it, on the state the statement sees: undefined for the platform
   * administrator and tenant keys, who read every project of the tenant.
   */
  readsProject(tenantId: string, projectId: SQLiteColumn): SQL | undefined {
    return this.roleInProject(tenantId, projectId, "PROJECT_VIEWER");
  }

  /**
   * As projectInBatch, for an asset addressed by id alone (asset()): `read` reads the tenant, the
   * caller's tenant role, the asset's head (assetHeadColumns) and the caller's role in its
   * project; `allowed` holds where the asset is the tenant's and the caller has `need` in its
   * project (for every caller: the asset's existence is part of it); `settle` answers as asset()
   * does (404 for an asset the caller cannot see, 403 for a lesser role).
   */
  assetInBatch(tenantId: string, assetId: number, need: ProjectRole) {
    const p = this.principal;
    if (p.kind === "tenant_key" && p.tenantId !== tenantId) throw new NotFoundError("Tenant");
    const email = this.memberEmail();
    const read = this.db
      .select({ ...ROLES_READ, asset: assetHeadColumns })
      .from(tenants)
      .leftJoin(tenantMembers, tenantMemberOn(email))
      .leftJoin(assets, and(eq(assets.tenantId, tenants.id), eq(assets.id, assetId)))
      .leftJoin(
        projectMembers,
        and(eq(projectMembers.projectId, assets.projectId), eq(projectMembers.userEmail, email)),
      )
      .where(eq(tenants.id, tenantId))
      .limit(1);
    const allowed = exists(
      this.db
        .select({ one: sql`1` })
        .from(assets)
        .where(
          and(
            eq(assets.tenantId, tenantId),
            eq(assets.id, assetId),
            this.roleInProject(tenantId, assets.projectId, need),
          ),
        ),
    );
    const settle = (rows: (RolesRead & { asset: AssetHead | null })[]) => {
      const missing = () => new NotFoundError("Asset");
      const t = this.settleRoles(tenantId, need, missing, rows[0], rows[0]?.asset);
      return { ...t, asset: rows[0]!.asset! };
    };
    return { read, allowed, settle };
  }

  /**
   * As assetInBatch, for an incident (incident()): `read` reads the tenant, the caller's tenant
   * role, the incident and the caller's role in its project; `allowed` holds where the incident is
   * the tenant's and the caller has `need` in its project; `settle` answers as incident() does (404
   * for an incident the caller cannot see, 403 for a lesser role).
   */
  incidentInBatch(tenantId: string, incidentId: number, need: ProjectRole) {
    const p = this.principal;
    if (p.kind === "tenant_key" && p.tenantId !== tenantId) throw new NotFoundError("Tenant");
    const email = this.memberEmail();
    const read = this.db
      .select({ ...ROLES_READ, incidentId: sql<number | null>`${incidents.id}`.as("access_incident_id") })
      .from(tenants)
      .leftJoin(tenantMembers, tenantMemberOn(email))
      .leftJoin(incidents, and(eq(incidents.tenantId, tenants.id), eq(incidents.id, incidentId)))
      .leftJoin(
        projectMembers,
        and(eq(projectMembers.projectId, incidents.projectId), eq(projectMembers.userEmail, email)),
      )
      .where(eq(tenants.id, tenantId))
      .limit(1);
    const allowed = exists(
      this.db
        .select({ one: sql`1` })
        .from(incidents)
        .where(
          and(
            eq(incidents.tenantId, tenantId),
            eq(incidents.id, incidentId),
            this.roleInProject(tenantId, incidents.projectId, need),
          ),
        ),
    );
    const settle = (rows: (RolesRead & { incidentId: number | null })[]) => {
      const missing = () => new NotFoundError("Incident");
      return this.settleRoles(tenantId, need, missing, rows[0], rows[0]?.incidentId);
    };
    return { read, allowed, settle };
  }

  /**
   * The caller's access to an asset addressed by id alone (e.g. /configuration/assets/{assetId}/…):
   * the asset must be the tenant's, and the caller needs `need` in the asset's project. An asset
   * the caller cannot see is a 404, like one that does not exist. Asset, project and membership
   * are one query, read together with the tenant.
   */
  async asset(tenantId: string, assetId: number, need: ProjectRole): Promise<AssetAccess> {
    return this.assetWith(tenantId, assetId, need, "row");
  }

  /**
   * As asset(), with the asset's row but its attributes (assetHeadColumns): for the routes that do
   * not show them (uploads, scan jobs), which need not read and parse the latest scan's statistics.
   */
  async assetHead(tenantId: string, assetId: number, need: ProjectRole): Promise<AssetAccess<AssetHead>> {
    return this.assetWith(tenantId, assetId, need, "head");
  }

  /**
   * As asset(), with the db_type of the asset's connection (what GET one asset shows) read by the
   * same query: one D1 call, where a second query beside the check cost a call more.
   */
  async assetWithConnectionType(tenantId: string, assetId: number, need: ProjectRole): Promise<AssetAccess> {
    return this.assetWith(tenantId, assetId, need, "connectionType");
  }

  private async assetWith<A extends AssetHead>(
    tenantId: string,
    assetId: number,
    need: ProjectRole,
    read: AssetRead,
  ): Promise<AssetAccess<A>> {
    const at = (r: AssetRead) => `asset.${r}\n${tenantId}\n${assetId}`;
    const done = SERVES[read].map(at).find((key) => this.reads.has(key));
    const [t, rows] = await Promise.all([
      this.tenant(tenantId),
      this.readOnce(done ?? at(read), () => this.readAsset(tenantId, assetId, read)),
    ]);
    const row = rows[0];
    const missing = () => new NotFoundError("Asset");
    if (!row) throw missing();
    const asset = (row.connectionId === null ? row.asset : { ...row.asset, dbType: row.connectionDbType }) as A;
    return { ...t, project: row.project, projectRole: this.projectRole(t, row.role, need, missing), asset };
  }

  /** The asset with its project and the caller's membership, in one query. */
  private readAsset(tenantId: string, assetId: number, read: AssetRead) {
    const columns = read === "head" ? assetHeadColumns : assets;
    const connectionType = read === "connectionType";
    const key = `${read === "head" ? "access.assetHead" : "access.asset"}${connectionType ? ".dbType" : ""}`;
    const query = preparedOnce(this.db, key, () => {
      const byId = this.db
        .select({
          asset: columns,
          project: projects,
          role: projectMembers.role,
          connectionId: connectionType ? connections.id : sql<null>`null`,
          connectionDbType: connectionType ? connections.dbType : sql<null>`null`,
        })
        .from(assets)
        .innerJoin(projects, and(eq(projects.tenantId, assets.tenantId), eq(projects.id, assets.projectId)))
        .leftJoin(projectMembers, membershipOn)
        .$dynamic();
      const joined = connectionType
        ? byId.leftJoin(
            connections,
            and(eq(connections.tenantId, assets.tenantId), eq(connections.id, assets.connectionId)),
          )
        : byId;
      return joined
        .where(and(eq(assets.tenantId, sql.placeholder("tenant")), eq(assets.id, sql.placeholder("id"))))
        .limit(1)
        .prepare();
    });
    return allRows(query, { tenant: tenantId, id: assetId, email: this.memberEmail() });
  }

  /**
   * The caller's access to an incident: it must be the tenant's, and the caller needs `need` in
   * its project; one it cannot see is a 404 like one that does not exist. The incident, its
   * project and the membership are one query.
   */
  async incident(tenantId: string, incidentId: number, need: ProjectRole): Promise<IncidentAccess> {
    const query = preparedOnce(this.db, "access.incident", () =>
      this.db
        .select({ incident: incidents, project: projects, role: projectMembers.role })
        .from(incidents)
        .innerJoin(projects, and(eq(projects.tenantId, incidents.tenantId), eq(projects.id, incidents.projectId)))
        .leftJoin(projectMembers, membershipOn)
        .where(and(eq(incidents.tenantId, sql.placeholder("tenant")), eq(incidents.id, sql.placeholder("id"))))
        .limit(1)
        .prepare(),
    );
    const [t, rows] = await Promise.all([
      this.tenant(tenantId),
      this.readOnce(`incident\n${tenantId}\n${incidentId}`, () =>
        allRows(query, { tenant: tenantId, id: incidentId, email: this.memberEmail() }),
      ),
    ]);
    const row = rows[0];
    const missing = () => new NotFoundError("Incident");
    if (!row) throw missing();
    const projectRole = this.projectRole(t, row.role, need, missing);
    return { ...t, project: row.project, projectRole, incident: row.incident };
  }

  /** A read of this request's checks, made once: a second check of the same resource shares it. */
  private readOnce<T>(key: string, read: () => Promise<T>): Promise<T> {
    let pending = this.reads.get(key) as Promise<T> | undefined;
    if (!pending) {
      pending = read();
      this.reads.set(key, pending);
    }
    return pending;
  }

  /**
   * Ids of the projects of a tenant the caller can read: undefined means all of them
   * (tenant admins), otherwise the caller's memberships.
   */
  async readableProjectIds(tenantId: string): Promise<number[] | undefined> {
    const t = await this.tenant(tenantId);
    if (t.role === "TENANT_ADMIN" || t.principal.kind !== "user") return undefined;
    // A copy: the list may be the isolate's cached one.
    return [...(this.memberOf.get(tenantId) ?? [])];
  }
}

/**
 * What an in-batch check reads beside its resource: the tenant, the caller's tenant role and its
 * role in the resource's project. Aliased: in a batch drizzle reads each row by its column names,
 * where two `role`s (or `id`s) would be one.
 */
const ROLES_READ = {
  tenant: sql<string>`${tenants.id}`.as("access_tenant"),
  tenantRole: sql<TenantRole | null>`${tenantMembers.role}`.as("access_tenant_role"),
  role: sql<ProjectRole | null>`${projectMembers.role}`.as("access_project_role"),
};
type RolesRead = { tenantRole: TenantRole | null; role: ProjectRole | null };

/** The tenant-membership join of the in-batch checks: the row of the user `email` ("" for others). */
const tenantMemberOn = (email: string) =>
  and(eq(tenantMembers.tenantId, tenants.id), eq(tenantMembers.userEmail, email));

/**
 * The project-membership join of the access queries: the role of the user named by the `email`
 * placeholder ("" for callers who are not users, whom no membership row names).
 */
const membershipOn = and(
  eq(projectMembers.projectId, projects.id),
  eq(projectMembers.userEmail, sql.placeholder("email")),
);

/**
 * Runs `read` beside the access check `check`, so both share one round trip's wait, and answers
 * what it read only once the check has passed: a failed check is the answer (404, 403) whatever
 * the read did, and what was read for a caller without access is dropped unseen. `read` must be
 * confined to the tenant like any query, and must not write.
 */
export async function readBesideCheck<T>(check: Promise<unknown>, read: () => Promise<T>): Promise<T> {
  const reading = Promise.resolve().then(read);
  // Handled here: while the check is awaited, a failed read must not count as an unhandled rejection
  // (it is still answered below if the check passes; if the check fails, the check's error is).
  reading.catch(() => {});
  await check;
  return reading;
}
