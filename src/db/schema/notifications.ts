import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { tenants } from "./tenancy";

export const CHANNEL_TYPES = ["WEBHOOK", "SLACK"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export const NOTIFICATION_EVENTS = ["incident.opened", "incident.escalated", "incident.closed", "scan.failed"] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/**
 * Where a tenant's incident events are sent. The webhook signing secret is sealed
 * (lib/crypto SealedSecret JSON) and never returned after the create response; the receiver's
 * URL is a credential too (a Slack incoming-webhook URL, a token in a path or query), so it is
 * sealed whole (urlSecret) and only its scheme and host are kept in clear.
 */
export const notificationChannels = sqliteTable(
  "notification_channels",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    type: text("type", { enum: CHANNEL_TYPES }).notNull(),
    /** The receiver's scheme and host (`https://hooks.slack.com`): all of the URL kept in clear, and shown. */
    url: text("url").notNull(),
    /** The full URL, sealed; the one delivery uses. */
    urlSecret: text("url_secret").notNull(),
    /** Standard Webhooks signing secret (whsec_…), sealed; null for Slack. */
    signingSecret: text("signing_secret"),
    /**
     * What the sealed URL and secret are bound to when they were sealed before the row had an id (a
     * random id, unique): null for those sealed for the row id (src/notifications/channels.ts).
     */
    sealId: text("seal_id"),
    events: text("events", { mode: "json" }).$type<NotificationEvent[]>().notNull(),
    minSeverity: text("min_severity", { enum: ["LOW", "MEDIUM", "HIGH"] }).notNull(),
    /** Projects whose events are sent; empty = all. */
    projectIds: text("project_ids", { mode: "json" }).$type<number[]>().notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("notification_channels_tenant_name_uq").on(t.tenantId, t.name),
    // The sealed URL and secret open in the one row that holds their seal id.
    uniqueIndex("notification_channels_seal_id_uq").on(t.sealId),
  ],
);

export const DELIVERY_STATUSES = ["PENDING", "DELIVERED", "FAILED", "DEAD"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One event sent to one channel. id is the Standard Webhooks `webhook-id`: every attempt of a
 * delivery carries it, so a receiver can de-duplicate. The payload is kept so a retry sends the
 * same body; the receiver's answer is kept only as a short, redacted excerpt.
 */
export const notificationDeliveries = sqliteTable(
  "notification_deliveries",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    channelId: integer("channel_id")
      .notNull()
      .references(() => notificationChannels.id, { onDelete: "cascade" }),
    /** What caused it (e.g. "incident:42:opened"): one delivery per channel and event. */
    eventKey: text("event_key").notNull(),
    event: text("event").notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("notification_deliveries_event_uq").on(t.channelId, t.eventKey),
    index("notification_deliveries_channel_idx").on(t.tenantId, t.channelId, t.createdAt),
  ],
);
