import type { TenantRole } from "../db/schema";

/**
 * Memberships verified lately, kept in the isolate so that an authenticated read need not ask D1
 * who its caller is before it reads: per user and tenant, the tenant role and the projects the
 * user is a member of (a role in a project is read with the project, by the request that needs
 * it). Only what authorizes is kept, never a resource: rows are read fresh by every request.
 * For the platform administrator and tenant keys, which hold every role, only that the tenant
 * exists is kept (tenants are never deleted).
 *
 * Revocation: every membership change made through the API (src/tenancy/projects.ts) forgets the
 * tenant's entries at once in the isolate that makes it; other isolates hold theirs for
 * ACCESS_CACHE_MS at most, so a removed member or a lowered role takes effect everywhere within
 * that time. A caller found not to be a member is never cached (adding a member is seen at once).
 *
 * Read your writes: each entry keeps the D1 bookmark of the read it came from (src/db/sessions.ts).
 * A request that sends a newer bookmark (it has seen a later state, e.g. its own membership change
 * made through another isolate, or read from a replica that was behind) does not use the entry
 * and reads its standing from D1, as its other reads do.
 */
export const ACCESS_CACHE_MS = 30_000;
const MAX_CACHED_ACCESS = 2000;

/** A user's standing in a tenant, as read from D1. */
export interface CachedAccess {
  role: TenantRole;
  /** The projects of the tenant the user is a member of. */
  projectIds: readonly number[];
}

const entries = new Map<string, { access: CachedAccess; until: number; bookmark: string | undefined }>();
/** Bumped by every membership change in this isolate: an entry read from D1 before it is not kept. */
let generation = 0;

/** The entry of a user, or of every caller who holds all roles (email undefined). */
const entryKey = (tenantId: string, email: string | undefined) => `${tenantId}\n${email ?? ""}`;

/**
 * The user's cached standing in the tenant, while it is fresh and was read at `notBefore` or
 * later (the bookmark the request sent; bookmarks sort oldest to newest).
 */
export function recallAccess(
  tenantId: string,
  email: string | undefined,
  notBefore?: string,
): CachedAccess | undefined {
  const key = entryKey(tenantId, email);
  const hit = entries.get(key);
  if (!hit) return undefined;
  if (hit.until <= Date.now()) {
    entries.delete(key);
    return undefined;
  }
  if (notBefore !== undefined && (hit.bookmark === undefined || hit.bookmark < notBefore)) return undefined;
  return hit.access;
}

/** The generation to pass to rememberAccess with what is read now. */
export const accessGeneration = () => generation;

/**
 * Keeps a standing read from D1 while it is fresh, unless memberships changed in this isolate
 * since the read began (`readAt`, from accessGeneration()): such a read may predate the change.
 * `bookmark` is the database state the read saw.
 */
export function rememberAccess(
  tenantId: string,
  email: string | undefined,
  access: CachedAccess,
  readAt: number,
  bookmark?: string,
): void {
  if (readAt !== generation) return;
  if (entries.size >= MAX_CACHED_ACCESS) entries.delete(entries.keys().next().value!);
  entries.set(entryKey(tenantId, email), { access, until: Date.now() + ACCESS_CACHE_MS, bookmark });
}

/** Forgets every cached standing in a tenant: its memberships changed. */
export function forgetTenantAccess(tenantId: string): void {
  generation++;
  const prefix = `${tenantId}\n`;
  for (const key of entries.keys()) if (key.startsWith(prefix)) entries.delete(key);
}
