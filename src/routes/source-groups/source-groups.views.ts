import type { SourceGroupRow } from "../../db/schema";
export function sourceGroupView(row: SourceGroupRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    connection_id: row.connectionId,
    db_type: row.dbType,
    project_id: row.projectId,
    scheduled_upload: row.scheduledUpload ?? "",
  };
}
