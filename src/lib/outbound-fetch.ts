/**
 * The fetch every outbound HTTP call goes through: the target is checked (outbound.ts) before
 * anything is sent, and redirects are followed here, at most MAX_REDIRECTS, each target checked
 * again; a redirect to another origin leaves credentials and signatures behind.
 */

import { env } from "cloudflare:workers";
import type { EnvironmentEnv } from "./environment";
import { checkOutboundUrl, type OutboundPolicy, OutboundTargetError, outboundPolicy } from "./outbound";

/** The deployment's policy (ALLOW_PRIVATE_TARGETS and ENVIRONMENT of the Worker's env), for callers not handed one. */
export function deploymentOutboundPolicy(): OutboundPolicy {
  return outboundPolicy(env as EnvironmentEnv);
}

export const MAX_REDIRECTS = 5;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Headers that may follow a redirect to another origin. Everything else stays behind:
 * Authorization, cookies, AWS/Azure signatures and tokens, provider-specific credentials.
 */
const CROSS_ORIGIN_HEADERS = new Set([
  "accept",
  "accept-language",
  "content-type",
  "range",
  "user-agent",
  "x-ms-range",
  "x-ms-version",
]);

export interface OutboundOptions {
  /** Default: the deployment's (deploymentOutboundPolicy). */
  policy?: OutboundPolicy;
  /** The request carries credentials, so it needs https deployed; default true. */
  credentials?: boolean;
  /** Default MAX_REDIRECTS. */
  maxRedirects?: number;
}

/**
 * fetch() for user-supplied targets: refuses a target the policy does not allow (an
 * OutboundTargetError, before anything is sent), follows redirects itself with the same check,
 * and sends credential headers only to the origin they were meant for. A redirect that would
 * carry a request body to another origin is refused.
 */
export async function outboundFetch(
  url: string | URL,
  init: RequestInit = {},
  options: OutboundOptions = {},
): Promise<Response> {
  const policy = options.policy ?? deploymentOutboundPolicy();
  const use = { credentials: options.credentials !== false };
  const maxRedirects = options.maxRedirects ?? MAX_REDIRECTS;
  let target = checkOutboundUrl(url, policy, use);
  let method = (init.method ?? "GET").toUpperCase();
  let headers = new Headers(init.headers);
  let body = init.body ?? null;
  for (let hop = 0; ; hop++) {
    const res = await fetch(target, { ...init, method, headers, body, redirect: "manual" });
    const location = res.headers.get("location");
    if (!REDIRECT_STATUSES.has(res.status) || location === null) return res;
    await res.body?.cancel().catch(() => {});
    if (hop >= maxRedirects) {
      throw new OutboundTargetError(`${target.origin} redirected more than ${maxRedirects} times`, target.origin);
    }
    let next: URL;
    try {
      next = new URL(location, target);
    } catch {
      throw new OutboundTargetError(`${target.origin} redirected to an invalid URL`, target.origin);
    }
    next = checkOutboundUrl(next, policy, use);
    // As browsers do: 303, and 301/302 after a POST, continue as a GET without the body.
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      if (method !== "HEAD") method = "GET";
      body = null;
      headers.delete("content-type");
      headers.delete("content-length");
    }
    if (next.origin !== target.origin) {
      if (body !== null) {
        // A body may carry credentials too (a signed assertion, a token grant): it never changes hands.
        throw new OutboundTargetError(
          `${target.origin} redirected a request with a body to ${next.origin}; refused`,
          next.origin,
        );
      }
      headers = crossOriginHeaders(headers);
    }
    target = next;
  }
}

function crossOriginHeaders(headers: Headers): Headers {
  const kept = new Headers();
  headers.forEach((value, name) => {
    if (CROSS_ORIGIN_HEADERS.has(name.toLowerCase())) kept.set(name, value);
  });
  return kept;
}
