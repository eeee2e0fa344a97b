import { type SQL, sql } from "drizzle-orm";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../../app-env";
import {
  type AuditWrite,
  correctWrite,
  recordWrite,
  recordWriteAfterChange,
  routeLevelPath,
} from "../../audit/audit-log";
import { isTenantMoving } from "../../db/shards";
import { nowIso } from "../../lib/time";
import { TENANT_ID_PATTERN } from "../params";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The data plane (decision 0014): the requests a pipeline makes every scan, by method and route
 * template. Each is counted in its day's tally (src/audit/audit-log.ts), not recorded as a row of
 * its own — per route when answered 2xx, per path when refused (decision 0015): the data uploads (every path), the scan trigger, and the alerts of a scan job or of
 * given ids (reads sent as POST). test/routes/audit-tallies.test.ts checks each is a route.
 */
export const DATA_PLANE = new Set([
  "POST /v2/:tenant/sources/:source_id/batch_data",
  "POST /api/data/:tenant/sources/:source/batch_data",
  "POST /api/data/v2/:tenant/sources/:source/batch_data",
  "POST /api/data/:tenant/batch_data",
  "POST /api/data/v2/:tenant/batch_data",
  "POST /api/backend/:tenant/configuration/assets/:assetId/scans",
  "POST /api/backend/:tenant/configuration/sources/:sourceID/alerts",
  "POST /api/backend/:tenant/configuration/alerts/by_filters",
]);

/**
 * The recorded paths a `path` filter of the audit log takes for `path` (decision 0015): the path
 * itself and, where it is a data-plane route's, the route-level path that route's accepted
 * requests are counted under, so a filter by an asset's path also shows the tally that may count
 * it, whose `:` segments say it names no asset.
 */
export function pathsFiltered(path: string): string[] {
  const segments = path.split("/");
  const paths = new Set([path]);
  for (const entry of DATA_PLANE) {
    const route = entry.slice(entry.indexOf(" ") + 1).split("/");
    const matches =
      route.length === segments.length &&
      route.every((s, i) => (s.startsWith(":") ? segments[i] !== "" : s === segments[i]));
    if (matches) paths.add(routeLevelPath(route.join("/"), path));
  }
  return [...paths];
}

/**
 * The tenant a route's `:tenant` segment names in `path`, if the route has one and the segment is
 * a tenant id (one that is not, or not even percent-encoded UTF-8, names no tenant to log in).
 */
function tenantOf(template: string, path: string): string | undefined {
  const at = template.split("/").indexOf(":tenant");
  if (at < 0) return undefined;
  const segment = path.split("/")[at];
  if (!segment) return undefined;
  try {
    const tenant = decodeURIComponent(segment);
    return TENANT_ID_PATTERN.test(tenant) ? tenant : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the audit log records of this request's write if it answers `status`; undefined when nothing
 * is recorded (not a write, a 404, no authenticated caller, no tenant in the route).
 */
function auditedWrite(c: Context<AppEnv>, status: number): AuditWrite | undefined {
  if (!WRITES.has(c.req.method) || status === 404) return undefined;
  const principal = c.get("principal");
  if (!principal) return undefined;
  const route = matchedRoutes(c).find((r) => r.method !== "ALL")?.path;
  if (!route) return undefined;
  const path = new URL(c.req.url).pathname;
  const tenantId = tenantOf(route, path);
  if (!tenantId) return undefined;
  const { method } = c.req;
  const tally = DATA_PLANE.has(`${method} ${route}`);
  return { tenantId, principal, method, route, path, status, requestId: c.get("requestId"), at: nowIso(), tally };
}

/**
 * The audit row of this write, to run in the handler's own batch right after the statement that
 * writes (src/audit/audit-log.ts, recordWriteAfterChange): recorded only if that statement changed
 * a row, or where `when` holds (a write that may change nothing and still answer `status`, e.g.
 * the caller's access), as answering `status`; built on `db`, the batch's database (the request's,
 * or its primary's). Once the batch has run, `auditedInBatch` tells the
 * middleware whether it did; if not (the write was refused or failed, or answered otherwise
 * after it, e.g. a queue that refused the job), the middleware records the answer, in place of
 * what the batch may have recorded (correctWrite).
 */
export function auditInBatch(c: Context<AppEnv>, status: number, when?: SQL, db = c.get("db")) {
  const w = auditedWrite(c, status);
  // Nothing to record (e.g. no tenant in the route): a statement that writes nothing keeps the batch's shape.
  if (!w) return db.select({ none: sql`0` }).from(sql`(select 0)`).where(sql`0`);
  c.set("auditInBatch", w);
  return recordWriteAfterChange(db, w, when);
}

/** After the handler's batch: whether it recorded the write with its status (see auditInBatch). */
export function auditedInBatch(c: Context<AppEnv>, status: number): void {
  c.set("auditedStatus", status);
}

/**
 * Records every write under a tenant by an authenticated caller in the tenant's audit log, once
 * the answer is known. A 404 is not recorded: the tenant, or the resource, is not the caller's to
 * see, so nothing happened in it (and another tenant's log must not learn the caller's name).
 * A write whose handler recorded it in its own batch with the status it answers is not recorded
 * again; one that answered otherwise than its batch may have recorded has that record corrected
 * (correctWrite). A failure to record is logged and does not change the answer.
 */
export const auditWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (c.get("auditedStatus") === c.res.status) return;
  // Refused because the tenant is moving between shards (src/db/shards.ts): nothing happened, and
  // the shard that refused it refuses the record too.
  if (c.error && isTenantMoving(c.error)) return;
  const w = auditedWrite(c, c.res.status);
  if (!w) return;
  try {
    const inBatch = c.get("auditInBatch");
    if (inBatch) await correctWrite(c.get("db"), inBatch, w.status);
    else await recordWrite(c.get("db"), w);
  } catch (e) {
    console.error(JSON.stringify({ event: "audit_write_failed", request_id: c.get("requestId"), error: String(e) }));
  }
};
