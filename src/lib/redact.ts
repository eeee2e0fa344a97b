/**
 * Upstream text is data. A third party's error (a store's XML, a warehouse's message, Jira's
 * body, a driver's exception) may quote what it was sent: an Authorization header, the user
 * name, a signed URL. Before any of it is stored or returned, every credential the request
 * carried and anything that looks like one is removed, and only a short excerpt is kept; the
 * whole text, redacted the same way, goes to the logs.
 */

/** The longest excerpt of upstream text kept in a stored or returned message. */
export const EXCERPT_MAX = 300;
/** The longest upstream text written to the logs. */
const LOG_DETAIL_MAX = 8000;

const REDACTED = "[redacted]";

/** Values shorter than this are not searched for (they would match ordinary words). */
const MIN_SECRET_LENGTH = 2;
/** Values shorter than this are only replaced as whole words. */
const WHOLE_WORD_BELOW = 8;

/** A secret value as the request may have carried it: raw, URL- and JSON-escaped, base64. */
function forms(secret: string): string[] {
  const out = new Set<string>([secret]);
  try {
    out.add(encodeURIComponent(secret));
  } catch {
    // a lone surrogate: no URL form
  }
  out.add(JSON.stringify(secret).slice(1, -1));
  const b64 = base64(secret);
  if (b64.length >= WHOLE_WORD_BELOW) {
    out.add(b64);
    out.add(b64.replace(/=+$/, ""));
    out.add(b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
  }
  return [...out];
}

function base64(text: string): string {
  let s = "";
  for (const b of new TextEncoder().encode(text)) s += String.fromCharCode(b);
  return btoa(s);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The secrets of a Basic-auth pair as they travel: each part, `user:password`, and its base64
 * (what an echoed `Authorization: Basic …` header shows).
 */
export function basicAuthSecrets(user: string, password: string): string[] {
  return [user, password, `${user}:${password}`];
}

/** Patterns of credentials whatever their value: [pattern, replacement]. */
const PATTERNS: [RegExp, string][] = [
  // PEM blocks (private keys, certificates), to their end or the end of the text.
  [/-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g, REDACTED],
  // user:password@ in URLs.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@"'<>]+@/gi, `$1${REDACTED}@`],
  // Authorization schemes and their credentials.
  [
    /\b(Basic|Bearer|Digest|Negotiate|NTLM|Token|SharedKey(?:Lite)?|SharedAccessSignature|AWS4-HMAC-SHA256|GOOG4-RSA-SHA256)(\s+|%20)(?=[A-Za-z0-9._~+/=:,@%-]*[0-9+/=._~-])[A-Za-z0-9._~+/=:,@%-]{8,}/gi,
    `$1$2${REDACTED}`,
  ],
  // key=value / "key": "value" / key: value for names that hold credentials.
  [
    /(["']?)\b((?:x-amz-|x-goog-|x-ms-)?(?:password|passwd|pwd|pass|secret|client_secret|secret_?key|secret_access_key|access_?key(?:_?id)?|access_?token|refresh_?token|id_?token|session_?token|security_?token|auth_?token|api_?token|api_?key|apikey|token|authorization|proxy-authorization|cookie|set-cookie|sig|signature|credential|credentials|assertion|client_assertion|private_?key|sas_?key|sas_?token|code_verifier))\1(\s*[=:]\s*)(?:"[^"]*"|'[^']*'|[^\s"'&,;}<>()[\]]+)/gi,
    `$1$2$1$3${REDACTED}`,
  ],
  // JSON Web Tokens (and JWE): three or more base64url parts starting with a JSON header.
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_.-]*/g, REDACTED],
  // AWS access key ids.
  [/\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[A-Z0-9]{12,}\b/g, REDACTED],
  // Well-known token shapes: Databricks, GitHub, Slack, Atlassian, Snowflake PATs, Google OAuth.
  [
    /\b(?:dapi[0-9a-f]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abeprs]-[A-Za-z0-9-]{10,}|ATATT[A-Za-z0-9_=-]{20,}|ATCTT[A-Za-z0-9_=-]{20,}|pat_[A-Za-z0-9_-]{16,}|ya29\.[A-Za-z0-9._-]{10,})/g,
    REDACTED,
  ],
];

/** Long opaque runs with upper case, lower case and digits: keys, signatures, tokens (not UUIDs or hashes). */
const OPAQUE = /[A-Za-z0-9+/_=-]{40,}/g;
const looksOpaque = (s: string) => /[A-Z]/.test(s) && /[a-z]/.test(s) && /\d/.test(s);

/**
 * `text` with every given secret (in its raw, escaped and base64 forms) and anything that looks
 * like a credential replaced by "[redacted]". Whitespace is kept; see excerpt() for the short form.
 */
export function redactSecrets(text: string, secrets: readonly (string | null | undefined)[] = []): string {
  let s = text;
  const values = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== "string" || secret.length < MIN_SECRET_LENGTH) continue;
    for (const f of forms(secret)) values.add(f);
  }
  // Longest first, so a value is never half-replaced by one of its own parts.
  for (const v of [...values].sort((a, b) => b.length - a.length)) {
    if (v.length >= WHOLE_WORD_BELOW) s = s.split(v).join(REDACTED);
    else s = s.replace(new RegExp(`(?<![A-Za-z0-9_])${escapeRegExp(v)}(?![A-Za-z0-9_])`, "g"), REDACTED);
  }
  for (const [pattern, replacement] of PATTERNS) s = s.replace(pattern, replacement);
  return s.replace(OPAQUE, (run) => (looksOpaque(run) ? REDACTED : run));
}

/**
 * Upstream text fit for a stored or returned message: redacted (redactSecrets), whitespace
 * collapsed, at most `max` characters (an ellipsis marks a cut).
 */
export function excerpt(
  text: unknown,
  secrets: readonly (string | null | undefined)[] = [],
  max: number = EXCERPT_MAX,
): string {
  const raw = typeof text === "string" ? text : text === undefined || text === null ? "" : String(text);
  const clean = redactSecrets(raw, secrets).replace(/\s+/g, " ").trim();
  if (clean.length <= max) return clean;
  return `${clean.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

/** What a log line of an upstream failure says besides the text itself. */
export interface UpstreamContext {
  /** Who answered: "jira", "s3", "snowflake", "postgres"… */
  source: string;
  /** The HTTP status (or driver code), when there is one. */
  status?: number | string | null;
  /** The id under which the failure is known to the caller (a ticket request, a scan job), if any. */
  request_id?: string;
  [key: string]: unknown;
}

/**
 * Logs a third party's whole answer, redacted like excerpt(), as one JSON line with its context
 * (console.error), so the detail a stored message leaves out can be found.
 */
export function logUpstreamFailure(
  context: UpstreamContext,
  text: unknown,
  secrets: readonly (string | null | undefined)[] = [],
): void {
  const raw = typeof text === "string" ? text : text === undefined || text === null ? "" : String(text);
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    fields[key] = typeof value === "string" ? redactSecrets(value, secrets) : value;
  }
  console.error(
    JSON.stringify({
      event: "upstream_failure",
      ...fields,
      detail: redactSecrets(raw, secrets).slice(0, LOG_DETAIL_MAX),
    }),
  );
}
