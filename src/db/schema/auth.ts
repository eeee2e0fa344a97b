import { index, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { tenants } from "./tenancy";

/**
 * An API key, stored as the SHA-256 digest of its secret only. Exactly one of tenantId
 * (a deprecated tenant-scoped key with tenant-admin rights) or userEmail (a user-scoped key
 * acting as that user) is set.
 */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").references(() => tenants.id, { onDelete: "cascade" }),
    userEmail: text("user_email"),
    name: text("name").notNull(),
    /** The first characters of the key, shown so a user can recognise it. */
    prefix: text("prefix").notNull(),
    hash: text("hash").notNull(),
    createdBy: text("created_by").notNull(),
    /** The e-mail of the person who created the key; resources created with the key record it. */
    createdByEmail: text("created_by_email"),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
  },
  (t) => [
    uniqueIndex("api_keys_hash_uq").on(t.hash),
    index("api_keys_tenant_idx").on(t.tenantId, t.id),
    index("api_keys_user_idx").on(t.userEmail, t.id),
  ],
);
