import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { actorName } from "../../auth/principal";
import { secretBox } from "../../lib/crypto";
import { outboundPolicy } from "../../lib/outbound";
import type { ChannelCheck } from "../../notifications/channels";
import * as channels from "../../notifications/channels";
import { testChannel as sendTest } from "../../notifications/events";
import { settleInBatch, writeChecked, writeInBatch } from "../access";
import { auditedInBatch, auditInBatch } from "../audit/audit.middleware";
import { decodeCursor, takePage } from "../pagination";
import { ApiError } from "../problems";
import type * as routes from "./notification-channels.routes";
import { channelView, deliveryView } from "./notification-channels.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

/** The TENANT_ADMIN check, for the batch that reads the channel (settled as the request's verdict). */
function adminCheck(c: Context<AppEnv>, tenant: string): ChannelCheck {
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  return {
    read: check.read,
    settle: (rows) => settleInBatch(c, () => check.settle(rows as Awaited<typeof check.read>)),
  };
}

/**
 * One round trip: the access check, the tenant's projects, the INSERT (conditioned on the same
 * access, the projects named and the tenant's room; the name's unique index answers a clash, 409)
 * and its audit row are one batch.
 */
export const createChannel: Handler<"createChannel"> = async (c) => {
  const { tenant } = c.req.valid("param");
  const input = c.req.valid("json");
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const create = await channels.createChannelStatements(
    c.var.db,
    secretBox(c.env.ENCRYPTION_KEYS),
    outboundPolicy(c.env),
    tenant,
    input,
    actorName(c.var.principal),
    check.allowed,
  );
  const { results } = await writeChecked(c, check, [create.found, create.insert], { status: 201 }, create.claim);
  const row = channels.channelCreated(input, results[0], results[1]);
  return c.json({ ...channelView(row), ...(create.secret ? { secret: create.secret } : {}) }, 201);
};

export const listChannels: Handler<"listChannels"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  return c.json((await channels.listChannels(c.var.db, tenant)).map(channelView), 200);
};

export const getChannel: Handler<"getChannel"> = async (c) => {
  const { tenant, channelId } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  return c.json(channelView(await channels.getChannel(c.var.db, tenant, channelId)), 200);
};

/**
 * Two round trips: the access check, the channel and the tenant's projects are read in one batch;
 * the stored URL and secret are opened and sealed again in the Worker (channels.replaceChannel),
 * then the UPDATE and its audit row are one batch.
 */
export const replaceChannel: Handler<"replaceChannel"> = async (c) => {
  const { tenant, channelId } = c.req.valid("param");
  const box = secretBox(c.env.ENCRYPTION_KEYS);
  const { row, secret } = await channels.replaceChannel(
    c.var.db,
    box,
    outboundPolicy(c.env),
    tenant,
    channelId,
    c.req.valid("json"),
    [auditInBatch(c, 200)],
    adminCheck(c, tenant),
  );
  auditedInBatch(c, 200);
  return c.json({ ...channelView(row), ...(secret ? { secret } : {}) }, 200);
};

export const deleteChannel: Handler<"deleteChannel"> = async (c) => {
  const { tenant, channelId } = c.req.valid("param");
  // One round trip: the access check, the delete (conditioned on it) and its audit row (written if it deleted).
  const check = c.var.access.tenantInBatch(tenant, "TENANT_ADMIN");
  const remove = channels.deleteChannelStatement(c.var.db, tenant, channelId, check.allowed);
  const [, gone] = await writeInBatch(c, check, [remove, auditInBatch(c, 200)]);
  channels.channelDeleted(gone);
  auditedInBatch(c, 200);
  return c.json({ message: "Notification channel deleted" }, 200);
};

export const testChannel: Handler<"testChannel"> = async (c) => {
  const { tenant, channelId } = c.req.valid("param");
  // Two round trips, the floor: the access check and the channel are read in one batch before its
  // receiver is called (the URL is sealed in the row); the delivery and the audit row after.
  const result = await sendTest(
    c.var.db,
    secretBox(c.env.ENCRYPTION_KEYS),
    outboundPolicy(c.env),
    tenant,
    channelId,
    [auditInBatch(c, 200)],
    adminCheck(c, tenant),
  );
  auditedInBatch(c, 200);
  return c.json(
    { webhook_id: result.webhookId, delivered: result.delivered, status_code: result.statusCode, error: result.error },
    200,
  );
};

function deliveryCursor(cursor: string | undefined): [string, string] | undefined {
  if (cursor === undefined) return undefined;
  const key = decodeCursor(cursor);
  if (key.length !== 2 || typeof key[0] !== "string" || typeof key[1] !== "string") {
    throw ApiError.badRequest("Invalid cursor", [{ path: "query.cursor", message: "not a cursor of this list" }]);
  }
  return [key[0], key[1]];
}

export const listDeliveries: Handler<"listDeliveries"> = async (c) => {
  const { tenant, channelId } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const { limit, cursor } = c.req.valid("query");
  const rows = await channels.listDeliveries(c.var.db, tenant, channelId, limit, deliveryCursor(cursor));
  return c.json(takePage(c, rows, limit, (r) => [r.createdAt, r.id]).map(deliveryView), 200);
};
