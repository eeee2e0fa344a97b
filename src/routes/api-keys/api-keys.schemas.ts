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

export const CreateApiKeyBody = z
  .strictObject({ name: z.string().trim().min(1).max(200) })
  .openapi("CreateApiKey", { example: { name: "airflow" } });

export const KeyIdParam = z
  .string()
  .max(64)
  .openapi({ param: { name: "keyId", in: "path" } });
