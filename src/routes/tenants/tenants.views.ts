import type { TenantRow } from "../../db/schema";
/** Public view of a tenant configuration (2.8): secrets left out. */
export function tenantView(row: TenantRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    storage: (row.storage ?? null) as {
      type: string;
      payload: {
        bucket?: string;
        security?: { storage_account?: string };
        region?: string;
        account_id?: string;
        endpoint?: string;
      };
    } | null,
    data_ttl: row.dataTtl,
    free_upload_limit: row.freeUploadLimit,
    use_information_schema: row.useInformationSchema,
    "dataproc-config": row.dataprocConfig ?? null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
