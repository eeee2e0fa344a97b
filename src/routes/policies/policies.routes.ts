import { z } from "@hono/zod-openapi";
import { ATTRIBUTE_KINDS } from "../../db/schema";
import { PolicyOverridesSchema } from "../../detection/policies";
import { POLICY_KINDS } from "../../detection/policy";
import { PRIORITIES } from "../../detection/types";
import { onAsset } from "../access";
import { authedRoute, jsonBody, jsonResponse } from "../openapi";
import { IntId, TenantId } from "../params";

const tags = ["Policies and DQ score"];
const params = z.object({
  tenant: TenantId.openapi({ param: { name: "tenant", in: "path" } }),
  assetId: IntId("assetId"),
});
const base = "/api/backend/{tenant}/configuration/assets/{assetId}";

const PolicySettingsSchema = z
  .object({
    notify: z.boolean().openapi({
      description: "false mutes the asset's notifications (each policy can be muted in overrides[policy].notify)",
    }),
    auto_close_after: z.number().int().openapi({ description: "Consecutive clean scans that close an incident" }),
    adapt_after: z.number().int().openapi({
      description: "Scans at a new level after which the detector adopts it and the incident closes as NEW_NORMAL",
    }),
    attribute_kinds: z
      .record(z.string(), z.enum(ATTRIBUTE_KINDS))
      .openapi({ description: "Attribute kinds set by a user; the others are inferred (assets?with_attributes=true)" }),
    overrides: z.record(z.string(), z.unknown()),
    policies: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        description: z.string(),
        dimension: z.string(),
        kind: z.enum(POLICY_KINDS),
        enabled: z.boolean(),
        notify: z.boolean().openapi({ description: "Its alerts are notified (is_notification_enabled)" }),
        priority: z.enum(PRIORITIES),
        params: z.record(z.string(), z.unknown()),
      }),
    ),
    training: z
      .array(z.record(z.string(), z.unknown()))
      .openapi({ description: "Anomaly policies still learning a metric: points so far and points needed" }),
  })
  .openapi("AssetPolicies");

export const getPolicies = authedRoute({
  operationId: "getPolicies",
  access: onAsset("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/policies`,
  tags,
  summary: "The asset's policies as they apply (defaults + overrides) and their training state (PROJECT_VIEWER)",
  request: { params },
  responses: { 200: jsonResponse(PolicySettingsSchema, "Policies") },
});

export const putPolicies = authedRoute({
  operationId: "putPolicies",
  access: onAsset("PROJECT_EDITOR", { inBatch: true }),
  method: "put",
  path: `${base}/policies`,
  tags,
  summary: "Set the asset's policy overrides, incident thresholds and attribute kinds (PROJECT_EDITOR)",
  description:
    "`overrides` (per policy id: {enabled?, priority?, notify?, params?}) replaces the stored overrides when sent; " +
    "`auto_close_after` (1-100), `adapt_after` (1-100), `notify` and `attribute_kinds` likewise. Unknown policies, params or kinds are a 400.",
  request: {
    params,
    body: jsonBody(
      z
        .strictObject({
          overrides: PolicyOverridesSchema.optional(),
          auto_close_after: z.number().int().min(1).max(100).optional(),
          adapt_after: z.number().int().min(1).max(100).optional(),
          notify: z.boolean().optional().openapi({
            description: "false mutes every notification of the asset; true lets each policy's own setting decide",
          }),
          attribute_kinds: z
            .record(z.string().min(1).max(1000), z.enum(ATTRIBUTE_KINDS))
            .refine((r) => Object.keys(r).length <= 2000, "at most 2000 attributes")
            .optional()
            .openapi({
              description:
                "Per attribute name, its kind (identifier, code, quantity, text, timestamp), replacing the inferred one; replaces the stored map when sent",
            }),
        })
        .openapi("PutAssetPolicies", {
          example: {
            overrides: { completeness: { priority: "HIGH" }, distribution_drift: { notify: false } },
            adapt_after: 3,
            attribute_kinds: { payment_type: "code" },
          },
        }),
    ),
  },
  responses: { 200: jsonResponse(PolicySettingsSchema, "Policies") },
});
