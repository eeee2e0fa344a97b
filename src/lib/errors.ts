/**
 * Errors of the domain: what went wrong, in the domain's words. Domain code throws these and
 * knows nothing of HTTP; the edge (src/routes/problems.ts) maps each kind to a status and an
 * RFC 9457 problem, in one place.
 */

/** One problem with a field of an operation's input, named by its path there (`payload.bucket`). */
export interface FieldProblem {
  field: string;
  message: string;
}

/** The base of every error a caller can act on. */
export abstract class DomainError extends Error {}

/** The thing does not exist, or the caller may not know that it does (another tenant's). */
export class NotFoundError extends DomainError {
  constructor(readonly what: string) {
    super(`${what} not found`);
    this.name = "NotFoundError";
  }
}

/** The operation clashes with the current state: a duplicate name, a state it is already in… */
export class ConflictError extends DomainError {
  constructor(detail: string) {
    super(detail);
    this.name = "ConflictError";
  }
}

/** The input is wrong; `fields` names each offending field (empty when it is the input as a whole). */
export class InvalidInputError extends DomainError {
  constructor(
    readonly fields: FieldProblem[] = [],
    detail = "The request is invalid; see errors",
  ) {
    super(detail);
    this.name = "InvalidInputError";
  }

  /** One field's problem. */
  static field(field: string, message: string, detail?: string): InvalidInputError {
    return new InvalidInputError([{ field, message }], detail);
  }
}

/** The input is larger than a documented limit allows. */
export class LimitExceededError extends DomainError {
  constructor(detail: string) {
    super(detail);
    this.name = "LimitExceededError";
  }
}

/** The caller spent its request budget; it may try again after `retryAfterSeconds`. */
export class RateLimitedError extends DomainError {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
    this.name = "RateLimitedError";
  }
}

/**
 * A service the operation needs did not take it for now (the scan queue refused a job): nothing is
 * left waiting on it, and the same request may be sent again after `retryAfterSeconds`.
 */
export class UnavailableError extends DomainError {
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
    this.name = "UnavailableError";
  }
}

/** The caller is known but lacks the role for this. */
export class ForbiddenError extends DomainError {
  constructor(detail = "You are not allowed to do this") {
    super(detail);
    this.name = "ForbiddenError";
  }
}

/** No credential, or one that is not (or no longer) valid. */
export class UnauthenticatedError extends DomainError {
  constructor(
    detail = "Missing or invalid credentials",
    readonly expired = false,
  ) {
    super(detail);
    this.name = "UnauthenticatedError";
  }
}
