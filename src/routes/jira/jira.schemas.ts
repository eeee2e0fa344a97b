import { z } from "@hono/zod-openapi";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * The Jira site: https, no query, fragment or user info; a trailing slash is dropped. Plain
 * http is accepted for loopback hosts only (local development and tests; unreachable when deployed).
 */
export const JiraBaseUrl = z
  .url()
  .max(500)
  .refine((s) => {
    const u = URL.canParse(s) ? new URL(s) : undefined;
    return u?.protocol === "https:" || (u?.protocol === "http:" && LOOPBACK.has(u.hostname));
  }, "must be an https URL")
  .refine((s) => {
    const u = URL.canParse(s) ? new URL(s) : undefined;
    return !u || (!u.search && !u.hash && !u.username && !u.password);
  }, "must have no query, fragment or credentials")
  .transform((s) => {
    const u = new URL(s);
    return `${u.origin}${u.pathname}`.replace(/\/+$/, "");
  })
  .openapi({ example: "https://acme.atlassian.net" });

export const PutJiraIntegrationBody = z
  .strictObject({
    base_url: JiraBaseUrl,
    email: z.email().max(254).openapi({ description: "The Atlassian account the API token belongs to" }),
    api_token: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .openapi({ description: "Write-only, stored encrypted; required on create, kept when left out on replace" }),
    default_template_id: z
      .number()
      .int()
      .positive()
      .nullable()
      .optional()
      .openapi({ description: "A ticket template opened automatically when an incident opens; null = never" }),
  })
  .openapi("PutJiraIntegration", {
    example: {
      base_url: "https://acme.atlassian.net",
      email: "dq-bot@acme.com",
      api_token: "ATATT3xFfGF0example",
      default_template_id: null,
    },
  });

export const JiraIntegrationSchema = z
  .object({
    base_url: z.string(),
    email: z.string(),
    api_token_set: z.boolean().openapi({ description: "The token itself is never returned" }),
    default_template_id: z.number().int().nullable(),
    updated_at: z.string(),
  })
  .openapi("JiraIntegration");
