/**
 * The edge's errors: every failure becomes one RFC 9457 problem here, and only here. Handlers
 * throw ApiError for what is HTTP's own business (a missing Content-Length, a media type);
 * domain code throws domain errors (src/lib/errors.ts), mapped by `toApiError`.
 */

import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isTenantMoving } from "../db/shards";
import { conflictOf, vanishedReferenceOf } from "../db/unique";
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidInputError,
  LimitExceededError,
  NotFoundError,
  RateLimitedError,
  UnauthenticatedError,
  UnavailableError,
} from "../lib/errors";
import { ConnectorError } from "../scan/connectors/types";

/** One field-level problem of a request, with the path of the field (e.g. "body.storage.type"). */
export interface FieldError {
  path: string;
  message: string;
}

/** Machine-readable error codes, one per kind of failure a client can act on. */
export type ErrorCode =
  | "bad_request"
  | "validation_failed"
  | "malformed_json"
  | "unauthenticated"
  | "token_expired"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "tenant_moving"
  | "length_required"
  | "payload_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "source_error"
  | "misconfigured"
  | "unavailable"
  | "internal_error";

const TITLES: Record<ErrorCode, string> = {
  bad_request: "Bad request",
  validation_failed: "Request validation failed",
  malformed_json: "Malformed JSON body",
  unauthenticated: "Authentication required",
  token_expired: "Token expired",
  forbidden: "Forbidden",
  not_found: "Not found",
  conflict: "Conflict",
  tenant_moving: "The tenant is moving to another database",
  length_required: "Content-Length required",
  payload_too_large: "Payload too large",
  unsupported_media_type: "Unsupported media type",
  rate_limited: "Too many requests",
  source_error: "The data source refused or failed the request",
  misconfigured: "The service is not configured safely",
  unavailable: "Temporarily unavailable",
  internal_error: "Internal server error",
};

/** An HTTP problem: status, machine code, detail and field errors; `onError` renders it. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    detail: string,
    readonly errors?: FieldError[],
    /** Response headers that belong to the problem (e.g. Retry-After of a 429). */
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = "ApiError";
  }

  get title(): string {
    return TITLES[this.code];
  }

  static badRequest(detail: string, errors?: FieldError[]) {
    return new ApiError(400, errors ? "validation_failed" : "bad_request", detail, errors);
  }
}

/** RFC 9457 problem details body, with our `code`, `errors` and `request_id` extensions. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: FieldError[];
  request_id?: string;
}

export function toProblem(err: ApiError, requestId?: string): Problem {
  return {
    type: `urn:dq-monitor:problem:${err.code}`,
    title: err.title,
    status: err.status,
    detail: err.message,
    code: err.code,
    ...(err.errors ? { errors: err.errors } : {}),
    ...(requestId ? { request_id: requestId } : {}),
  };
}

const HTTP_CODES: Partial<Record<number, ErrorCode>> = {
  400: "bad_request",
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
};

/**
 * A domain error's field paths are relative to the operation's input; the input of a GET is its
 * query string, of any other method its JSON body.
 */
function inputPrefix(method: string): string {
  return method === "GET" || method === "HEAD" ? "query" : "body";
}

function fromDomainError(err: DomainError, method: string): ApiError {
  if (err instanceof NotFoundError) return new ApiError(404, "not_found", err.message);
  if (err instanceof ConflictError) return new ApiError(409, "conflict", err.message);
  if (err instanceof ForbiddenError) return new ApiError(403, "forbidden", err.message);
  if (err instanceof UnauthenticatedError) {
    return new ApiError(401, err.expired ? "token_expired" : "unauthenticated", err.message);
  }
  if (err instanceof RateLimitedError) {
    return new ApiError(429, "rate_limited", err.message, undefined, {
      "Retry-After": String(err.retryAfterSeconds),
    });
  }
  if (err instanceof UnavailableError) {
    return new ApiError(503, "unavailable", err.message, undefined, {
      "Retry-After": String(err.retryAfterSeconds),
    });
  }
  if (err instanceof LimitExceededError) return new ApiError(413, "payload_too_large", err.message);
  if (err instanceof InvalidInputError) {
    if (err.fields.length === 0) return ApiError.badRequest(err.message);
    const prefix = inputPrefix(method);
    return ApiError.badRequest(
      err.message,
      err.fields.map((f) => ({ path: `${prefix}.${f.field}`, message: f.message })),
    );
  }
  return new ApiError(400, "bad_request", err.message);
}

/** Maps anything thrown to an ApiError; unexpected errors become a 500 without details. */
export function toApiError(err: unknown, method: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof DomainError) return fromDomainError(err, method);
  // A data source that refused a synchronous read (schema load): the request was fine, the source said no.
  if (err instanceof ConnectorError) return new ApiError(422, "source_error", `${err.kind}: ${err.message}`);
  // A write refused by a shard the tenant is moving away from (src/db/shards.ts): retried, it goes
  // to the tenant's database once the move has flipped (a second or two).
  if (isTenantMoving(err)) {
    return new ApiError(
      409,
      "tenant_moving",
      "The tenant is moving to another database; retry in a moment",
      undefined,
      {
        "Retry-After": "1",
      },
    );
  }
  // A write that lost a race on a unique name the domain did not catch is still that name's 409.
  const conflict = conflictOf(err) ?? vanishedReferenceOf(err);
  if (conflict) return fromDomainError(conflict, method);
  if (err instanceof HTTPException) {
    if (err.status === 400 && /malformed json/i.test(err.message)) {
      return new ApiError(400, "malformed_json", "The request body is not valid JSON");
    }
    const code = HTTP_CODES[err.status];
    if (code) return new ApiError(err.status as 400, code, err.message || "Request refused");
  }
  return new ApiError(500, "internal_error", "An unexpected error occurred; quote the request id when reporting it");
}
