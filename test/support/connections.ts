import { env } from "cloudflare:workers";
import { requiredCredentialType } from "../../src/connections";
import type { ConnectionType } from "../../src/db/schema";
import { admin, type Credential, call } from "./api";
import { unique } from "./unique";

/** A PEM block shaped like a GCP service-account key (not a real key). */
export const FAKE_PEM = `-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7testOnlyKey\nAbCdEfGh0123456789+/xyz=\n-----END PRIVATE KEY-----\n`;

type Def = { payload: Record<string, unknown>; credential: { type: string; payload: Record<string, unknown> } };

const gcp = (project: string) => ({
  type: "GCP",
  payload: {
    project_id: project,
    private_key_id: "0123456789abcdef",
    private_key: FAKE_PEM,
    client_email: `scanner@${project}.iam.gserviceaccount.com`,
    client_id: "112233445566778899",
  },
});

/** A valid payload and credential for every connection type. */
export const VALID_CONNECTIONS = {
  REDSHIFT: {
    payload: { endpoint_prefix: "analytics.abc123.eu-west-1" },
    credential: { type: "SIMPLE", payload: { username: "scanner", password: "redshift-pw-s3cr3t" } },
  },
  GCS: { payload: { bucket: "raw-events" }, credential: gcp("acme-data") },
  S3: {
    payload: { bucket: "landing-zone" },
    credential: { type: "AWS", payload: { access_key: "AKIAEXAMPLE0001", secret_key: "aws-secret-key-s3cr3t" } },
  },
  AZURE: {
    payload: { storage_account: "acmestore", bucket: "exports" },
    credential: { type: "AZURE_SAS", payload: { sas_key: "sv=2024-01-01&sig=azure-sas-s3cr3t" } },
  },
  BIGQUERY: { payload: { project: "acme-warehouse" }, credential: gcp("acme-warehouse") },
  DELTALAKE: {
    payload: { host: "adb-123.azuredatabricks.net", port: "443", httppath: "/sql/1.0/warehouses/abc" },
    credential: { type: "TOKEN", payload: { token: "dapi-databricks-token-s3cr3t" } },
  },
  GENERIC_JDBC: {
    payload: {
      db_type: "postgresql",
      db_or_schema: "public",
      connection_properties: { host: "db.example.com", port: "5432", sslmode: "require" },
    },
    credential: { type: "GENERIC_MAP", payload: { user: "scanner", password: "jdbc-pw-s3cr3t" } },
  },
  HIVE_ICEBERG: {
    payload: {
      thrift_uri: "thrift://metastore.example.com:9083",
      location_type: "S3",
      region: "eu-west-1",
      bucket: "lake",
    },
    credential: { type: "AWS", payload: { access_key: "AKIAEXAMPLE0002", secret_key: "iceberg-secret-s3cr3t" } },
  },
  SNOWFLAKE: {
    payload: { account: "acme-xy12345", warehouse: "COMPUTE_WH", role: "SCANNER" },
    credential: { type: "SIMPLE", payload: { username: "scanner", password: "snowflake-pw-s3cr3t" } },
  },
} satisfies Record<string, Def>;

export type ConnectionTypeName = keyof typeof VALID_CONNECTIONS;

export interface ConnectionOptions {
  /** A PROJECT-scoped connection of this project; without it (or with `global`) a GLOBAL one. */
  projectId?: number;
  global?: boolean;
  type?: ConnectionTypeName;
  name?: string;
  payload?: Record<string, unknown>;
  credential?: { type: string; payload: Record<string, unknown> };
  as?: Credential;
}

/** Creates a connection through the API (default: a GLOBAL S3 one, by the platform admin); returns it. */
export async function createConnection(tenant: string, opts: ConnectionOptions = {}) {
  const type = opts.type ?? "S3";
  const def: Def = VALID_CONNECTIONS[type];
  const path =
    opts.projectId !== undefined && !opts.global
      ? `/api/backend/${tenant}/configuration/projects/${opts.projectId}/connections`
      : `/api/backend/${tenant}/configuration/connections`;
  const res = await call("POST", path, {
    as: opts.as ?? admin,
    body: {
      name: opts.name ?? unique("conn"),
      type,
      payload: opts.payload ?? def.payload,
      credential: opts.credential ?? def.credential,
    },
  });
  if (res.status !== 201)
    throw new Error(`create connection: expected 201, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as {
    id: number;
    project_id: number | null;
    name: string;
    scope: "PROJECT" | "GLOBAL";
    type: string;
    payload: Record<string, unknown>;
    db_type: string | null;
  };
}

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
