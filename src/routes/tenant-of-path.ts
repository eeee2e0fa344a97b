import { TenantId } from "./params";

/**
 * Where a route's path names its tenant (`{tenant}`, or `{tenantId}` of the administrator's
 * tenant routes), as the routes spell them: what the request's database is chosen by, before
 * routing (src/app.ts, src/db/shards.ts). test/routes/tenant-of-path.test.ts walks every route of
 * the OpenAPI document against it.
 */
const TENANT_IN_PATH = [
  /^\/api\/(?:backend|data)\/v2\/([^/]+)\//,
  /^\/api\/(?:backend|data)\/([^/]+)\//,
  /^\/backend\/private\/configuration\/tenants\/([^/]+)\/?$/,
  /^\/configuration\/tenants\/([^/]+)\//,
  /^\/auth\/([^/]+)\/apiKeys(?:\/|$)/,
  /^\/v2\/([^/]+)\//,
  /^\/([^/]+)\/configuration\//,
];

/** The tenant a request's path names; undefined when it names none (or nothing that can be a tenant id). */
export function tenantOfPath(path: string): string | undefined {
  for (const pattern of TENANT_IN_PATH) {
    const raw = pattern.exec(path)?.[1];
    if (raw === undefined) continue;
    let id: string;
    try {
      id = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    return TenantId.safeParse(id).success ? id : undefined;
  }
  return undefined;
}
