import { z } from "@hono/zod-openapi";

export const TokenRequestSchema = z
  .union([
    z.strictObject({ api_key: z.string().min(1).max(256) }),
    z.strictObject({
      user: z.email().max(254).openapi({ description: "Platform administrator only: mint this user's token" }),
    }),
  ])
  .openapi("TokenRequest");

export const TokenResponseSchema = z
  .object({ access_token: z.string(), token_type: z.literal("Bearer"), expires_in: z.number().int() })
  .openapi("TokenResponse");
