import { z } from "@hono/zod-openapi";

export const ApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().openapi({ description: "First characters of the key, to recognise it" }),
    created_at: z.string(),
    last_used_at: z.string().nullable(),
  })
  .openapi("ApiKey");

export const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z.string().openapi({ description: "The secret; shown in this response only" }),
}).openapi("CreatedApiKey");

export const ApiKeyListSchema = z.object({ keys: z.array(ApiKeySchema) }).openapi("ApiKeyList");

export const CreateApiKeyBody = z.strictObject({ name: z.string().trim().min(1).max(200) }).openapi("CreateApiKey");

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

export const KeyIdParam = z
  .string()
  .max(64)
  .openapi({ param: { name: "keyId", in: "path" } });
