import { asc, eq, gt } from "drizzle-orm";
import type { Db } from "../db";
import type { TenantRow } from "../db/schema";
import { tenants } from "../db/schema";
import type { SecretBox } from "../lib/crypto";
import { InvalidInputError } from "../lib/errors";
import { nowIso } from "../lib/time";

/** A tenant's configuration (spec 4.1) as the platform administrator sets it; validated at the edge. */
export interface TenantConfiguration {
  /** Omitted: the stored name, or the tenant id for a new tenant. */
  name?: string;
  description: string;
  /** The tenant's own bucket; `credentials` and `security.sas_key` are write-only secrets. */
  storage?: {
    type: string;
    payload: {
      bucket?: string;
      /** Omitted: the stored ones are kept; null clears them. */
      credentials?: Record<string, unknown> | null;
      security?: { storage_account?: string; sas_key?: string | null };
      region?: string;
      account_id?: string;
      endpoint?: string;
    };
  } | null;
  /** Days scan data and results are kept. */
  data_ttl: number;
  /** Bytes one upload may carry. */
  free_upload_limit: number;
  use_information_schema: boolean;
  "dataproc-config"?: Record<string, unknown> | null;
}

/** The public part of a tenant's storage, as stored in `storage` and returned. */
export interface TenantStorage {
  type: "GCS" | "S3" | "AZURE" | "R2";
  payload: {
    bucket: string;
    security?: { storage_account: string };
    region?: string;
    account_id?: string;
    endpoint?: string;
  };
}

/** The secret parts of a tenant's storage, kept sealed in `storage_secret`. */
export interface StorageSecret {
  credentials?: Record<string, unknown>;
  sas_key?: string;
}

const storageAad = (tenantId: string) => `tenant:${tenantId}:storage`;

/**
 * Creates or replaces a tenant's configuration; storage secrets are sealed before they are stored.
 * One batch (one transaction): the update of a stored tenant, then the insert of a new one (ON
 * CONFLICT DO NOTHING), so of concurrent first PUTs exactly one creates (201) and the others
 * replace (200); created_at stays the creator's, and an omitted name keeps the stored one. The
 * stored tenant is read first only when a storage secret is omitted: it is kept from the sealed
 * stored value (opened here, which SQL cannot do) while the storage's address is unchanged.
 */
export async function putTenant(
  db: Db,
  box: SecretBox,
  id: string,
  input: TenantConfiguration,
): Promise<{ row: TenantRow; created: boolean }> {
  const now = nowIso();
  const current = keepsStoredSecret(input.storage) ? await getTenant(db, id) : undefined;
  const { storage, storageSecret } = await storageColumns(box, id, input.storage ?? null, current);
  const changes = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    description: input.description,
    storage,
    storageSecret,
    dataTtl: input.data_ttl,
    freeUploadLimit: input.free_upload_limit,
    useInformationSchema: input.use_information_schema,
    dataprocConfig: input["dataproc-config"] ?? null,
    updatedAt: now,
  };
  const [[replaced], [inserted]] = await db.batch([
    db.update(tenants).set(changes).where(eq(tenants.id, id)).returning(),
    db
      .insert(tenants)
      .values({ id, ...changes, name: input.name ?? id, createdAt: now })
      .onConflictDoNothing()
      .returning(),
  ]);
  if (inserted) return { row: inserted, created: true };
  // Tenants are never deleted: the row the insert ran into is the one the update replaced.
  return { row: replaced!, created: false };
}

/** Whether a PUT's storage omits a secret, which then keeps the stored one (see storageColumns). */
function keepsStoredSecret(storage: TenantConfiguration["storage"]): boolean {
  return !!storage && (storage.payload.credentials === undefined || storage.payload.security?.sas_key === undefined);
}

type StorageInput = NonNullable<TenantConfiguration["storage"]>;

/** Where a storage's secrets may go: a changed type, bucket, account, region or endpoint needs them sent again. */
const storageAddress = (s: { type?: unknown; payload?: Record<string, unknown> } | null | undefined) =>
  JSON.stringify([
    s?.type,
    s?.payload?.bucket,
    (s?.payload?.security as { storage_account?: string })?.storage_account,
    s?.payload?.region,
    s?.payload?.account_id,
    s?.payload?.endpoint,
  ]);

/** The credential fields each type of storage signs in with (AZURE signs with security.sas_key). */
const CREDENTIAL_FIELDS: Record<string, readonly string[]> = {
  S3: ["access_key", "secret_key"],
  R2: ["access_key", "secret_key"],
  GCS: ["client_email", "private_key", "private_key_id"],
};

/** Problems with the credentials a storage will sign in with (sent or kept). */
function credentialProblems(type: string, credentials: Record<string, unknown> | undefined) {
  const fields = CREDENTIAL_FIELDS[type] ?? [];
  const missing = fields.filter((f) => typeof credentials?.[f] !== "string" || credentials[f] === "");
  if (missing.length === 0) return [];
  return [{ field: "storage.payload.credentials", message: `${type} needs ${missing.join(", ")} (non-empty strings)` }];
}

/**
 * The storage columns for `input`: the public part as JSON, the secrets sealed. A secret left out
 * keeps its stored value (so GET → PUT round-trips without the write-only fields), but only while
 * the storage's address is unchanged: a stored credential goes only where it was entered for.
 * `null` clears a secret.
 */
async function storageColumns(box: SecretBox, id: string, input: StorageInput | null, current?: TenantRow) {
  if (!input) return { storage: null, storageSecret: null };
  const { credentials, security, bucket, region, account_id, endpoint } = input.payload;
  const stored = current ? await openTenantStorageSecret(box, current) : {};
  const sameAddress = storageAddress(current?.storage as never) === storageAddress(input as never);
  const problems: { field: string; message: string }[] = [];
  const keep = <T>(sent: T | null | undefined, kept: T | undefined, field: string): T | undefined => {
    if (sent === null) return undefined;
    if (sent !== undefined) return sent;
    if (kept !== undefined && !sameAddress) {
      problems.push({ field, message: "must be sent again when type, bucket or storage_account changes" });
    }
    return sameAddress ? kept : undefined;
  };
  const secret: StorageSecret = {};
  const creds = keep(credentials, stored.credentials, "storage.payload.credentials");
  if (creds) secret.credentials = creds;
  const sas = keep(security?.sas_key, stored.sas_key, "storage.payload.security.sas_key");
  if (sas) secret.sas_key = sas;
  if (input.type === "AZURE" && !secret.sas_key && !problems.some((p) => p.field.endsWith("sas_key"))) {
    problems.push({ field: "storage.payload.security.sas_key", message: "is required for AZURE" });
  }
  if (!problems.some((p) => p.field.endsWith("credentials"))) {
    problems.push(...credentialProblems(input.type, secret.credentials));
  }
  if (input.type === "R2" && !account_id && !endpoint) {
    problems.push({ field: "storage.payload.account_id", message: "is required for R2 (or an endpoint)" });
  }
  if (problems.length > 0) throw new InvalidInputError(problems);
  const storage = {
    type: input.type,
    payload: {
      ...(bucket ? { bucket } : {}),
      ...(security?.storage_account ? { security: { storage_account: security.storage_account } } : {}),
      ...(region ? { region } : {}),
      ...(account_id ? { account_id } : {}),
      ...(endpoint ? { endpoint } : {}),
    },
  };
  const storageSecret = Object.keys(secret).length > 0 ? JSON.stringify(await box.seal(secret, storageAad(id))) : null;
  return { storage, storageSecret };
}

/** The decrypted storage secrets of a tenant (for the scan pipeline); never returned by the API. */
export async function openTenantStorageSecret(
  box: SecretBox,
  row: Pick<TenantRow, "id" | "storageSecret">,
): Promise<StorageSecret> {
  if (!row.storageSecret) return {};
  return box.open<StorageSecret>(JSON.parse(row.storageSecret), storageAad(row.id));
}

/** The tenant, or undefined (a plain select: drizzle's relational findFirst costs several times its CPU). */
export async function getTenant(db: Db, id: string): Promise<TenantRow | undefined> {
  const [row] = await db.select().from(tenants).where(eq(tenants.id, id)).limit(1);
  return row;
}

/**
 * One page of the tenants of every shard's database in `dbs`, in id order (`limit + 1` rows): each
 * shard's page read at once, merged; a tenant that is moving (on two shards a moment) counted once.
 */
export async function listTenantsOf(dbs: readonly Db[], limit: number, after?: string): Promise<TenantRow[]> {
  if (dbs.length === 1) return listTenants(dbs[0]!, limit, after);
  const pages = await Promise.all(dbs.map((db) => listTenants(db, limit, after)));
  const byId = new Map(pages.flat().map((row) => [row.id, row]));
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit + 1);
}

/** One page of tenants in id order (`limit + 1` rows). */
export function listTenants(db: Db, limit: number, after?: string) {
  return db.query.tenants.findMany({
    where: after === undefined ? undefined : gt(tenants.id, after),
    orderBy: asc(tenants.id),
    limit: limit + 1,
  });
}
