import type { ContentfulStatusCode } from "hono/utils/http-status";

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
  | "length_required"
  | "payload_too_large"
  | "unsupported_media_type"
  | "source_error"
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
  length_required: "Content-Length required",
  payload_too_large: "Payload too large",
  unsupported_media_type: "Unsupported media type",
  source_error: "The data source refused or failed the request",
  internal_error: "Internal server error",
};

/** The one error type handlers throw; `onError` turns it into an RFC 9457 problem. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ErrorCode,
    detail: string,
    readonly errors?: FieldError[],
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
  static unauthenticated(detail = "Missing or invalid credentials") {
    return new ApiError(401, "unauthenticated", detail);
  }
  static forbidden(detail = "You are not allowed to do this") {
    return new ApiError(403, "forbidden", detail);
  }
  static notFound(what: string) {
    return new ApiError(404, "not_found", `${what} not found`);
  }
  static conflict(detail: string) {
    return new ApiError(409, "conflict", detail);
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
