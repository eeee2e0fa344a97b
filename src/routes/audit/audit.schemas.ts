import { z } from "@hono/zod-openapi";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageQuery } from "../pagination";
import { isoTime } from "../params";

export const AuditEventSchema = z
  .object({
    id: z.number().int(),
    at: z.string().openapi({
      description:
        "When the write was answered (ISO 8601 UTC); for a tally (count > 1 possible), the first of its requests",
    }),
    last_at: z.string().openapi({
      description: "When the last request the entry stands for was answered: `at` for a single write",
    }),
    count: z
      .number()
      .int()
      .min(1)
      .openapi({
        description:
          "Requests the entry stands for: 1 for a write to the configuration; for the data plane's requests (uploads, " +
          "scan triggers, a job's alerts), those of one UTC day with the same method, route, actor, credential and " +
          "status, and the same path when refused",
      }),
    actor: z.string().openapi({
      description:
        "The e-mail of the person behind the credential; without one, the name created_by records (platform-admin, api-key:key_…)",
    }),
    credential: z.string().openapi({ description: '"token", "api-key:key_…" or "platform-admin"; never a secret' }),
    method: z.enum(["POST", "PUT", "PATCH", "DELETE"]),
    route: z.string().openapi({
      description: "The operation's path template",
      example: "/api/backend/:tenant/configuration/projects",
    }),
    path: z.string().openapi({
      description:
        "The path that was called; for a tally of the data plane's accepted (2xx) requests, the route with only the " +
        "tenant filled in (e.g. /v2/acme/sources/:source_id/batch_data): it counts every asset's, each of which has " +
        "its scan job",
    }),
    status: z.number().int().openapi({ description: "The HTTP status of the answer" }),
    outcome: z.enum(["success", "failure"]).openapi({ description: "success when status < 400" }),
    request_id: z.string().openapi({ description: "The request's id; for a tally, its last request's" }),
  })
  .openapi("AuditEvent");

/** The audit log can be long: it is paged by default (100), unlike the spec's lists. */
export const AuditQuery = PageQuery.extend({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .openapi({ description: `Page size (1-${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE})` }),
  actor: z.string().max(320).optional().openapi({ description: "Only this actor (e-mail or credential name)" }),
  method: z.enum(["POST", "PUT", "PATCH", "DELETE"]).optional(),
  outcome: z.enum(["success", "failure"]).optional(),
  from_time: isoTime("Only events at or after this time (ISO 8601); a tally, if its last_at is"),
  to_time: isoTime("Only events at or before this time (ISO 8601); a tally, if its at is"),
  path: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .openapi({
      description:
        "Only events of this path, as called (e.g. /v2/acme/sources/42/batch_data); for a path of the data plane, the " +
        "tallies of its route's accepted requests too (their path shows the route: they count every asset's)",
    }),
});
