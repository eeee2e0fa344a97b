import { env } from "cloudflare:workers";
import { requiredCredentialType } from "../../src/catalog/connection-types";
import type { ConnectionType } from "../../src/db/schema";
import { admin, type Credential, call } from "./api";
import { unique } from "./factories";

/**
 * Inserts a connection straight into D1 (the connections API is built elsewhere); projectId
 * null makes it GLOBAL. The credential is an opaque sealed-looking string: nothing reads it here.
 */
export async function insertConnection(
  tenant: string,
  opts: { projectId: number | null; type: string; dbType?: string | null },
): Promise<number> {
  const now = new Date().toISOString();
  const row = await env.DB.prepare(
    `insert into connections (tenant_id, project_id, name, type, payload, db_type, credential_type,
       credential_secret, created_by, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, 'test', ?, ?) returning id`,
  )
    .bind(
      tenant,
      opts.projectId,
      unique("conn"),
      opts.type,
      "{}",
      opts.dbType ?? null,
      // An Iceberg catalog on S3 by default; the credential itself is never opened here.
      requiredCredentialType(opts.type as ConnectionType, { location_type: "S3" }),
      JSON.stringify({ v: 1, kid: "t1", iv: "AAAAAAAAAAAAAAAA", ct: "c2VhbGVk" }),
      now,
      now,
    )
    .first<{ id: number }>();
  return row!.id;
}

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
