import { z } from "@hono/zod-openapi";
import { inTenant, inTenantInBatch } from "../access";
import { authedRoute, CONFLICT_RESPONSE, jsonBody, jsonResponse, MessageSchema } from "../openapi";
import { IntId, TenantParams } from "../params";
import {
  ChannelBody,
  ChannelSchema,
  ChannelTestSchema,
  ChannelWithSecretSchema,
  DeliveriesQuery,
  DeliverySchema,
  ReplaceChannelBody,
} from "./notification-channels.schemas";

const tags = ["Notifications"];
const base = "/api/backend/{tenant}/configuration/notifications/channels";
const ChannelParams = TenantParams.extend({ channelId: IntId("channelId") });

export const createChannel = authedRoute({
  operationId: "createChannel",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "post",
  path: base,
  tags,
  summary: "Create a notification channel (TENANT_ADMIN)",
  description:
    "A WEBHOOK channel gets signed Standard Webhooks requests (see the document's webhooks); a SLACK channel " +
    "Block Kit messages. Without `secret`, a WEBHOOK channel's signing secret is generated and returned once, here.",
  request: { params: TenantParams, body: jsonBody(ChannelBody) },
  responses: { 201: jsonResponse(ChannelWithSecretSchema, "Created"), ...CONFLICT_RESPONSE },
});

export const listChannels = authedRoute({
  operationId: "listChannels",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: base,
  tags,
  summary: "The tenant's notification channels, their URLs shown as scheme and host (TENANT_ADMIN)",
  request: { params: TenantParams },
  responses: { 200: jsonResponse(z.array(ChannelSchema), "Channels") },
});

export const getChannel = authedRoute({
  operationId: "getChannel",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: `${base}/{channelId}`,
  tags,
  summary: "A notification channel, without its secrets: its URL as scheme and host (TENANT_ADMIN)",
  request: { params: ChannelParams },
  responses: { 200: jsonResponse(ChannelSchema, "The channel") },
});

export const replaceChannel = authedRoute({
  operationId: "replaceChannel",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "put",
  path: `${base}/{channelId}`,
  tags,
  summary: "Replace a notification channel (TENANT_ADMIN)",
  description:
    "Every field as on create; omitted optional fields take their defaults. `url` left out, or sent as read (scheme " +
    "and host), keeps the stored URL; another `url` replaces it whole. A WEBHOOK keeps its signing secret when " +
    "`secret` is omitted, unless its URL's host changes (then `secret` must be sent: a 400 otherwise); a former " +
    "SLACK channel gets a generated one, returned once.",
  request: { params: ChannelParams, body: jsonBody(ReplaceChannelBody) },
  responses: { 200: jsonResponse(ChannelWithSecretSchema, "Replaced"), ...CONFLICT_RESPONSE },
});

export const deleteChannel = authedRoute({
  operationId: "deleteChannel",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "delete",
  path: `${base}/{channelId}`,
  tags,
  summary: "Delete a notification channel and its delivery log (TENANT_ADMIN)",
  request: { params: ChannelParams },
  responses: { 200: jsonResponse(MessageSchema, "Deleted") },
});

export const testChannel = authedRoute({
  operationId: "testChannel",
  access: inTenantInBatch("TENANT_ADMIN"),
  method: "post",
  path: `${base}/{channelId}/test`,
  tags,
  summary: "Send a channel.test event now and answer with the receiver's status (TENANT_ADMIN)",
  request: { params: ChannelParams },
  responses: { 200: jsonResponse(ChannelTestSchema, "What the receiver answered") },
});

export const listDeliveries = authedRoute({
  operationId: "listDeliveries",
  access: inTenant("TENANT_ADMIN"),
  method: "get",
  path: `${base}/{channelId}/deliveries`,
  tags,
  summary: "The channel's delivery log, newest first (TENANT_ADMIN)",
  description: "Each event sent to the channel: its status, attempts and the receiver's last answer (a short excerpt).",
  request: { params: ChannelParams, query: DeliveriesQuery },
  responses: { 200: jsonResponse(z.array(DeliverySchema), "Deliveries") },
});
