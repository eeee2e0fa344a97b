import type { ProjectRow } from "../../db/schema";
export function projectView(row: ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    created_by: row.createdBy,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
