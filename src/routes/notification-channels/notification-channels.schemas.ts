import { z } from "@hono/zod-openapi";
import { CHANNEL_TYPES, DELIVERY_STATUSES, NOTIFICATION_EVENTS } from "../../db/schema";
import { PageQuery } from "../pagination";

const Severity = z.enum(["LOW", "MEDIUM", "HIGH"]);

/** The fields of a channel as written: one flat object each for create and replace (no allOf). */
const channelFields = {
  name: z.string().trim().min(1).max(200),
  type: z.enum(CHANNEL_TYPES).openapi({
    description: "WEBHOOK: a Standard Webhooks receiver (signed); SLACK: a Slack incoming-webhook URL (Block Kit)",
  }),
  url: z.url().max(2000).openapi({
    description: "The receiver. https, on a public address (plain http and private hosts only in local development)",
    example: "https://hooks.example.com/dq",
  }),
  secret: z
    .string()
    .max(200)
    .optional()
    .openapi({
      description:
        "WEBHOOK only: the signing secret, whsec_ + base64 of 24-64 random bytes. Write-only, stored encrypted. " +
        "Omitted on create: one is generated and returned once; omitted on replace: the stored one is kept.",
    }),
  events: z
    .array(z.enum(NOTIFICATION_EVENTS))
    .min(1)
    .max(NOTIFICATION_EVENTS.length)
    .refine((e) => new Set(e).size === e.length, "events must not repeat")
    .optional()
    .openapi({ description: "Default: incident.opened and incident.escalated" }),
  min_severity: Severity.optional().openapi({
    description: "Incident events below this severity are not sent (default LOW); scan.failed is always sent",
  }),
  project_ids: z
    .array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER))
    .max(1000)
    .optional()
    .openapi({ description: "Only events of these projects; empty or omitted: every project" }),
  enabled: z.boolean().optional().openapi({ description: "Default true" }),
};

export const ChannelBody = z.strictObject(channelFields).openapi("NotificationChannelBody", {
  example: {
    name: "data-oncall",
    type: "WEBHOOK",
    url: "https://hooks.example.com/dq",
    events: ["incident.opened", "incident.escalated"],
    min_severity: "MEDIUM",
  },
});

/**
 * A replace: every field as on create, but the URL may be left out, or sent back as it is read
 * (scheme and host), to keep the stored one.
 */
export const ReplaceChannelBody = z
  .strictObject({
    ...channelFields,
    url: z
      .url()
      .max(2000)
      .optional()
      .openapi({
        description:
          "The receiver, whole. Left out, or sent as read (scheme and host only), the stored URL is kept; a WEBHOOK " +
          "whose host changes needs `secret` too",
        example: "https://hooks.example.com/dq-v2",
      }),
  })
  .openapi("NotificationChannelReplace", {
    example: { name: "data-oncall", type: "WEBHOOK", url: "https://hooks.example.com", min_severity: "HIGH" },
  });

export const ChannelSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.enum(CHANNEL_TYPES),
    url: z.string().openapi({
      description:
        "The receiver's scheme and host only: its path and query may hold the credential (a Slack URL's path), " +
        "and are stored sealed, never shown",
      example: "https://hooks.example.com",
    }),
    events: z.array(z.enum(NOTIFICATION_EVENTS)),
    min_severity: Severity,
    project_ids: z.array(z.number().int()),
    enabled: z.boolean(),
    secret_set: z
      .boolean()
      .openapi({ description: "A signing secret is stored (WEBHOOK); it is never returned again" }),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("NotificationChannel");

export const ChannelWithSecretSchema = ChannelSchema.extend({
  secret: z.string().optional().openapi({
    description: "The generated signing secret, present only in the response that generated it: store it now",
  }),
}).openapi("NotificationChannelCreated");

export const ChannelTestSchema = z
  .object({
    webhook_id: z.string(),
    delivered: z.boolean().openapi({ description: "The receiver answered 2xx" }),
    status_code: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The receiver's HTTP status; null when none came" }),
    error: z.string().nullable().openapi({ description: "A short, redacted excerpt of what went wrong" }),
  })
  .openapi("NotificationChannelTest");

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ description: "The webhook-id every attempt carried" }),
    event: z.string(),
    status: z.enum(DELIVERY_STATUSES).openapi({
      description: "PENDING (queued or waiting for a retry), DELIVERED, FAILED (a final 4xx), DEAD (retries exhausted)",
    }),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("NotificationDelivery");

export const DeliveriesQuery = PageQuery.extend({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(100)
    .openapi({ description: "Page size (1-1000, default 100)" }),
});
