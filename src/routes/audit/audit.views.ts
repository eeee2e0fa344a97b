import type { z } from "@hono/zod-openapi";
import type { AuditEventRow } from "../../audit/audit-log";
import type { AuditEventSchema } from "./audit.schemas";

export function auditEventView(row: AuditEventRow): z.infer<typeof AuditEventSchema> {
  return {
    id: row.id,
    at: row.at,
    last_at: row.lastAt ?? row.at,
    count: row.count,
    actor: row.actor,
    credential: row.credential,
    method: row.method as z.infer<typeof AuditEventSchema>["method"],
    route: row.route,
    path: row.path,
    status: row.status,
    outcome: row.status < 400 ? "success" : "failure",
    request_id: row.requestId,
  };
}
