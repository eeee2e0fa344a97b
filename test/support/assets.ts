import { env } from "cloudflare:workers";
import { createDb } from "../../src/db";
import { assets, connections } from "../../src/db/schema";
import { admin, type Credential, call } from "./api";
import { insertConnection } from "./connections";
import { createProject } from "./projects";
import { createTenant } from "./tenants";
import { unique } from "./unique";

/** A valid payload for an asset of each type. */
export const PAYLOADS: Record<string, Record<string, unknown>> = {
  DELTALAKE: { catalog: "main", schema: "sales", table: "orders" },
  SNOWFLAKE: { database: "DW", schema: "PUBLIC", table: "ORDERS" },
  BIGQUERY: { dataset: "sales", table: "orders" },
  REDSHIFT: { database: "dev", schema: "public", table: "orders" },
  GENERIC_JDBC: { schema: "public", table: "orders" },
  HIVE_ICEBERG: { database: "lake", table: "orders" },
  GCS: { path: "exports/orders/*.csv", format: "csv" },
  S3: { path: "exports/orders.parquet", format: "parquet" },
  AZURE: { path: "landing/orders-??.ndjson", format: "ndjson" },
};

export const assetsPath = (tenant: string, projectId: number) =>
  `/api/backend/${tenant}/configuration/projects/${projectId}/assets`;

/** Creates an asset through the API (a valid one of `type` unless overridden); returns the body. */
export async function createAsset(
  tenant: string,
  projectId: number,
  connectionId: number,
  overrides: Record<string, unknown> = {},
  as: Credential = admin,
): Promise<any> {
  const type = (overrides.type as string | undefined) ?? "DELTALAKE";
  const res = await call("POST", assetsPath(tenant, projectId), {
    as,
    body: { name: unique("asset"), type, payload: PAYLOADS[type], connection_id: connectionId, ...overrides },
  });
  if (res.status !== 201) throw new Error(`create asset: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A new tenant with one project and an S3 asset of CSV files (`in/*.csv`): what upload tests scan. */
export async function csvAsset(
  tenantOverrides: Record<string, unknown> = {},
  assetOverrides: Record<string, unknown> = {},
) {
  const tenant = await createTenant(tenantOverrides);
  const projectId = await createProject(tenant);
  const connectionId = await insertConnection(tenant, { projectId, type: "S3" });
  const asset = await createAsset(tenant, projectId, connectionId, {
    type: "S3",
    payload: { path: "in/*.csv", format: "csv" },
    ...assetOverrides,
  });
  return { tenant, projectId, connectionId, asset };
}

/** Reads an asset row straight from D1 (to check what was or was not written). */
export async function assetRow(id: number): Promise<Record<string, unknown> | null> {
  return env.DB.prepare("select * from assets where id = ?").bind(id).first();
}

/** Counts rows of a table matching a where clause, straight from D1. */
export async function countRows(table: string, where: string, ...binds: unknown[]): Promise<number> {
  const row = await env.DB.prepare(`select count(*) as n from ${table} where ${where}`)
    .bind(...binds)
    .first<{ n: number }>();
  return row!.n;
}

/**
 * Inserts an asset (and the connection it reads through) straight into D1, for tests of
 * asset settings that must not depend on the assets API. Returns the asset id.
 */
export async function insertAsset(tenant: string, projectId: number): Promise<number> {
  const db = createDb(env.DB);
  const now = new Date().toISOString();
  const [connection] = await db
    .insert(connections)
    .values({
      tenantId: tenant,
      projectId,
      name: unique("conn"),
      type: "S3",
      payload: { bucket: "test-bucket" },
      credentialType: "AWS",
      credentialSecret: "{}",
      createdBy: "test",
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: connections.id });
  const [asset] = await db
    .insert(assets)
    .values({
      tenantId: tenant,
      projectId,
      connectionId: connection!.id,
      name: unique("asset"),
      type: "S3",
      options: {},
      payload: { path: "data/orders.csv" },
      createdBy: "test",
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: assets.id });
  return asset!.id;
}

/** An asset seeded straight into D1, with what incident and alert fixtures copy from it. */
export interface AssetRef {
  tenant: string;
  projectId: number;
  assetId: number;
  connectionId: number;
}

/** An asset (and its S3 connection) of a project, straight in D1. */
export async function seedAsset(tenant: string, projectId: number): Promise<AssetRef> {
  const assetId = await insertAsset(tenant, projectId);
  const row = await env.DB.prepare("select connection_id from assets where id = ?")
    .bind(assetId)
    .first<{ connection_id: number }>();
  return { tenant, projectId, assetId, connectionId: row!.connection_id };
}
