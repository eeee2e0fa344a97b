import { z } from "@hono/zod-openapi";

export const TokenRequestSchema = z
  .union([
    z.strictObject({ api_key: z.string().min(1).max(256) }),
    z.strictObject({
      user: z.email().max(254).openapi({ description: "Platform administrator only: mint this user's token" }),
    }),
  ])
  .openapi("TokenRequest", { example: { api_key: "dqm_4f9c2a1b7e8d4c3a9b6e5f1a2d3c4b5a" } });

export const TokenResponseSchema = z
  .object({ access_token: z.string(), token_type: z.literal("Bearer"), expires_in: z.number().int() })
  .openapi("TokenResponse");
