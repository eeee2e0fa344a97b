import { and, eq, isNull, or } from "drizzle-orm";
import type { Db } from "../db";
import { connections } from "../db/schema";

export type ConnectionRow = typeof connections.$inferSelect;

/**
 * A connection usable from a project: one of that project, or a GLOBAL one of the tenant.
 * undefined when it does not exist, is another tenant's, or belongs to another project.
 */
export function findVisibleConnection(db: Db, tenantId: string, projectId: number, connectionId: number) {
  return db.query.connections.findFirst({
    where: and(
      eq(connections.tenantId, tenantId),
      eq(connections.id, connectionId),
      or(isNull(connections.projectId), eq(connections.projectId, projectId)),
    ),
  });
}
