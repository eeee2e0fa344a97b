import { asc, eq, gt } from "drizzle-orm";
import type { Db } from "../db";
import type { TenantRow } from "../db/schema";
import { tenants } from "../db/schema";
import type { SecretBox } from "../lib/crypto";
import { nowIso } from "../lib/time";

/** A tenant's configuration (spec 4.1) as the platform administrator sets it; validated at the edge. */
export interface TenantConfiguration {
  name: string;
  description: string;
  /** The tenant's own bucket; `credentials` and `security.sas_key` are write-only secrets. */
  storage?: {
    type: string;
    payload: {
      bucket?: string;
      credentials?: Record<string, unknown>;
      security?: { storage_account?: string; sas_key?: string };
    };
  } | null;
  /** Days scan data and results are kept. */
  data_ttl: number;
  /** Bytes one upload may carry. */
  free_upload_limit: number;
  use_information_schema: boolean;
  "dataproc-config"?: Record<string, unknown> | null;
}

/** The secret parts of a tenant's storage, kept sealed in `storage_secret`. */
interface StorageSecret {
  credentials?: Record<string, unknown>;
  sas_key?: string;
}

const storageAad = (tenantId: string) => `tenant:${tenantId}:storage`;

/**
 * Creates or replaces a tenant's configuration; storage secrets are sealed before they are stored.
 * The insert decides `created` (ON CONFLICT DO NOTHING), so of concurrent first PUTs exactly one
 * creates (201) and the others replace (200); created_at stays the creator's.
 */
export async function putTenant(
  db: Db,
  box: SecretBox,
  id: string,
  input: TenantConfiguration,
): Promise<{ row: TenantRow; created: boolean }> {
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
  const changes = {
    name: input.name,
    description: input.description,
    storage,
    storageSecret,
    dataTtl: input.data_ttl,
    freeUploadLimit: input.free_upload_limit,
    useInformationSchema: input.use_information_schema,
    dataprocConfig: input["dataproc-config"] ?? null,
    updatedAt: now,
  };
  const [inserted] = await db
    .insert(tenants)
    .values({ id, ...changes, createdAt: now })
    .onConflictDoNothing()
    .returning();
  if (inserted) return { row: inserted, created: true };
  // Tenants are never deleted, so the row the insert ran into is there to replace.
  const [replaced] = await db.update(tenants).set(changes).where(eq(tenants.id, id)).returning();
  return { row: replaced!, created: false };
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
