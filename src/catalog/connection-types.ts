/**
 * What each connection type holds (spec 2.2): its payload and the credential it authenticates
 * with. Domain knowledge, shared by the connections API (request validation, the OpenAPI
 * document) and the scan pipeline (connectors parse payloads with these schemas).
 */

import { z } from "zod";
import type { ConnectionType, CredentialType } from "../db/schema";
import { JDBC_CONNECTION_PROPERTIES, jdbcUrlProblem } from "../scan/sql/jdbc-config";

// ---- Connection payloads, one per connection type (spec 2.2) ----

const text = (max = 1024) => z.string().trim().min(1).max(max);

/** A TCP port written as a string ("443"), 1-65535. */
const portString = z
  .string()
  .regex(/^\d{1,5}$/, "must be a port number (1-65535)")
  .refine((p) => Number(p) >= 1 && Number(p) <= 65535, "must be a port number (1-65535)");

/** thrift://<host>:<port>, the form of a Hive metastore URI (usually port 9083). */
const THRIFT_URI = /^thrift:\/\/([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;
const thriftUri = z
  .string()
  .max(1024)
  .refine((uri) => {
    const m = THRIFT_URI.exec(uri);
    return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
  }, "must be thrift://<host>:<port>")
  .meta({ example: "thrift://metastore.example.com:9083" });

/** Databases a GENERIC_JDBC connection can reach (the driver is chosen by this value). */
export const JDBC_DB_TYPES = ["postgresql", "mysql", "mariadb", "sqlserver", "oracle"] as const;

/** Where a HIVE_ICEBERG catalog keeps its files; it decides the credential type. */
export const ICEBERG_LOCATION_TYPES = ["GCS", "S3", "AZURE"] as const;

/**
 * An object-storage endpoint other than the provider's own (an S3-compatible store, an
 * emulator): http(s), no user info, query or fragment, so it cannot smuggle a credential.
 */
export const storageEndpoint = z
  .url({ protocol: /^https?$/ })
  .max(1024)
  .refine((u) => {
    // Zod runs refinements even after the URL check failed: an unparsable value is refused here too.
    try {
      const url = new URL(u);
      return !url.username && !url.password && !url.search && !url.hash;
    } catch {
      return false;
    }
  }, "must be an http(s) URL without credentials, query or fragment")
  .optional();

/** A warehouse API endpoint other than the provider's (a private endpoint, or a test server). */
const apiEndpoint = (provider: string) =>
  storageEndpoint.meta({ description: `SQL API base URL; default ${provider}` });

export const RedshiftPayload = z
  .strictObject({
    endpoint_prefix: text().meta({
      description:
        "The cluster's endpoint without the port (mycluster.abc123xyz789.eu-west-1.redshift.amazonaws.com, or the part " +
        "before .redshift.amazonaws.com): its first label is the cluster (or serverless workgroup), its region label the Data API's region",
    }),
    database: text(255).optional().meta({ description: "Database the Data API connects to; default dev" }),
    endpoint: apiEndpoint("https://redshift-data.{region}.amazonaws.com"),
  })
  .meta({ id: "RedshiftPayload" });
export const GcsPayload = z
  .strictObject({
    bucket: text(255).meta({ description: "The bucket the assets' paths are in" }),
    endpoint: storageEndpoint.meta({ description: "JSON API endpoint; default https://storage.googleapis.com" }),
  })
  .meta({ id: "GcsPayload" });
export const S3Payload = z
  .strictObject({
    bucket: text(255).meta({ description: "The bucket the assets' paths are in" }),
    region: z
      .string()
      .regex(/^[a-z0-9-]{1,64}$/, "must be a region name such as eu-west-1")
      .optional()
      .meta({ description: "The bucket's region; default us-east-1 (R2: auto)" }),
    endpoint: storageEndpoint.meta({
      description: "An S3-compatible endpoint (MinIO, R2, …), addressed path-style; default Amazon S3",
    }),
  })
  .meta({ id: "S3Payload" });
export const AzurePayload = z
  .strictObject({
    storage_account: text(255).meta({ description: "The storage account's name" }),
    bucket: text(255).meta({ description: "The blob container the assets' paths are in" }),
    endpoint: storageEndpoint.meta({
      description: "Blob service endpoint; default https://{storage_account}.blob.core.windows.net",
    }),
  })
  .meta({ id: "AzurePayload" });
export const BigQueryPayload = z
  .strictObject({
    project: text(255).meta({
      description: "The GCP project whose datasets the assets name (and that runs the queries)",
    }),
    location: text(64).optional().meta({ description: "Location of the datasets (US, EU, europe-west1…)" }),
    endpoint: apiEndpoint("https://bigquery.googleapis.com"),
  })
  .meta({ id: "BigQueryPayload" });
export const DeltaLakePayload = z
  .strictObject({
    host: text().meta({ description: "The workspace host, e.g. adb-1234567890123456.7.azuredatabricks.net" }),
    port: portString.meta({ description: "Its HTTPS port, usually 443" }),
    httppath: text().meta({
      description: "The SQL warehouse's HTTP path, /sql/1.0/warehouses/{id}: statements run on that warehouse",
    }),
    endpoint: apiEndpoint("https://{host}:{port}"),
  })
  .meta({ id: "DeltaLakePayload" });
export const GenericJdbcPayload = z
  .strictObject({
    db_type: z
      .enum(JDBC_DB_TYPES)
      .meta({ description: "The database's kind; scans support postgresql, mysql and mariadb" }),
    db_or_schema: text().meta({
      description:
        "The database to connect to (a MySQL/MariaDB database is its schema); connection_properties.database wins",
    }),
    connection_properties: z
      .object(
        Object.fromEntries(
          Object.entries(JDBC_CONNECTION_PROPERTIES).map(([key, description]) => [
            key,
            z.string().max(4096).optional().meta({ description }),
          ]),
        ),
      )
      .catchall(z.string().max(4096))
      .refine((m) => Object.keys(m).length <= 100, "at most 100 properties")
      .superRefine((m, ctx) => {
        for (const key of Object.keys(m).filter((k) => k.length < 1 || k.length > 256)) {
          ctx.addIssue({ code: "custom", path: [key], message: "a property name is 1-256 characters" });
        }
        // A JDBC url is parsed here once, so a malformed one is a 400 now, not a failed scan later.
        const problem = m.url === undefined ? undefined : jdbcUrlProblem(m.url);
        if (problem) ctx.addIssue({ code: "custom", path: ["url"], message: problem });
      })
      .default({})
      .meta({
        description:
          "Driver properties, string to string: those listed are read by scans; any other is kept as a custom parameter",
      }),
  })
  .meta({ id: "GenericJdbcPayload" });
export const HiveIcebergPayload = z
  .strictObject({
    thrift_uri: thriftUri.meta({ description: "The Hive metastore, thrift://<host>:<port> (usually 9083)" }),
    location_type: z.enum(ICEBERG_LOCATION_TYPES).meta({
      description: "Where the tables' files are; decides the credential (GCS → GCP, S3 → AWS, AZURE → AZURE_SAS)",
    }),
    region: text(255).meta({ description: "The bucket's region (S3)" }),
    bucket: text(255).meta({
      description: "The bucket (Azure: container) holding the tables' files; the credential is used for it only",
    }),
    endpoint: storageEndpoint.meta({
      description:
        "The store's endpoint when not the provider's own (an S3-compatible store, an emulator); the Azure account comes from the table's abfss:// location",
    }),
  })
  .meta({ id: "HiveIcebergPayload" });
export type HiveIcebergPayload = z.infer<typeof HiveIcebergPayload>;
export const SnowflakePayload = z
  .strictObject({
    account: text(255).meta({
      description: "Account identifier as in its host name: myorg-myaccount or xy12345.eu-west-1.aws",
    }),
    warehouse: text(255).meta({ description: "The virtual warehouse that runs the statements" }),
    role: text(255).meta({ description: "The role the statements run with" }),
    database: text(255).optional().meta({ description: "Default database of the statements" }),
    schema: text(255).optional().meta({ description: "Default schema of the statements" }),
    endpoint: apiEndpoint("https://{account}.snowflakecomputing.com"),
  })
  .meta({ id: "SnowflakePayload" });
/** An UPLOAD connection reaches no store: its assets' data arrives only in uploaded batches. */
export const UploadPayload = z.strictObject({}).meta({
  id: "UploadPayload",
  description:
    "Empty: an UPLOAD connection has no address; its assets' batches are uploaded to POST /v2/{tenant}/sources/{id}/batch_data",
});

/** The payload schema of each connection type. */
export const CONNECTION_PAYLOADS = {
  REDSHIFT: RedshiftPayload,
  GCS: GcsPayload,
  S3: S3Payload,
  AZURE: AzurePayload,
  BIGQUERY: BigQueryPayload,
  DELTALAKE: DeltaLakePayload,
  GENERIC_JDBC: GenericJdbcPayload,
  HIVE_ICEBERG: HiveIcebergPayload,
  SNOWFLAKE: SnowflakePayload,
  UPLOAD: UploadPayload,
} as const satisfies Record<ConnectionType, z.ZodType>;

// ---- Credentials, one per credential type (write-only: never returned) ----

const secret = (max = 4096) => z.string().min(1).max(max);

/** What the key file's fields that no request uses are for. */
const KEY_FILE_FIELD = "As in the key file, so it can be pasted whole; not used";

/** A PKCS#8 PEM private key block, as in a GCP service-account key file. */
const PEM_PRIVATE_KEY = /^-----BEGIN PRIVATE KEY-----\s*[A-Za-z0-9+/=\s]+-----END PRIVATE KEY-----\s*$/;

export const SimpleCredential = z
  .strictObject({
    username: text().meta({ description: "The database user (REDSHIFT: the Data API's DbUser)" }),
    password: secret().meta({
      description: "SNOWFLAKE: a programmatic access token unless private_key is given; REDSHIFT: not used",
    }),
    // Warehouse APIs that take no password (see src/scan/sql/snowflake.ts and redshift.ts).
    private_key: z
      .string()
      .max(16384)
      .regex(PEM_PRIVATE_KEY, "must be a PKCS#8 PEM block (BEGIN/END PRIVATE KEY lines around base64)")
      .optional()
      .meta({
        description:
          "SNOWFLAKE: key-pair authentication for the SQL API; without it the password is a programmatic access token",
      }),
    access_key: text().optional().meta({ description: "REDSHIFT: AWS access key that signs Data API calls" }),
    secret_key: secret().optional().meta({ description: "REDSHIFT: its AWS secret key" }),
    session_token: secret().optional().meta({ description: "REDSHIFT: AWS session token of temporary keys" }),
    region: z
      .string()
      .regex(/^[a-z0-9-]{1,64}$/)
      .optional()
      .meta({ description: "REDSHIFT: region when endpoint_prefix names none" }),
  })
  .meta({ id: "SimpleCredential" });
export const AwsCredential = z
  .strictObject({
    access_key: text().meta({ description: "AWS access key id" }),
    secret_key: secret().meta({ description: "Its secret access key" }),
  })
  .meta({ id: "AwsCredential" });
export const TokenCredential = z
  .strictObject({ token: secret().meta({ description: "A Databricks personal access token" }) })
  .meta({ id: "TokenCredential" });
export const AzureSasCredential = z
  .strictObject({
    sas_key: secret().meta({ description: "A shared access signature with read and list rights on the container" }),
  })
  .meta({ id: "AzureSasCredential" });
export const GenericMapCredential = z
  .record(z.string().min(1).max(256), z.string().max(4096))
  .refine((m) => Object.keys(m).length <= 100, "at most 100 entries")
  .meta({
    id: "GenericMapCredential",
    description:
      "GENERIC_JDBC: user (or username) and password; also host, port, database or url when those are secret " +
      "(each wins over the same connection property)",
  });
export const GcpCredential = z
  .strictObject({
    project_id: text(255).meta({ description: "The service account's project" }),
    private_key_id: text(255).meta({ description: "The id of private_key (the kid of the signed token requests)" }),
    private_key: z
      .string()
      .max(16384)
      .regex(PEM_PRIVATE_KEY, "must be a PKCS#8 PEM block (BEGIN/END PRIVATE KEY lines around base64)")
      .meta({ description: "The key that signs the service account's token requests" }),
    client_email: z.email().max(254).meta({ description: "The service account" }),
    client_id: text(255).meta({ description: "The service account's numeric id" }),
    // The other fields of a service-account key file, so the file can be pasted as is.
    type: z.literal("service_account").optional().meta({ description: KEY_FILE_FIELD }),
    auth_uri: z.url().max(1024).optional().meta({ description: KEY_FILE_FIELD }),
    token_uri: z.url().max(1024).optional().meta({
      description:
        "Where token requests go: must be https://oauth2.googleapis.com/token (the default) unless private targets are allowed",
    }),
    auth_provider_x509_cert_url: z.url().max(1024).optional().meta({ description: KEY_FILE_FIELD }),
    client_x509_cert_url: z.url().max(1024).optional().meta({ description: KEY_FILE_FIELD }),
    universe_domain: text(255).optional().meta({ description: KEY_FILE_FIELD }),
  })
  .meta({ id: "GcpCredential", description: "A service-account key file's fields; the file may be pasted as it is" });

/** What an UPLOAD connection holds in place of a credential: nothing (sealed like any other). */
export const NO_CREDENTIAL = { type: "NONE", payload: {} } as const;
export type NoCredential = { type: "NONE"; payload: Record<string, never> };

export const CREDENTIAL_PAYLOADS = {
  SIMPLE: SimpleCredential,
  GCP: GcpCredential,
  AWS: AwsCredential,
  AZURE_SAS: AzureSasCredential,
  TOKEN: TokenCredential,
  GENERIC_MAP: GenericMapCredential,
} as const satisfies Record<Exclude<CredentialType, "NONE">, z.ZodType>;

const credentialOf = <T extends Exclude<CredentialType, "NONE">>(type: T) =>
  z.strictObject({ type: z.literal(type), payload: CREDENTIAL_PAYLOADS[type] });

export const CredentialInput = z
  .discriminatedUnion("type", [
    credentialOf("SIMPLE"),
    credentialOf("GCP"),
    credentialOf("AWS"),
    credentialOf("AZURE_SAS"),
    credentialOf("TOKEN"),
    credentialOf("GENERIC_MAP"),
  ])
  .meta({
    id: "ConnectionCredential",
    description:
      "Write-only: encrypted at rest, never returned. Its type must fit the connection type: REDSHIFT, SNOWFLAKE → SIMPLE; " +
      "GCS, BIGQUERY → GCP; S3 → AWS; AZURE → AZURE_SAS; DELTALAKE → TOKEN; GENERIC_JDBC → GENERIC_MAP; " +
      "HIVE_ICEBERG → by payload.location_type (GCS → GCP, S3 → AWS, AZURE → AZURE_SAS). UPLOAD takes none.",
  });
export type CredentialInput = z.infer<typeof CredentialInput>;

// ---- Which credential a connection needs ----

const CREDENTIAL_FOR: Record<Exclude<ConnectionType, "HIVE_ICEBERG">, CredentialType> = {
  REDSHIFT: "SIMPLE",
  GCS: "GCP",
  S3: "AWS",
  AZURE: "AZURE_SAS",
  BIGQUERY: "GCP",
  DELTALAKE: "TOKEN",
  GENERIC_JDBC: "GENERIC_MAP",
  SNOWFLAKE: "SIMPLE",
  UPLOAD: "NONE",
};
const CREDENTIAL_FOR_LOCATION: Record<(typeof ICEBERG_LOCATION_TYPES)[number], CredentialType> = {
  GCS: "GCP",
  S3: "AWS",
  AZURE: "AZURE_SAS",
};

/** The credential type a connection of this type and (valid) payload must carry. */
export function requiredCredentialType(type: ConnectionType, payload: Record<string, unknown>): CredentialType {
  if (type === "HIVE_ICEBERG") {
    return CREDENTIAL_FOR_LOCATION[payload.location_type as (typeof ICEBERG_LOCATION_TYPES)[number]];
  }
  return CREDENTIAL_FOR[type];
}
