import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** A tenant: the top-level customer scope, created by the platform administrator. */
export const tenants = sqliteTable("tenants", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  description: text("description").notNull().default(""),
  /** storage (2.8) without its secret fields, as JSON. */
  storage: text("storage", { mode: "json" }).$type<Record<string, unknown> | null>(),
  /** storage.payload.credentials and storage.payload.security.sas_key, sealed (lib/crypto SealedSecret JSON). */
  storageSecret: text("storage_secret"),
  /** Days that scan data and results are kept. */
  dataTtl: integer("data_ttl").notNull(),
  /** Bytes a single upload may carry. */
  freeUploadLimit: integer("free_upload_limit").notNull(),
  useInformationSchema: integer("use_information_schema", { mode: "boolean" }).notNull().default(false),
  dataprocConfig: text("dataproc_config", { mode: "json" }).$type<Record<string, unknown> | null>(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const TENANT_ROLES = ["TENANT_ADMIN", "TENANT_MEMBER"] as const;
export type TenantRole = (typeof TENANT_ROLES)[number];

/** A user's role in a tenant. Users are identified by their lower-cased e-mail. */
export const tenantMembers = sqliteTable(
  "tenant_members",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    userEmail: text("user_email").notNull(),
    role: text("role", { enum: TENANT_ROLES }).notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.userEmail] }), index("tenant_members_user_idx").on(t.userEmail)],
);

/** A container of connections and assets inside a tenant. */
export const projects = sqliteTable(
  "projects",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description").notNull().default(""),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("projects_tenant_name_uq").on(t.tenantId, t.name)],
);

export const PROJECT_ROLES = ["PROJECT_VIEWER", "PROJECT_EDITOR", "PROJECT_ADMIN"] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

/** A user's role in a project. */
export const projectMembers = sqliteTable(
  "project_members",
  {
    tenantId: text("tenant_id").notNull(),
    projectId: integer("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userEmail: text("user_email").notNull(),
    role: text("role", { enum: PROJECT_ROLES }).notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.userEmail] }),
    index("project_members_tenant_user_idx").on(t.tenantId, t.userEmail),
  ],
);
