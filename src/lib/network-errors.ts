/**
 * The runtime's own failures, in our words. A fetch or a socket that throws says why in the
 * runtime's terms — workerd's "internal error; reference = …" (a failed DNS lookup, among
 * others), "Network connection lost.", "proxy request failed, cannot connect to the specified
 * address", a driver's ECONNREFUSED — which tell a user nothing they can act on, and whose
 * reference is the platform's, not ours. A message a user sees (a response, a job's error, a
 * delivery's last_error) says it with networkFailure(); the runtime's text goes to the log only.
 */

import { redactSecrets } from "./redact";

/** What went wrong with a request that got no answer, in a few words of ours. */
export function networkFailure(err: unknown): string {
  return recognisedNetworkFailure(err) ?? "the host could not be reached";
}

/** networkFailure's words when the error says which failure it is; undefined when it does not. */
export function recognisedNetworkFailure(err: unknown): string | undefined {
  const name = err instanceof Error ? err.name : "";
  const code = (err as { code?: unknown } | null)?.code;
  const text = `${err instanceof Error ? err.message : String(err)} ${typeof code === "string" ? code : ""}`;
  if (name === "TimeoutError" || name === "AbortError" || /timed? ?out|ETIMEDOUT/i.test(text)) {
    return "no answer in time";
  }
  if (/refused|cannot connect to the specified address|ECONNREFUSED|EHOSTUNREACH|ENETUNREACH/i.test(text)) {
    return "the connection was refused";
  }
  if (/\bDNS\b|resolve|ENOTFOUND|EAI_AGAIN|getaddrinfo|name or service not known/i.test(text)) {
    return "the host name could not be resolved";
  }
  if (/\bTLS\b|\bSSL\b|certificate|handshake/i.test(text)) return "the secure connection (TLS) could not be set up";
  if (/lost|reset|closed|ECONNRESET|EPIPE|disconnect/i.test(text)) return "the connection was lost";
  return undefined;
}

/**
 * Logs the runtime's own text of a failed request (redacted like any upstream text) beside the
 * words a user is shown, as one JSON line: the detail an operator needs, keyed by `context`.
 */
export function logNetworkFailure(
  context: Record<string, unknown>,
  err: unknown,
  secrets: readonly (string | null | undefined)[] = [],
): void {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  console.error(
    JSON.stringify({
      event: "network_failure",
      ...context,
      said: networkFailure(err),
      error: redactSecrets(text, secrets),
    }),
  );
}
