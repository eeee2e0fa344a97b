import { asc, eq, gt } from "drizzle-orm";
import type { Db } from "../db";
import { tenants } from "../db/schema";
import type { SecretBox } from "../lib/crypto";
import { nowIso } from "../lib/time";
import type { TenantInput } from "../routes/tenants/tenants.schemas";

export type TenantRow = typeof tenants.$inferSelect;

/** The secret parts of a tenant's storage, kept sealed in `storage_secret`. */
interface StorageSecret {
  credentials?: Record<string, unknown>;
  sas_key?: string;
}

const storageAad = (tenantId: string) => `tenant:${tenantId}:storage`;

/** Public view of a tenant configuration (2.8): secrets left out. */
export function tenantView(row: TenantRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    storage: (row.storage ?? null) as {
      type: string;
      payload: { bucket?: string; security?: { storage_account?: string } };
    } | null,
    data_ttl: row.dataTtl,
    free_upload_limit: row.freeUploadLimit,
    use_information_schema: row.useInformationSchema,
    "dataproc-config": row.dataprocConfig ?? null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Creates or replaces a tenant's configuration; storage secrets are sealed before they are stored. */
export async function putTenant(
  db: Db,
  box: SecretBox,
  id: string,
  input: TenantInput,
): Promise<{ row: TenantRow; created: boolean }> {
  const existing = await db.query.tenants.findFirst({ where: eq(tenants.id, id), columns: { createdAt: true } });
  const now = nowIso();
  let storage: Record<string, unknown> | null = null;
  let storageSecret: string | null = null;
  if (input.storage) {
    const { credentials, security, bucket } = input.storage.payload;
    const secret: StorageSecret = {
      ...(credentials ? { credentials } : {}),
      ...(security?.sas_key ? { sas_key: security.sas_key } : {}),
    };
    storage = {
      type: input.storage.type,
      payload: {
        ...(bucket ? { bucket } : {}),
        ...(security?.storage_account ? { security: { storage_account: security.storage_account } } : {}),
      },
    };
    if (Object.keys(secret).length > 0) storageSecret = JSON.stringify(await box.seal(secret, storageAad(id)));
  }
  const row: TenantRow = {
    id,
    name: input.name,
    description: input.description,
    storage,
    storageSecret,
    dataTtl: input.data_ttl,
    freeUploadLimit: input.free_upload_limit,
    useInformationSchema: input.use_information_schema,
    dataprocConfig: input["dataproc-config"] ?? null,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  const { id: _id, createdAt: _c, ...changes } = row;
  await db.insert(tenants).values(row).onConflictDoUpdate({ target: tenants.id, set: changes });
  return { row, created: !existing };
}

/** The decrypted storage secrets of a tenant (for the scan pipeline); never returned by the API. */
export async function openTenantStorageSecret(box: SecretBox, row: TenantRow): Promise<StorageSecret> {
  if (!row.storageSecret) return {};
  return box.open<StorageSecret>(JSON.parse(row.storageSecret), storageAad(row.id));
}

export function getTenant(db: Db, id: string) {
  return db.query.tenants.findFirst({ where: eq(tenants.id, id) });
}

/** One page of tenants in id order (`limit + 1` rows). */
export function listTenants(db: Db, limit: number, after?: string) {
  return db.query.tenants.findMany({
    where: after === undefined ? undefined : gt(tenants.id, after),
    orderBy: asc(tenants.id),
    limit: limit + 1,
  });
}
