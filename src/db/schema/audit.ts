import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * The tenant's audit log (docs/security.md, "Audit log"; decision 0014), kept per the tenant's
 * data_ttl. Two kinds of row:
 *
 * - a write to the configuration (every POST, PUT, PATCH and DELETE under a tenant but the data
 *   plane's): one row per request, `tally` null, `count` 1;
 * - the data plane's requests a pipeline makes every scan (uploads, scan triggers, the alerts of a
 *   job): one row per tenant, UTC day, method, route, path, actor, credential and status, named by
 *   `tally`, counted in place (`count`, `at` the first, `last_at` and `request_id` the last); an
 *   accepted one's path is its route's (decision 0015), so one row counts every asset's.
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id").notNull(),
    /** When the write was answered; for a tally, the first of its requests. */
    at: text("at").notNull(),
    /** The e-mail of the person behind the credential. */
    actor: text("actor").notNull(),
    /** The credential used: "token", "api-key:key_…" or "platform-admin". */
    credential: text("credential").notNull(),
    method: text("method").notNull(),
    /** The route pattern (e.g. /api/backend/:tenant/connections/:id) and the concrete path. */
    route: text("route").notNull(),
    path: text("path").notNull(),
    status: integer("status").notNull(),
    /** The request's id; for a tally, the last request's. */
    requestId: text("request_id").notNull(),
    /** Requests the row stands for: 1, or a tally's count. */
    count: integer("count").notNull().default(1),
    /** A tally's last request (null on a one-request row: `at`). */
    lastAt: text("last_at"),
    /**
     * A tally's name: 22 base64url characters of the SHA-256 of its tenant, day, method, route,
     * path, actor, credential and status (src/audit/audit-log.ts); null on a one-request row.
     */
    tally: text("tally"),
  },
  (t) => [
    index("audit_events_tenant_at_idx").on(t.tenantId, t.at, t.id),
    uniqueIndex("audit_events_tally_uq").on(t.tenantId, t.tally).where(sql`${t.tally} is not null`),
  ],
);
