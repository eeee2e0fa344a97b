import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { AlertSchema } from "../alerts/alerts.schemas";
import { IncidentSchema } from "../incidents/incidents.schemas";

/**
 * The requests the service sends to a WEBHOOK channel, as the OpenAPI document's `webhooks`:
 * one per event type. Every request carries the Standard Webhooks headers.
 */

const AssetRefSchema = z
  .object({ id: z.string(), name: z.string(), project_id: z.number().int() })
  .openapi("WebhookAsset");

const WebhookHeaders = z.object({
  "webhook-id": z.string().openapi({ description: "The delivery's id, the same on every attempt: de-duplicate on it" }),
  "webhook-timestamp": z.string().openapi({ description: "Unix seconds of this attempt" }),
  "webhook-signature": z.string().openapi({
    description:
      'v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">, keyed with the base64-decoded part of the channel\'s whsec_ secret',
  }),
});

const IncidentEventSchema = z
  .object({
    type: z.enum(["incident.opened", "incident.escalated", "incident.closed"]),
    timestamp: z.string().openapi({ description: "When the event happened (ISO 8601)" }),
    data: z.object({
      incident: IncidentSchema,
      asset: AssetRefSchema,
      alerts: z.array(AlertSchema).openapi({
        description: "The alerts of the scan that caused the event, with their details; empty for a manual close",
      }),
      closed_by: z
        .string()
        .optional()
        .openapi({ description: "incident.closed: who closed it (system for NEW_NORMAL and auto-close)" }),
      link: z.string().openapi({ description: "The incident in the API" }),
    }),
  })
  .openapi("IncidentEventPayload");

const ScanFailedSchema = z
  .object({
    type: z.literal("scan.failed"),
    timestamp: z.string(),
    data: z.object({
      job: z.object({
        id: z.string(),
        kind: z.string(),
        status: z.literal("FAILED"),
        error: z.string().nullable(),
        created_at: z.string(),
        finished_at: z.string().nullable(),
      }),
      asset: AssetRefSchema,
      link: z.string().openapi({ description: "The scan job in the API" }),
    }),
  })
  .openapi("ScanFailedPayload");

const ChannelTestSchema = z
  .object({
    type: z.literal("channel.test"),
    timestamp: z.string(),
    data: z.object({ channel: z.object({ id: z.number().int(), name: z.string() }), message: z.string() }),
  })
  .openapi("ChannelTestPayload");

const EVENTS = [
  ["incident.opened", "incidentOpened", "An incident opened: a scan found a new problem", IncidentEventSchema],
  [
    "incident.escalated",
    "incidentEscalated",
    "An open incident got worse (further from its band, or a higher priority)",
    IncidentEventSchema,
  ],
  [
    "incident.closed",
    "incidentClosed",
    "An incident closed: by hand, after clean scans, or adopted as the new normal",
    IncidentEventSchema,
  ],
  ["scan.failed", "scanFailed", "A scan job ended FAILED", ScanFailedSchema],
  ["channel.test", "channelTest", "Sent by POST …/channels/{channelId}/test", ChannelTestSchema],
] as const;

export function registerWebhooks(registry: OpenAPIHono["openAPIRegistry"]): void {
  for (const [name, operationId, summary, schema] of EVENTS) {
    registry.registerWebhook({
      operationId,
      method: "post",
      path: name,
      // The receiver authenticates the request by its signature (webhook-signature), not a scheme of ours.
      security: [],
      tags: ["Notifications"],
      summary,
      description:
        "Sent to WEBHOOK channels subscribed to the event, signed per the Standard Webhooks specification. " +
        "Answer 2xx to acknowledge; 429 and 5xx are retried with backoff (Retry-After honoured), other 4xx are not.",
      request: { headers: WebhookHeaders, body: { content: { "application/json": { schema } } } },
      responses: { 200: { description: "Received" } },
    });
  }
}
