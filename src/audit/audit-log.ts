import { and, desc, eq, gte, lt, lte, type SQL, sql } from "drizzle-orm";
import { actorName, PLATFORM_ADMIN, type Principal } from "../auth/principal";
import type { Db } from "../db";
import { insertWhere } from "../db/json-insert";
import { auditEvents } from "../db/schema";
import { nowIso } from "../lib/time";

export type AuditEventRow = typeof auditEvents.$inferSelect;

/** The credential a principal used, as the audit log names it (never a secret). */
export function credentialName(p: Principal): string {
  switch (p.kind) {
    case "admin":
      return PLATFORM_ADMIN;
    case "tenant_key":
      return `api-key:${p.keyId}`;
    case "user":
      return p.keyId ? `api-key:${p.keyId}` : "token";
  }
}

export interface AuditWrite {
  tenantId: string;
  principal: Principal;
  method: string;
  route: string;
  path: string;
  status: number;
  requestId: string;
}

/** The audit row of a write; the time is now. */
function auditRow(w: AuditWrite): typeof auditEvents.$inferInsert {
  return {
    tenantId: w.tenantId,
    at: nowIso(),
    actor: actorName(w.principal),
    credential: credentialName(w.principal),
    method: w.method,
    route: w.route,
    path: w.path,
    status: w.status,
    requestId: w.requestId,
  };
}

/** Records one write; the time is now. */
export async function recordWrite(db: Db, w: AuditWrite): Promise<void> {
  await db.insert(auditEvents).values(auditRow(w));
}

/**
 * The statement that records `w` in a batch, where `when` holds on the state the batch's earlier
 * statements left: by default, if the statement just before it changed a row (SQLite's
 * `changes()`: the rows the last INSERT, UPDATE or DELETE changed), else e.g. the access
 * condition of a write that may change nothing and still succeed. The write and its audit row are
 * then one round trip and one transaction; a write refused by its conditions records nothing
 * here, and its answer is audited after it.
 */
export function recordWriteAfterChange(db: Db, w: AuditWrite, when: SQL = sql`changes() > 0`) {
  return insertWhere(db, auditEvents, auditRow(w), when);
}

export interface AuditFilters {
  actor?: string;
  method?: string;
  /** "success" (status < 400) or "failure". */
  outcome?: "success" | "failure";
  from?: string;
  to?: string;
}

/** A tenant's audit events, newest first, `limit + 1` rows after the event id `before`. */
export function listAuditEvents(
  db: Db,
  tenantId: string,
  f: AuditFilters,
  limit: number,
  before?: number,
): Promise<AuditEventRow[]> {
  const where: (SQL | undefined)[] = [eq(auditEvents.tenantId, tenantId)];
  if (f.actor !== undefined) where.push(eq(auditEvents.actor, f.actor.toLowerCase()));
  if (f.method !== undefined) where.push(eq(auditEvents.method, f.method));
  if (f.outcome === "success") where.push(lt(auditEvents.status, 400));
  if (f.outcome === "failure") where.push(gte(auditEvents.status, 400));
  if (f.from !== undefined) where.push(gte(auditEvents.at, f.from));
  if (f.to !== undefined) where.push(lte(auditEvents.at, f.to));
  if (before !== undefined) where.push(lt(auditEvents.id, before));
  return db
    .select()
    .from(auditEvents)
    .where(and(...where))
    .orderBy(desc(auditEvents.id))
    .limit(limit + 1);
}
