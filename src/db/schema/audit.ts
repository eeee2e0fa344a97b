import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One write to the API (every POST, PUT, PATCH and DELETE under a tenant): who, with which
 * credential, what, when and how it ended. Kept per the tenant's data_ttl.
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id").notNull(),
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
    requestId: text("request_id").notNull(),
  },
  (t) => [index("audit_events_tenant_at_idx").on(t.tenantId, t.at, t.id)],
);
