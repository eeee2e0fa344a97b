import type { ConnectionRow } from "../../db/schema";
/** Public view of a connection (spec 2.2): the credential is left out. */
export function connectionView(row: ConnectionRow) {
  return {
    id: row.id,
    project_id: row.projectId,
    name: row.name,
    scope: row.projectId === null ? ("GLOBAL" as const) : ("PROJECT" as const),
    created_by: row.createdBy,
    created_at: row.createdAt,
    type: row.type,
    payload: row.payload,
    db_type: row.dbType,
  };
}
