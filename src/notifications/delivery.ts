/**
 * Sending one event to one channel, and the delivery log that records it. Every attempt of a
 * delivery carries the same `webhook-id` (the delivery's id) and body; a 429, a 5xx, a timeout or
 * a network error is retried with backoff (Retry-After honoured) by the notifications queue, other
 * 4xx answers are final. What the receiver answered is kept only as a short, redacted excerpt.
 */

import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../db";
import { notificationDeliveries } from "../db/schema";
import { type SecretBox, secretBox } from "../lib/crypto";
import { logNetworkFailure, networkFailure } from "../lib/network-errors";
import { type OutboundPolicy, OutboundTargetError, outboundPolicy } from "../lib/outbound";
import { outboundFetch } from "../lib/outbound-fetch";
import { excerpt, logUpstreamFailure } from "../lib/redact";
import { nowIso } from "../lib/time";
import { type ChannelRow, type DeliveryRow, getChannel, openChannel } from "./channels";
import { slackMessage, type WebhookPayload } from "./payloads";
import { signedHeaders } from "./signature";

/** How long a receiver has to answer. */
export const SEND_TIMEOUT_MS = 10_000;
/** The longest a queue message can be delayed (Cloudflare Queues: 12 hours). */
const MAX_DELAY_SECONDS = 43_200;

/** Backoff before the attempt after the n-th failed one: 30 s, 1 min, 2 min … capped at 1 hour. */
export function retryDelaySeconds(attempts: number, retryAfterSeconds?: number): number {
  const backoff = Math.min(3600, 30 * 2 ** Math.max(0, attempts - 1));
  return Math.min(MAX_DELAY_SECONDS, Math.max(backoff, retryAfterSeconds ?? 0));
}

/** Retry-After as seconds (delta-seconds or an HTTP date), undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** What one attempt came to. */
export interface SendResult {
  /** The receiver's HTTP status; null when none came (network error, timeout, refused target). */
  statusCode: number | null;
  delivered: boolean;
  /** Worth another attempt: 408, 429, 5xx, a timeout or a network error. */
  transient: boolean;
  retryAfterSeconds?: number;
  /** A short, redacted excerpt of what went wrong; null when delivered. */
  error: string | null;
}

/** The request an attempt sends: a WEBHOOK gets the payload signed, SLACK a Block Kit message. */
async function requestOf(
  channel: ChannelRow,
  secret: string | undefined,
  webhookId: string,
  payload: WebhookPayload,
  now: Date,
): Promise<{ body: string; headers: Record<string, string> }> {
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "dq-monitor-webhooks/1" };
  if (channel.type === "SLACK") return { body: JSON.stringify(slackMessage(payload)), headers };
  const body = JSON.stringify(payload);
  if (!secret) throw new Error("a webhook channel without a signing secret");
  const signed = await signedHeaders(secret, { id: webhookId, timestamp: Math.floor(now.getTime() / 1000), body });
  return { body, headers: { ...headers, ...signed } };
}

/** Sends one attempt of `payload` to a channel; never throws for the receiver's failures. */
export async function sendToChannel(
  box: SecretBox,
  policy: OutboundPolicy,
  channel: ChannelRow,
  webhookId: string,
  payload: WebhookPayload,
  now = new Date(),
): Promise<SendResult> {
  let opened: { url: string; secret?: string };
  try {
    opened = await openChannel(box, channel);
  } catch (err) {
    console.error(JSON.stringify({ event: "channel_secret_unreadable", channel_id: channel.id, error: String(err) }));
    const error = "the channel's stored URL or secret could not be opened (replace the channel to store them again)";
    return { statusCode: null, delivered: false, transient: false, error };
  }
  const { url, secret } = opened;
  const secrets = [url, secret, new URL(url).pathname, new URL(url).search.slice(1)].filter((s) => s && s.length > 3);
  const request = await requestOf(channel, secret, webhookId, payload, now);
  let res: Response;
  try {
    res = await outboundFetch(
      url,
      {
        method: "POST",
        body: request.body,
        headers: request.headers,
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      },
      { policy },
    );
  } catch (err) {
    if (err instanceof OutboundTargetError) {
      return { statusCode: null, delivered: false, transient: false, error: excerpt(err.message, secrets) };
    }
    const timeout = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    if (!timeout)
      logNetworkFailure(
        { source: "notification_channel", request_id: webhookId, channel_id: channel.id },
        err,
        secrets,
      );
    const error = timeout ? `no answer within ${SEND_TIMEOUT_MS / 1000} s` : `network error: ${networkFailure(err)}`;
    return { statusCode: null, delivered: false, transient: true, error };
  }
  const text = await res.text().catch(() => "");
  if (res.ok) return { statusCode: res.status, delivered: true, transient: false, error: null };
  logUpstreamFailure(
    { source: "notification_channel", status: res.status, request_id: webhookId, channel_id: channel.id },
    text,
    secrets,
  );
  const transient = res.status === 408 || res.status === 429 || res.status >= 500;
  const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
  return {
    statusCode: res.status,
    delivered: false,
    transient,
    ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
    error: excerpt(`HTTP ${res.status}${text ? `: ${text}` : ""}`, secrets),
  };
}

export interface DeliveryEnv {
  DB: D1Database;
  ENCRYPTION_KEYS: string;
  ALLOW_PRIVATE_TARGETS?: string;
}

/** What the queue does with the message: done (ack), or again after a delay. */
export type DeliveryOutcome = { retry: false } | { retry: true; delaySeconds: number };

async function record(db: Db, delivery: DeliveryRow, set: Partial<DeliveryRow>): Promise<void> {
  await db
    .update(notificationDeliveries)
    .set({ ...set, updatedAt: nowIso() })
    .where(and(eq(notificationDeliveries.id, delivery.id), eq(notificationDeliveries.status, "PENDING")));
}

/**
 * One attempt of a PENDING delivery, recorded in its log. A delivery that is no longer PENDING
 * (delivered, failed, dead: a message seen twice) is left alone, so a receiver never gets it twice
 * from us after a success was recorded.
 */
export async function attemptDelivery(
  env: DeliveryEnv,
  db: Db,
  deliveryId: string,
  tenantId: string,
): Promise<DeliveryOutcome> {
  const delivery = await db.query.notificationDeliveries.findFirst({
    where: and(eq(notificationDeliveries.id, deliveryId), eq(notificationDeliveries.tenantId, tenantId)),
  });
  if (delivery?.status !== "PENDING") return { retry: false };
  const channel = await getChannel(db, tenantId, delivery.channelId).catch(() => undefined);
  if (!channel?.enabled) {
    await record(db, delivery, {
      status: "FAILED",
      lastError: "the channel was disabled before the event could be sent",
    });
    return { retry: false };
  }
  const result = await sendToChannel(
    secretBox(env.ENCRYPTION_KEYS),
    outboundPolicy(env),
    channel,
    delivery.id,
    delivery.payload as unknown as WebhookPayload,
  );
  const attempts = delivery.attempts + 1;
  const seen = { attempts, lastStatusCode: result.statusCode, lastError: result.error };
  if (result.delivered) {
    await record(db, delivery, { ...seen, status: "DELIVERED" });
    return { retry: false };
  }
  if (!result.transient) {
    await record(db, delivery, { ...seen, status: "FAILED" });
    return { retry: false };
  }
  await record(db, delivery, seen);
  return { retry: true, delaySeconds: retryDelaySeconds(attempts, result.retryAfterSeconds) };
}

/** Deliveries whose retries are exhausted (the dead-letter queue's messages) are DEAD in their log. */
export async function markDead(db: Db, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await db
    .update(notificationDeliveries)
    .set({ status: "DEAD", updatedAt: nowIso() })
    .where(and(inArray(notificationDeliveries.id, deliveryIds), eq(notificationDeliveries.status, "PENDING")));
}
