import { z } from "@hono/zod-openapi";
import { DQ_DIMENSIONS } from "../../contracts/dimensions";

const weight = z.number().nonnegative().max(1_000_000);

export const DqWeightsSchema = z
  .object({ completeness: z.number(), accuracy: z.number(), consistency: z.number(), timeliness: z.number() })
  .openapi("DqScoreWeights", { description: "Non-negative, summing to 1" });

export const DqScoreConfigResponse = z
  .object({ dq_score_config: z.object({ enabled: z.boolean(), weights: DqWeightsSchema }) })
  .openapi("DqScoreConfig");

export const PutDqScoreConfigBody = z
  .strictObject({
    enabled: z.boolean().optional().openapi({ description: "Omitted keeps the current value" }),
    weights: z
      .strictObject({ completeness: weight, accuracy: weight, consistency: weight, timeliness: weight })
      .refine((w) => DQ_DIMENSIONS.some((d) => w[d] > 0), "must not all be zero")
      .optional()
      .openapi({
        description:
          "All four, non-negative, not all zero; stored and returned scaled to sum 1. Omitted keeps the current weights",
      }),
  })
  .openapi("PutDqScoreConfig", {
    example: { enabled: true, weights: { completeness: 0.4, accuracy: 0.3, consistency: 0.2, timeliness: 0.1 } },
  });
