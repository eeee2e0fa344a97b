import { createHash } from "node:crypto";
import { and, desc, eq, gte, inArray, isNull, lt, lte, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
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
  /** When it was answered (ISO 8601 UTC); now when absent. */
  at?: string;
  /**
   * A data-plane request (an upload, a scan trigger, the alerts of a job: decision 0014), counted
   * in its day's tally rather than recorded as a row of its own: per route when answered 2xx, per
   * path otherwise (decision 0015).
   */
  tally?: boolean;
}

const DAY_MS = 86_400_000;

/**
 * The path a tally of route `route` names when its requests were answered 2xx (decision 0015): the
 * route template with the tenant's segment filled in from `path` (e.g.
 * `/v2/acme/sources/:source_id/batch_data`), so one tally counts a day's accepted requests of
 * every asset — each of which has its own scan job — and its `:` segments show it names no asset.
 */
export function routeLevelPath(route: string, path: string): string {
  const segments = path.split("/");
  return route
    .split("/")
    .map((segment, i) => (segment === ":tenant" ? (segments[i] ?? segment) : segment))
    .join("/");
}

/** Whether `status` is a success the data plane counts per route, not per path (decision 0015). */
function countedPerRoute(w: AuditWrite): boolean {
  return w.tally === true && w.status >= 200 && w.status < 300;
}

/** The path `w` is recorded under: the route-level one for a 2xx tally, else the path called. */
function recordedPath(w: AuditWrite): string {
  return countedPerRoute(w) ? routeLevelPath(w.route, w.path) : w.path;
}

/**
 * The name of the tally `w` is counted in: the SHA-256 of what makes a tally one (tenant, UTC day,
 * method, route, path as recorded — the route's for a 2xx, decision 0015 — actor, credential,
 * status), its first 132 bits in base64url. Two different tallies share a name only by a SHA-256
 * collision of their descriptions.
 */
export function tallyName(w: AuditWrite, at: string): string {
  const what = [w.tenantId, at.slice(0, 10), w.method, w.route, recordedPath(w), actorName(w.principal)];
  what.push(credentialName(w.principal), String(w.status));
  return createHash("sha256").update(JSON.stringify(what)).digest("base64url").slice(0, 22);
}

/** The audit row of a write (a tally's first request, if it is one). */
function auditRow(w: AuditWrite): typeof auditEvents.$inferInsert {
  const at = w.at ?? nowIso();
  return {
    tenantId: w.tenantId,
    at,
    actor: actorName(w.principal),
    credential: credentialName(w.principal),
    method: w.method,
    route: w.route,
    path: recordedPath(w),
    status: w.status,
    requestId: w.requestId,
    ...(w.tally ? { count: 1, lastAt: at, tally: tallyName(w, at) } : {}),
  };
}

/**
 * The statement that records `w` where `when` holds: a row of its own, or one more request in its
 * tally (the day's row inserted, or counted up in place with the request as its last).
 */
function recordStatement(db: Db, w: AuditWrite, when: SQL | undefined) {
  const insert = insertWhere(db, auditEvents, auditRow(w), when);
  if (!w.tally) return insert;
  return insert.onConflictDoUpdate({
    target: [auditEvents.tenantId, auditEvents.tally],
    targetWhere: sql`${auditEvents.tally} is not null`,
    set: {
      count: sql`${auditEvents.count} + 1`,
      // Never before the first (two requests may commit in the other order than they were answered).
      lastAt: sql`max(coalesce(${auditEvents.lastAt}, ${auditEvents.at}), excluded.last_at)`,
      requestId: sql`excluded.request_id`,
    },
  });
}

/** Records one write; the time is now. */
export async function recordWrite(db: Db, w: AuditWrite): Promise<void> {
  await recordStatement(db, w, undefined);
}

/**
 * The statement that records `w` in a batch, where `when` holds on the state the batch's earlier
 * statements left: by default, if the statement just before it changed a row (SQLite's
 * `changes()`: the rows the last INSERT, UPDATE or DELETE changed), else e.g. the access
 * condition of a write that may change nothing and still succeed. The write and its audit row are
 * then one round trip and one transaction; a write refused by its conditions records nothing
 * here, and its answer is audited after it (correctWrite).
 */
export function recordWriteAfterChange(db: Db, w: AuditWrite, when: SQL = sql`changes() > 0`) {
  return recordStatement(db, w, when);
}

/**
 * Records `w` as answering `status` instead, when a batch may have recorded it with `w.status`
 * (recordWriteAfterChange) and the request then answered otherwise, e.g. a 500 because the scan's
 * queue refused the job after its batch committed: one batch. What the batch recorded is found by
 * the request's id: its own row gets the status; in a tally the request was last counted in, it is
 * counted out (the row goes with its last request), so no row claims an answer that was not given.
 * Where nothing is found (the batch did not record it, or a later request of the same tally was
 * counted since), the answer is recorded as for any request.
 */
export async function correctWrite(db: Db, w: AuditWrite, status: number): Promise<void> {
  const answered = { ...w, status, at: nowIso() };
  const mine = and(eq(auditEvents.tenantId, w.tenantId), eq(auditEvents.requestId, w.requestId));
  if (!w.tally) {
    await db.batch([
      db
        .update(auditEvents)
        .set({ status })
        // By the request's id alone: a handler may build the row for two answers (e.g. 201 or 200).
        .where(and(mine, isNull(auditEvents.tally))),
      recordStatement(db, answered, sql`changes() = 0`),
    ]);
    return;
  }
  const tally = and(mine, eq(auditEvents.tally, tallyName(w, w.at ?? answered.at)));
  const statements: [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]] = [
    db.delete(auditEvents).where(and(tally, eq(auditEvents.count, 1))),
    db
      .update(auditEvents)
      .set({ count: sql`${auditEvents.count} - 1` })
      .where(and(tally, sql`${auditEvents.count} > 1`)),
    recordStatement(db, answered, undefined),
  ];
  await db.batch(statements);
}

export interface AuditFilters {
  actor?: string;
  method?: string;
  /** "success" (status < 400) or "failure". */
  outcome?: "success" | "failure";
  from?: string;
  to?: string;
  /**
   * Only entries recorded under one of these paths: a path called and, where it is a data-plane
   * route's, the route-level path its accepted requests are counted under (decision 0015).
   */
  paths?: string[];
}

/**
 * A tenant's audit events, newest first (by id: a tally counted up in place keeps its place), `limit
 * + 1` rows after the event id `before`. The time filters take a tally whose span (`at` to
 * `last_at`, within one UTC day) overlaps them.
 */
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
  if (f.from !== undefined) {
    // A tally's span is within a day: the bound on `at` lets the index find it.
    const dayBefore = new Date(Date.parse(f.from) - DAY_MS).toISOString();
    where.push(gte(auditEvents.at, dayBefore), sql`coalesce(${auditEvents.lastAt}, ${auditEvents.at}) >= ${f.from}`);
  }
  if (f.to !== undefined) where.push(lte(auditEvents.at, f.to));
  if (f.paths !== undefined) where.push(inArray(auditEvents.path, f.paths));
  if (before !== undefined) where.push(lt(auditEvents.id, before));
  return db
    .select()
    .from(auditEvents)
    .where(and(...where))
    .orderBy(desc(auditEvents.id))
    .limit(limit + 1);
}
