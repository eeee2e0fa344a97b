import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { projects, tenants } from "./tenancy";

export const CONNECTION_TYPES = [
  "REDSHIFT",
  "GCS",
  "S3",
  "AZURE",
  "BIGQUERY",
  "DELTALAKE",
  "GENERIC_JDBC",
  "HIVE_ICEBERG",
  "SNOWFLAKE",
  // Ours, beyond the spec's nine: data that arrives only through uploads, with no store to reach.
  "UPLOAD",
] as const;
export type ConnectionType = (typeof CONNECTION_TYPES)[number];

/** NONE: the credential of an UPLOAD connection, which reaches no store and so has no secret. */
export const CREDENTIAL_TYPES = ["SIMPLE", "GCP", "AWS", "AZURE_SAS", "TOKEN", "GENERIC_MAP", "NONE"] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

/**
 * Location of an external store plus its credential. projectId null = GLOBAL scope (visible in
 * the whole tenant). The credential is sealed (lib/crypto SealedSecret JSON), never returned.
 * Names are unique per scope; NULLs are distinct in a unique index, so the GLOBAL scope has its own.
 */
export const connections = sqliteTable(
  "connections",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    projectId: integer("project_id").references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    type: text("type", { enum: CONNECTION_TYPES }).notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    dbType: text("db_type"),
    credentialType: text("credential_type", { enum: CREDENTIAL_TYPES }).notNull(),
    credentialSecret: text("credential_secret").notNull(),
    /**
     * What the sealed credential is bound to when it was sealed before the row had an id (a random
     * id, unique): null for a credential sealed for the row id (src/connections/credentials.ts).
     */
    sealId: text("seal_id"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("connections_tenant_project_idx").on(t.tenantId, t.projectId, t.id),
    uniqueIndex("connections_project_name_uq")
      .on(t.tenantId, t.projectId, t.name)
      .where(sql`${t.projectId} is not null`),
    uniqueIndex("connections_global_name_uq").on(t.tenantId, t.name).where(sql`${t.projectId} is null`),
    // A sealed credential opens in the one row that holds its seal id.
    uniqueIndex("connections_seal_id_uq").on(t.sealId),
  ],
);
