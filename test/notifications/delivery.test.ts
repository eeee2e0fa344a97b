/**
 * Delivery through the notifications queue: each message is one attempt; 429, 5xx and network
 * errors are retried with exponential backoff (Retry-After honoured), other 4xx are final, the
 * dead-letter queue marks a delivery DEAD, and every attempt carries the same webhook-id. The
 * queue's redeliveries are driven here with createMessageBatch, as the queue would make them.
 */

import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { NotificationMessage } from "../../src/contracts/messages";
import worker from "../../src/index";
import { parseRetryAfter, retryDelaySeconds } from "../../src/notifications/delivery";
import { admin, call } from "../support/api";
import { receiver } from "../support/receivers";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

const channelsPath = (tenant: string) => `/api/backend/${tenant}/configuration/notifications/channels`;

/** A channel on a fresh receiver, and a PENDING delivery of an event to it (as a publish writes it). */
async function pendingDelivery(kind: "webhook" | "slack" = "webhook") {
  const tenant = await createTenant();
  const r = await receiver(kind);
  const made = await call("POST", channelsPath(tenant), {
    as: admin,
    body: { name: unique("ch"), type: kind === "slack" ? "SLACK" : "WEBHOOK", url: r.url },
  });
  expect(made.status).toBe(201);
  if (made.body.secret) await r.trust(made.body.secret);
  const id = `msg_${unique("d").replaceAll("-", "")}`;
  const now = new Date().toISOString();
  const payload = {
    type: "channel.test",
    timestamp: now,
    data: { channel: { id: made.body.id, name: "x" }, message: "hello" },
  };
  await env.DB.prepare(
    `insert into notification_deliveries (id, tenant_id, channel_id, event_key, event, payload, status, attempts, created_at, updated_at)
     values (?, ?, ?, ?, 'channel.test', ?, 'PENDING', 0, ?, ?)`,
  )
    .bind(id, tenant, made.body.id, `test:${id}`, JSON.stringify(payload), now, now)
    .run();
  return { tenant, channelId: made.body.id as number, id, r, url: r.url };
}

/** Hands the worker one message of `queue`, as its `attempts`-th delivery; returns what it did with it. */
async function consume(
  queue: "notifications" | "notifications-dlq",
  d: { id: string; tenant: string },
  attempts: number,
) {
  const batch = createMessageBatch<NotificationMessage>(queue, [
    { id: `q-${attempts}`, timestamp: new Date(), attempts, body: { delivery_id: d.id, tenant_id: d.tenant } },
  ]);
  // The delay a retry asks for is not in getQueueResult: record it from the message's retry() call.
  const delays: Array<number | undefined> = [];
  for (const m of batch.messages) {
    const retry = m.retry.bind(m);
    m.retry = (options?: QueueRetryOptions) => {
      delays.push(options?.delaySeconds);
      retry(options);
    };
  }
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch<never>, env);
  const result = await getQueueResult(batch, ctx);
  return {
    ...result,
    retryMessages: result.retryMessages.map((r: { msgId: string }, i: number) => ({ ...r, delaySeconds: delays[i] })),
  };
}

async function logOf(d: { tenant: string; channelId: number }) {
  const res = await call("GET", `${channelsPath(d.tenant)}/${d.channelId}/deliveries`, { as: admin });
  expect(res.status).toBe(200);
  return res.body as Array<{
    id: string;
    status: string;
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
  }>;
}

afterEach(() => vi.restoreAllMocks());

describe("backoff", () => {
  it("doubles from 30 s to an hour, and waits at least as long as Retry-After (at most 12 hours)", () => {
    expect([1, 2, 3, 4, 7, 8, 20].map((n) => retryDelaySeconds(n))).toEqual([30, 60, 120, 240, 1920, 3600, 3600]);
    expect(retryDelaySeconds(1, 600)).toBe(600);
    expect(retryDelaySeconds(5, 10)).toBe(480);
    expect(retryDelaySeconds(1, 10 ** 9)).toBe(43_200);
    expect(parseRetryAfter("120")).toBe(120);
    expect(parseRetryAfter(new Date(Date.now() + 90_000).toUTCString())).toBeGreaterThanOrEqual(88);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe("the notifications queue", () => {
  it("retries 5xx with backoff, then delivers; every attempt has the same webhook-id and verifies", async () => {
    const d = await pendingDelivery();
    await d.r.script([{ status: 503 }, { status: 500, body: "oops" }]);
    const first = await consume("notifications", d, 1);
    expect(first.retryMessages).toEqual([{ msgId: "q-1", delaySeconds: 30 }]);
    expect((await logOf(d))[0]).toMatchObject({ status: "PENDING", attempts: 1, last_status_code: 503 });
    const second = await consume("notifications", d, 2);
    expect(second.retryMessages).toEqual([{ msgId: "q-2", delaySeconds: 60 }]);
    const third = await consume("notifications", d, 3);
    expect(third.retryMessages).toEqual([]);
    expect(third.explicitAcks).toEqual(["q-3"]);
    expect((await logOf(d))[0]).toMatchObject({
      id: d.id,
      status: "DELIVERED",
      attempts: 3,
      last_status_code: 200,
      last_error: null,
    });
    const seen = await d.r.requests();
    expect(seen).toHaveLength(3);
    expect(seen.map((s) => s.headers["webhook-id"])).toEqual([d.id, d.id, d.id]);
    expect(seen.every((s) => s.verified)).toBe(true);
    expect(new Set(seen.map((s) => s.body)).size).toBe(1);
    // Delivered: the same message seen again sends nothing.
    const again = await consume("notifications", d, 4);
    expect(again.explicitAcks).toEqual(["q-4"]);
    expect(await d.r.requests()).toHaveLength(3);
  });

  it("honours a 429's Retry-After", async () => {
    const d = await pendingDelivery();
    await d.r.script([{ status: 429, headers: { "Retry-After": "900" } }]);
    const result = await consume("notifications", d, 1);
    expect(result.retryMessages).toEqual([{ msgId: "q-1", delaySeconds: 900 }]);
    expect((await logOf(d))[0]).toMatchObject({ status: "PENDING", last_status_code: 429 });
  });

  it("does not retry other 4xx: the delivery is FAILED at once", async () => {
    for (const status of [400, 404, 410]) {
      const d = await pendingDelivery();
      await d.r.script([{ status, body: "no such hook" }]);
      const result = await consume("notifications", d, 1);
      expect(result.retryMessages, String(status)).toEqual([]);
      expect((await logOf(d))[0]).toMatchObject({ status: "FAILED", attempts: 1, last_status_code: status });
      expect((await logOf(d))[0]!.last_error).toContain("no such hook");
    }
  });

  it("retries a receiver that cannot be reached", async () => {
    const d = await pendingDelivery();
    // Point the sealed URL at a closed port: replace the channel with another URL (another host
    // and port: its secret is sent again).
    const moved = await call("PUT", `${channelsPath(d.tenant)}/${d.channelId}`, {
      as: admin,
      body: {
        name: unique("ch"),
        type: "WEBHOOK",
        url: "http://127.0.0.1:9/hook",
        secret: `whsec_${btoa("s".repeat(32))}`,
      },
    });
    expect(moved.status).toBe(200);
    const result = await consume("notifications", d, 1);
    expect(result.retryMessages).toEqual([{ msgId: "q-1", delaySeconds: 30 }]);
    expect((await logOf(d))[0]).toMatchObject({ status: "PENDING", attempts: 1, last_status_code: null });
    expect((await logOf(d))[0]!.last_error).toMatch(/network error/);
  });

  it("the dead-letter queue marks the delivery DEAD, keeping its last error", async () => {
    const d = await pendingDelivery();
    await d.r.script([{ status: 502 }]);
    await consume("notifications", d, 7);
    const dead = await consume("notifications-dlq", d, 1);
    expect(dead.explicitAcks.length + (dead.ackAll ? 1 : 0)).toBeGreaterThan(0);
    expect((await logOf(d))[0]).toMatchObject({ status: "DEAD", attempts: 1, last_status_code: 502 });
    // A DEAD delivery is not attempted again.
    await consume("notifications", d, 8);
    expect(await d.r.requests()).toHaveLength(1);
  });

  it("a disabled channel's pending delivery is not sent", async () => {
    const d = await pendingDelivery();
    await call("PUT", `${channelsPath(d.tenant)}/${d.channelId}`, {
      as: admin,
      body: { name: unique("ch"), type: "WEBHOOK", url: d.url, enabled: false },
    });
    const result = await consume("notifications", d, 1);
    expect(result.retryMessages).toEqual([]);
    expect((await logOf(d))[0]).toMatchObject({ status: "FAILED", attempts: 0 });
    expect(await d.r.requests()).toEqual([]);
  });

  it("never shows or logs a Slack URL's secret path, even when the receiver echoes it", async () => {
    const d = await pendingDelivery("slack");
    const secretPath = new URL(d.url).pathname;
    await d.r.script([{ status: 500, body: `upstream said: POST ${d.url} failed (${secretPath})` }]);
    const logged: string[] = [];
    for (const level of ["log", "error", "warn", "info"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(args.map(String).join(" "));
      });
    }
    await consume("notifications", d, 1);
    vi.restoreAllMocks();
    expect(logged.join("\n")).toContain("notification_channel");
    expect(logged.join("\n")).not.toContain(secretPath);
    const log = await logOf(d);
    expect(log[0]!.last_error).toContain("upstream said");
    expect(JSON.stringify(log)).not.toContain(secretPath);
    const channel = await call("GET", `${channelsPath(d.tenant)}/${d.channelId}`, { as: admin });
    expect(JSON.stringify(channel.body)).not.toContain(secretPath);
  });
});
