import { createRoute, OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { ZodError } from "zod";
import type { AppEnv } from "../app-env";
import { BOOKMARK_HEADER } from "../db/sessions";
import type { FieldProblem } from "../lib/errors";
import { jsonValueProblems, MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH, pathProblems, queryProblems } from "../lib/input";
import { readBytes } from "../lib/streams";
import { authorize, documentedGrant, type Grant } from "./access";
import { authenticate } from "./authenticate";
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
  429: problem("The credential's request budget is spent; the Retry-After header says when to try again"),
} as const;

/** A request that queues a scan job: the queue may refuse it for now (the job is then FAILED, never left QUEUED). */
export const QUEUE_UNAVAILABLE_RESPONSE = {
  503: problem(
    "The scan queue did not take the job: send the request again after Retry-After (the job it would have been is FAILED)",
  ),
} as const;

export const CONFLICT_RESPONSE = { 409: problem("Conflict with the current state (e.g. a duplicate name)") } as const;

export const SECURITY: Record<string, string[]>[] = [{ ApiKey: [] }, { Bearer: [] }];

/** Where a zod issue came from, as a prefix of its path in `errors`. */
const TARGET_PREFIX: Record<string, string> = { json: "body", query: "query", param: "path", header: "header" };

export function validationProblem(error: ZodError, target: string): ApiError {
  const prefix = TARGET_PREFIX[target] ?? target;
  const errors: FieldError[] = error.issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].join("."),
    // A record key's own problems, not zod's "Invalid key in record".
    message:
      issue.code === "invalid_key" && issue.issues.length > 0
        ? issue.issues.map((inner) => inner.message).join("; ")
        : issue.message,
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

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

const fieldErrors = (prefix: string, problems: FieldProblem[]): FieldError[] =>
  problems.map((p) => ({ path: p.field ? `${prefix}.${p.field}` : prefix, message: p.message }));

const tooLarge = () =>
  new ApiError(413, "payload_too_large", `A JSON body may have at most ${MAX_JSON_BODY_BYTES} bytes`);

/** Checks a JSON body (size, encoding, depth, strings) and hands its bytes on to the route's validator. */
async function checkJsonBody(c: Context<AppEnv>, body: ReadableStream<Uint8Array>): Promise<void> {
  const encoding = c.req.header("content-encoding")?.trim().toLowerCase();
  if (encoding && encoding !== "identity") {
    throw new ApiError(415, "unsupported_media_type", "A JSON body must be sent as is, without Content-Encoding");
  }
  if (Number(c.req.header("content-length")) > MAX_JSON_BODY_BYTES) throw tooLarge();
  // A longer body is a 413, whatever its Content-Length said.
  const bytes = await readBytes(body, MAX_JSON_BODY_BYTES, tooLarge);
  // The stream is spent: the request goes on with the bytes read (as Hono's bodyLimit does).
  c.req.raw = new Request(c.req.raw, { body: bytes });
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return; // The route's validator reports malformed JSON (and a route without a body ignores it).
  }
  const problems = jsonValueProblems(value);
  if (problems.length > 0) {
    throw ApiError.badRequest(
      `The body has strings that are not well-formed Unicode, or is nested deeper than ${MAX_JSON_DEPTH} levels; see errors`,
      fieldErrors("body", problems),
    );
  }
}

/**
 * Refuses a path or query string that is not percent-encoded UTF-8, naming each parameter (the
 * path as a whole on a URL no route answers).
 */
export function checkUrl(c: Context<AppEnv>): void {
  // A request's URL is serialized ASCII (the URL parser percent-encodes the rest): without an
  // escape, every segment and parameter decodes to itself and is well-formed. Most requests end
  // here, before parsing the URL again and finding the route's template (issue 40, point 3).
  if (!c.req.url.includes("%")) return;
  const url = new URL(c.req.url);
  // The route that will answer names the path's parameters (middleware routes are method ALL).
  const template = matchedRoutes(c).find((route) => route.method !== "ALL")?.path;
  const errors = [
    ...fieldErrors("path", pathProblems(url.pathname, template)),
    ...fieldErrors("query", queryProblems(url.search)),
  ];
  if (errors.length > 0) throw ApiError.badRequest("The URL is not valid percent-encoded UTF-8; see errors", errors);
}

/**
 * Refuses, before any handler runs, input that must not reach the domain (src/lib/input.ts): a
 * path or query string that is not percent-encoded UTF-8, and a JSON body over MAX_JSON_BODY_BYTES
 * (413), with a Content-Encoding (415), nested deeper than MAX_JSON_DEPTH or holding a lone
 * surrogate (400). Each 400 names its fields (`path.tenant`, `query.delimiter`, `body.payload.path`).
 * A route's middleware: on an authenticated route it runs after the access check, so a caller
 * without access never has its input read.
 */
export const checkInput: MiddlewareHandler<AppEnv> = async (c, next) => {
  checkUrl(c);
  const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim();
  if (c.req.raw.body && JSON_MEDIA_TYPE.test(type)) await checkJsonBody(c, c.req.raw.body);
  await next();
};

const BOOKMARK_DESCRIPTION =
  "Read replication: a read may be answered by a replica of the database near the caller. Every answer " +
  "that read or wrote data carries a bookmark of the database state it saw in this header; send the last " +
  "bookmark you received with your next request, and it reads at least that state: you read your own " +
  "writes. Without one, a read may see a replica a little behind the latest writes. Opaque: echo it as " +
  "received; a value this API did not give out is a 400.";

type Document = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;

/**
 * Declares the session bookmark (src/db/sessions.ts) on every authenticated operation of the
 * document: an optional request header and a header of each of its responses.
 */
export function documentSessionBookmark(doc: Document): Document {
  const schema = { type: "string" as const, pattern: "^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$" };
  doc.components ??= {};
  doc.components.parameters = {
    ...doc.components.parameters,
    SessionBookmark: {
      name: BOOKMARK_HEADER,
      in: "header",
      required: false,
      description: BOOKMARK_DESCRIPTION,
      schema,
    },
  };
  doc.components.headers = {
    ...doc.components.headers,
    SessionBookmark: { description: BOOKMARK_DESCRIPTION, schema },
  };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const method of ["get", "put", "post", "delete", "patch", "head", "options"] as const) {
      const op = item?.[method];
      if (!op?.security?.length) continue;
      op.parameters = [...(op.parameters ?? []), { $ref: "#/components/parameters/SessionBookmark" }];
      for (const response of Object.values(op.responses ?? {})) {
        if ("$ref" in response) continue;
        response.headers = { ...response.headers, [BOOKMARK_HEADER]: { $ref: "#/components/headers/SessionBookmark" } };
      }
    }
  }
  return doc;
}

/**
 * A route that requires credentials and says who may call it (`access`, src/routes/access.ts):
 * adds security, the error responses and the middleware that authenticates, checks that access,
 * and only then reads the input (checkInput, then the route's validators).
 */
export function authedRoute<const R extends Omit<RouteConfig, "middleware" | "security"> & { access: Grant }>(
  config: R,
) {
  const { access, ...route } = config;
  return createRoute({
    ...route,
    security: SECURITY,
    "x-access": documentedGrant(access),
    middleware: [authenticate, authorize(access), checkInput] as const,
    responses: { ...ERROR_RESPONSES, ...route.responses },
  });
}

/** A route anyone may call (its handler checks what it needs): the input checks of every route. */
export function publicRoute<const R extends Omit<RouteConfig, "middleware">>(config: R) {
  return createRoute({ ...config, middleware: [checkInput] as const });
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
