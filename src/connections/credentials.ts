/**
 * The credentials connections authenticate with, one schema per credential type (write-only:
 * never returned), and how a stored credential is sealed and opened.
 */

import { z } from "zod";
import type { ConnectionRow, CredentialType } from "../db/schema";
import { type SealedSecret, type SecretBox, secretBox } from "../lib/crypto";
import { ConnectorError } from "../scan/connectors/types";
import { text } from "./schema-parts";

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
  .union([
    z.strictObject({ token: secret().meta({ description: "A Databricks personal access token" }) }),
    z.strictObject({
      client_id: text(255).meta({
        description: "A Databricks service principal's OAuth client id (its application id)",
      }),
      client_secret: secret().meta({
        description: "One of its OAuth secrets: exchanged at the workspace's /oidc/v1/token for hour-long tokens",
      }),
    }),
  ])
  .meta({
    id: "TokenCredential",
    description:
      "A personal access token, or a service principal's OAuth client id and secret (OAuth machine-to-machine)",
  });
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
      "GCS, BIGQUERY → GCP; S3 → AWS; AZURE → AZURE_SAS; DELTALAKE → TOKEN (a token, or client_id and client_secret); " +
      "GENERIC_JDBC → GENERIC_MAP; " +
      "HIVE_ICEBERG → by payload.location_type (GCS → GCP, S3 → AWS, AZURE → AZURE_SAS). UPLOAD takes none.",
  });
export type CredentialInput = z.infer<typeof CredentialInput>;

/** A connection's decrypted credential: what the scan pipeline authenticates with (NONE: an UPLOAD connection's). */
export type ConnectionCredential = CredentialInput | NoCredential;

/** The credential of type T. */
export type CredentialOf<T extends ConnectionCredential["type"]> = Extract<ConnectionCredential, { type: T }>;

/**
 * Additional data of a sealed credential: a ciphertext opens only in the row it was sealed for,
 * so a credential copied to another connection or tenant is useless. A credential is sealed for
 * a seal id (random, unique among connections: `seal_id`), chosen before the row is written so
 * the row is whole in its one INSERT; one sealed before seal ids (seal_id null) for the row id.
 */
const credentialAad = (tenantId: string, row: Pick<ConnectionRow, "id" | "sealId">) =>
  row.sealId === null ? `connection:${tenantId}:${row.id}` : `connection:${tenantId}:seal:${row.sealId}`;

/** A new seal id (see credentialAad). */
export const newSealId = () => crypto.randomUUID();

/** A credential sealed for a connection's seal id, as the credential_secret column holds it. */
export async function sealCredential(
  box: SecretBox,
  tenantId: string,
  sealId: string,
  credential: ConnectionCredential,
): Promise<string> {
  // The type is sealed with the payload, so a tampered credential_type column is detected on open.
  return JSON.stringify(await box.seal(credential, credentialAad(tenantId, { id: 0, sealId })));
}

/** The decrypted credential of a connection, for the scan pipeline; never returned by the API. */
export async function openConnectionCredential(
  box: SecretBox,
  row: Pick<ConnectionRow, "id" | "tenantId" | "sealId" | "credentialType" | "credentialSecret">,
): Promise<ConnectionCredential> {
  const sealed = JSON.parse(row.credentialSecret) as SealedSecret;
  const credential = await box.open<ConnectionCredential>(sealed, credentialAad(row.tenantId, row));
  if (credential.type !== row.credentialType) {
    throw new Error(`connection ${row.id}: sealed credential type differs from credential_type`);
  }
  return credential;
}

/**
 * The opened credential of a connection for a scan: a credential that cannot be opened (its
 * encryption key was removed, or the row was tampered with) is a connector error the user can
 * read, not an internal one.
 */
export async function openCredential(
  env: { ENCRYPTION_KEYS: string },
  row: Pick<ConnectionRow, "id" | "tenantId" | "sealId" | "credentialType" | "credentialSecret">,
): Promise<ConnectionCredential> {
  try {
    return await openConnectionCredential(secretBox(env.ENCRYPTION_KEYS), row);
  } catch {
    throw new ConnectorError(
      `the credential of connection ${row.id} cannot be decrypted: set it again (PUT the connection with a credential)`,
      "invalid",
    );
  }
}
