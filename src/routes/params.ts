import { z } from "@hono/zod-openapi";

/**
 * Words that stand where a tenant id could stand in some path (e.g. /api/backend/v2/…,
 * /auth/token, /{tenant}/configuration/…): no tenant may be named after them.
 */
const RESERVED_TENANT_IDS = new Set([
  "api",
  "auth",
  "backend",
  "configuration",
  "data",
  "docs",
  "health",
  "incidents",
  "integrations",
  "openapi",
  "private",
  "projects",
  "sources",
  "tenants",
  "token",
]);

export const TENANT_ID_PATTERN = /^[a-z][a-z0-9-]{1,62}[a-z0-9]$/;

/** A tenant id: 3-64 lower-case letters, digits and inner hyphens, no version word (v1, v2…), no reserved word. */
export const TenantId = z
  .string()
  .regex(
    TENANT_ID_PATTERN,
    "must be 3-64 characters: lower-case letters, digits and inner hyphens, starting with a letter",
  )
  .refine((id) => !RESERVED_TENANT_IDS.has(id) && !/^v\d+$/.test(id), "is a reserved word")
  .openapi({ example: "acme" });

const tenantParam = TenantId.openapi({ param: { name: "tenant", in: "path" } });

export const TenantParams = z.object({ tenant: tenantParam });

/**
 * A positive integer id in a path, written as one: decimal digits, no sign, exponent, leading
 * zero or space. Number() would read "1e0", "0x1", " 1" or "1." as 1, so a malformed id could
 * reach (and delete) a real resource; it is a 400 instead.
 */
export const IntId = (name: string) =>
  z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, "must be a positive integer, written in decimal digits")
    .transform(Number)
    .pipe(z.number().int().positive().max(Number.MAX_SAFE_INTEGER))
    .openapi({ param: { name, in: "path" }, type: "integer", minimum: 1, example: 1 });

export const ProjectParams = z.object({ tenant: tenantParam, projectId: IntId("projectId") });

/** The project assets or source groups move to. */
export const MoveParams = TenantParams.extend({ targetProjectId: IntId("targetProjectId") });

/** A user's e-mail, lower-cased: the identity of users. */
export const Email = z
  .email()
  .max(254)
  .transform((e) => e.toLowerCase())
  .openapi({ example: "ada@example.com" });

/** Query parameters of a list are coerced from strings. */
export { z };

/** ISO 8601: a date-time with Z or an offset, or a date (midnight UTC); normalised to UTC. */
export const isoTime = (description: string) =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()])
    .transform((s) => new Date(s).toISOString())
    .optional()
    .openapi({ type: "string", description, example: "2026-01-01T00:00:00Z" });
