import { createRoute, OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { ZodError } from "zod";
import type { AppEnv } from "../app-env";
import { authenticate } from "../auth/authenticate";
import { ApiError, type FieldError } from "./problems";

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().openapi({ description: "Machine-readable error code" }),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .openapi({ description: "Every validation issue, with the path of the field" }),
    request_id: z.string().optional(),
  })
  .openapi("Problem", { description: "RFC 9457 problem details" });

export const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ProblemSchema } },
});

/** Error responses every authenticated route may give. */
export const ERROR_RESPONSES = {
  400: problem("Invalid request: body, query or path parameters (nothing was written)"),
  401: problem("No credentials, or invalid or expired credentials"),
  403: problem("Authenticated, but the role does not allow this"),
  404: problem("Unknown resource, or one of another tenant"),
} as const;

export const CONFLICT_RESPONSE = { 409: problem("Conflict with the current state (e.g. a duplicate name)") } as const;

export const SECURITY: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];

/** Where a zod issue came from, as a prefix of its path in `errors`. */
const TARGET_PREFIX: Record<string, string> = { json: "body", query: "query", param: "path", header: "header" };

export function validationProblem(error: ZodError, target: string): ApiError {
  const prefix = TARGET_PREFIX[target] ?? target;
  const errors: FieldError[] = error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].join("."),
    message: issue.message,
  }));
  return ApiError.badRequest("The request is invalid; see errors", errors);
}

/** A router whose validation failures become 400 problems listing every issue. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationProblem(result.error as ZodError, result.target);
    },
  });
}

/** A route that requires credentials: adds security, the authenticate middleware and the error responses. */
export function authedRoute<const R extends Omit<RouteConfig, "middleware" | "security">>(config: R) {
  return createRoute({
    ...config,
    security: SECURITY,
    middleware: [authenticate] as const,
    responses: { ...ERROR_RESPONSES, ...config.responses },
  });
}

/** JSON request body, required. */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { "application/json": { schema } } } as const;
}

/** A JSON response of the given schema. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}

export const MessageSchema = z.object({ message: z.string() }).openapi("Message");

/** Response headers of deprecated endpoints (RFC 9745 Deprecation, RFC 8288 Link successor). */
export const DEPRECATION_DATE = "2026-01-01T00:00:00Z";
export function deprecationHeaders(successor: string): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(Date.parse(DEPRECATION_DATE) / 1000)}`,
    Link: `<${successor}>; rel="successor-version"`,
  };
}
