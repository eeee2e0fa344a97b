import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../../app-env";
import { recordWrite } from "../../audit/audit-log";
import { TENANT_ID_PATTERN } from "../params";

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

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
 * Records every write under a tenant by an authenticated caller in the tenant's audit log, once
 * the answer is known. A 404 is not recorded: the tenant, or the resource, is not the caller's to
 * see, so nothing happened in it (and another tenant's log must not learn the caller's name).
 * A failure to record is logged and does not change the answer.
 */
export const auditWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (!WRITES.has(c.req.method) || c.res.status === 404) return;
  const principal = c.var.principal;
  if (!principal) return;
  const route = matchedRoutes(c).find((r) => r.method !== "ALL")?.path;
  if (!route) return;
  const path = new URL(c.req.url).pathname;
  const tenantId = tenantOf(route, path);
  if (!tenantId) return;
  try {
    await recordWrite(c.var.db, {
      tenantId,
      principal,
      method: c.req.method,
      route,
      path,
      status: c.res.status,
      requestId: c.var.requestId,
    });
  } catch (e) {
    console.error(JSON.stringify({ event: "audit_write_failed", request_id: c.var.requestId, error: String(e) }));
  }
};
