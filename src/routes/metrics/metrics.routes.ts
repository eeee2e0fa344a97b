import { z } from "@hono/zod-openapi";
import { onAsset } from "../access";
import { authedRoute, jsonResponse } from "../openapi";
import { IntId, TenantParams } from "../params";

const tags = ["Policies and DQ score"];
const base = "/api/backend/{tenant}/configuration/assets/{assetId}/metrics";
const params = TenantParams.extend({ assetId: IntId("assetId") });

const BandSchema = z.object({ low: z.number(), high: z.number() }).openapi("Band");

export const listMetrics = authedRoute({
  operationId: "listMetrics",
  access: onAsset("PROJECT_VIEWER"),
  method: "get",
  path: base,
  tags,
  summary: "The metrics in an asset's history: asset-level ones, or one attribute's (PROJECT_VIEWER)",
  request: {
    params,
    query: z.object({
      attribute: z.string().min(1).max(1000).optional().openapi({
        description: "An attribute's name: its metrics (`attr:<name>:<stat>`); omitted: the asset-level metrics",
        example: "amount",
      }),
    }),
  },
  responses: {
    200: jsonResponse(
      z.array(
        z
          .object({
            metric: z.string().openapi({ example: "row_count" }),
            points: z.number().int().openapi({ description: "Points stored" }),
            last_time: z.string().openapi({ description: "Scan time of the newest point" }),
            last_value: z.number().openapi({ description: "The newest point, as measured" }),
          })
          .openapi("MetricSummary"),
      ),
      "Metrics, by name",
    ),
  },
});

export const metricHistory = authedRoute({
  operationId: "metricHistory",
  access: onAsset("PROJECT_VIEWER"),
  method: "get",
  path: `${base}/history`,
  tags,
  summary: "A metric's recent points (up to 120), each with its expected band and its alerts (PROJECT_VIEWER)",
  description:
    "The band of a point is the one its alert was judged by, else the anomaly detector's band rebuilt from the points " +
    "before it (null while it was still learning). An unknown metric answers an empty list of points.",
  request: {
    params,
    query: z.object({
      metric: z
        .string()
        .min(1)
        .max(2000)
        .openapi({ description: "The metric's name, as `listMetrics` gives it", example: "row_count" }),
    }),
  },
  responses: {
    200: jsonResponse(
      z
        .object({
          metric: z.string(),
          points: z.array(
            z
              .object({
                job_id: z.string(),
                time: z.string(),
                value: z.number(),
                excluded: z.boolean().openapi({ description: "Kept out of the baselines (anomalous, not accepted)" }),
                expected: BandSchema.nullable(),
                alerts: z.array(
                  z.object({ id: z.number().int(), type: z.string(), priority: z.string(), description: z.string() }),
                ),
              })
              .openapi("MetricPoint"),
          ),
        })
        .openapi("MetricHistory"),
      "Points, oldest first",
    ),
  },
});
