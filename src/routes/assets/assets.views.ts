import { connectionDbTypes, type Lineage, loadLineage } from "../../catalog/assets";
import type { Db } from "../../db";
import type { AssetRow } from "../../db/schema";
/** Which extra fields a list or get adds (with_attributes, with_schedules, with_lineage). */
export interface AssetViewFlags {
  attributes: boolean;
  schedules: boolean;
  lineage: boolean;
}

export const NO_EXTRAS: AssetViewFlags = { attributes: false, schedules: false, lineage: false };

export function assetView(row: AssetRow, flags: AssetViewFlags = NO_EXTRAS, lineage?: Lineage) {
  return {
    id: row.id,
    project_id: row.projectId,
    name: row.name,
    description: row.description,
    type: row.type,
    options: row.options,
    payload: row.payload,
    created_by: row.createdBy,
    created_at: row.createdAt,
    connection_id: row.connectionId,
    db_type: row.dbType,
    ...(flags.attributes ? { attributes: row.attributes ?? [] } : {}),
    ...(flags.schedules
      ? {
          scheduled_upload: row.scheduleCron
            ? {
                cron: row.scheduleCron,
                timezone: row.scheduleTimezone,
                enabled: row.scheduleEnabled,
                next_run_at: row.nextRunAt,
              }
            : null,
        }
      : {}),
    ...(flags.lineage ? (lineage ?? { parents: [], children: [] }) : {}),
  };
}

/**
 * Views of rows with the extras asked for; lineage of all rows is read in two queries, and each
 * asset's db_type from its connection (one query), so it always says what the connection is —
 * unless `dbTypesRead`: the rows carry their connection's db_type already (listAssets).
 */
export async function assetViews(
  db: Db,
  tenantId: string,
  rows: AssetRow[],
  flags: AssetViewFlags,
  dbTypesRead = false,
) {
  const ids = rows.map((r) => r.id);
  const [lineage, dbTypes] = await Promise.all([
    flags.lineage ? loadLineage(db, tenantId, ids) : undefined,
    dbTypesRead
      ? new Map<number, string | null>()
      : connectionDbTypes(
          db,
          tenantId,
          rows.map((r) => r.connectionId),
        ),
  ]);
  return rows.map((r) => ({
    ...assetView(r, flags, lineage?.get(r.id)),
    db_type: dbTypes.has(r.connectionId) ? dbTypes.get(r.connectionId)! : r.dbType,
  }));
}
