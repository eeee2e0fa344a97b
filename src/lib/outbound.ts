/**
 * Where outbound calls may go: the one check every user-supplied URL or host passes before the
 * service sends anything to it (object stores, warehouse APIs, JDBC hosts, Jira, the OIDC JWKS,
 * and the notification channels and Spark callbacks still to come). The fetch that follows
 * redirects under the same check is in outbound-fetch.ts.
 *
 * Deployed, credentials go only to public addresses over TLS. Local development and the tests
 * talk to emulators and fakes on this machine, so `ALLOW_PRIVATE_TARGETS = "true"` (set in
 * `.dev.vars` and the test bindings, never in wrangler.toml) lifts the restriction, and only
 * there: a deployed environment (ENVIRONMENT staging or production, environment.ts) ignores it.
 *
 * Names are checked as written, not resolved: a Worker cannot resolve DNS itself, and Cloudflare's
 * egress does not reach private or loopback addresses from a deployed Worker in any case.
 */
import { deployedEnvironment, type EnvironmentEnv } from "./environment";

export interface OutboundPolicy {
  /** Loopback/private addresses, plain http and non-default provider endpoints (token URIs) are allowed. */
  allowPrivateTargets: boolean;
}

export function outboundPolicy(env: EnvironmentEnv): OutboundPolicy {
  return { allowPrivateTargets: env.ALLOW_PRIVATE_TARGETS === "true" && deployedEnvironment(env) === undefined };
}

/** Google's OAuth token endpoint: the only place a service-account JWT is sent when deployed. */
export const GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token";

/** A target the policy refuses; the message says why, in words the user can act on. */
export class OutboundTargetError extends Error {
  constructor(
    message: string,
    /** The host (or URL without query) that was refused. */
    readonly target: string,
  ) {
    super(message);
    this.name = "OutboundTargetError";
  }
}

/** How a request is sent, for the scheme rule: credentials ride only on TLS. */
export interface TargetUse {
  /** The request carries credentials (a header, a signature, a password); default true. */
  credentials?: boolean;
}

/** Host names that name this machine, a private network or a cloud metadata service. */
const BLOCKED_NAMES = new Set([
  "localhost",
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.com",
  "metadata.tencentyun.com",
  "metadata.oraclecloud.com",
]);

/** Suffixes reserved for private or local names (RFC 6761, 6762, 8375; .internal, ICANN 2024). */
const BLOCKED_SUFFIXES = [".localhost", ".local", ".internal", ".localdomain", ".home.arpa", ".lan", ".intranet"];

/** IPv4 ranges that are not public unicast (RFC 6890 and the cloud metadata addresses). */
const BLOCKED_V4: [number, number, string][] = [
  [0x00000000, 8, "a 'this network' address (0.0.0.0/8)"],
  [0x0a000000, 8, "a private address (10.0.0.0/8)"],
  [0x64400000, 10, "a carrier-grade NAT address (100.64.0.0/10)"],
  [0x7f000000, 8, "a loopback address (127.0.0.0/8)"],
  [0xa9fe0000, 16, "a link-local address (169.254.0.0/16, where cloud metadata services answer)"],
  [0xac100000, 12, "a private address (172.16.0.0/12)"],
  [0xc0000000, 24, "an IETF protocol address (192.0.0.0/24)"],
  [0xc0a80000, 16, "a private address (192.168.0.0/16)"],
  [0xc6120000, 15, "a benchmarking address (198.18.0.0/15)"],
  [0xe0000000, 4, "a multicast address (224.0.0.0/4)"],
  [0xf0000000, 4, "a reserved address (240.0.0.0/4)"],
];

function v4Reason(ip: number): string | undefined {
  for (const [base, bits, reason] of BLOCKED_V4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((ip & mask) >>> 0 === base) return reason;
  }
  return undefined;
}

/** A dotted-quad IPv4 address as a number, or undefined (the URL parser already canonicalised it). */
function parseV4(host: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/** An IPv6 address as eight 16-bit groups, or undefined. */
function parseV6(host: string): number[] | undefined {
  let text = host;
  // A trailing dotted quad (::ffff:127.0.0.1) becomes its two groups.
  const v4 = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (v4) {
    const n = parseV4(v4[1]!);
    if (n === undefined) return undefined;
    text = `${text.slice(0, v4.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const toNumbers = (gs: string[]) => gs.map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? Number.parseInt(g, 16) : Number.NaN));
  const head = toNumbers(groups(halves[0]!));
  const rest = halves.length === 2 ? toNumbers(groups(halves[1]!)) : [];
  if ([...head, ...rest].some(Number.isNaN)) return undefined;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest];
}

function v6Reason(g: number[]): string | undefined {
  const embedded = (hi: number, lo: number) => v4Reason(((hi << 16) | lo) >>> 0);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 8)) return "the unspecified address (::)";
  if (zeros(0, 7) && g[7] === 1) return "a loopback address (::1)";
  if (zeros(0, 5) && g[5] === 0xffff) {
    const r = embedded(g[6]!, g[7]!);
    return r ? `an IPv4-mapped IPv6 address of ${r}` : undefined;
  }
  if (zeros(0, 6)) return "an IPv4-compatible IPv6 address (::/96)";
  if (g[0] === 0x64 && g[1] === 0xff9b) {
    if (g[2] === 1) return "a local NAT64 address (64:ff9b:1::/48)";
    const r = embedded(g[6]!, g[7]!);
    return r ? `a NAT64 address of ${r}` : undefined;
  }
  if (g[0] === 0x2002) {
    const r = embedded(g[1]!, g[2]!);
    return r ? `a 6to4 address of ${r}` : undefined;
  }
  if ((g[0]! & 0xfe00) === 0xfc00) return "a unique local (private) IPv6 address (fc00::/7)";
  if ((g[0]! & 0xffc0) === 0xfe80) return "a link-local IPv6 address (fe80::/10)";
  if ((g[0]! & 0xffc0) === 0xfec0) return "a site-local IPv6 address (fec0::/10)";
  if ((g[0]! & 0xff00) === 0xff00) return "a multicast IPv6 address (ff00::/8)";
  return undefined;
}

/**
 * Why a host (a name, or a literal IPv4/IPv6 address, canonical as the URL parser writes it) is
 * not a public target; undefined when it may be one.
 */
export function privateHostReason(host: string): string | undefined {
  const name = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.+$/, "");
  if (!name) return "an empty host";
  const v4 = parseV4(name);
  if (v4 !== undefined) return v4Reason(v4);
  if (name.includes(":")) {
    const v6 = parseV6(name.replace(/%.*$/, ""));
    return v6 ? v6Reason(v6) : "not a valid IPv6 address";
  }
  if (BLOCKED_NAMES.has(name)) return "a local or cloud metadata host name";
  if (BLOCKED_SUFFIXES.some((s) => name.endsWith(s))) return "a local or private network host name";
  // A single label ("db", "metadata") resolves through search domains to internal hosts.
  if (!name.includes(".")) return "not a fully qualified public host name";
  return undefined;
}

/** The host as the URL parser canonicalises it (lower case, 0x7f.1 → 127.0.0.1, IPv6 compressed). */
export function canonicalHost(host: string): string | undefined {
  const trimmed = host.trim();
  if (!trimmed || /[\s/\\?#@]/.test(trimmed)) return undefined;
  const bracketed = trimmed.includes(":") && !trimmed.startsWith("[") ? `[${trimmed}]` : trimmed;
  try {
    const hostname = new URL(`http://${bracketed}`).hostname;
    return hostname || undefined;
  } catch {
    return undefined;
  }
}

const refuse = (what: string, target: string, why: string) =>
  new OutboundTargetError(
    `${what} ${target} is refused: it is ${why}; only public addresses may be reached (ALLOW_PRIVATE_TARGETS is for local development only)`,
    target,
  );

/**
 * Checks a URL before anything is sent to it: http(s) only, https when credentials ride along,
 * and a public host; the parsed URL is returned. Private targets and plain http pass when the
 * policy allows them (emulators on this machine).
 */
export function checkOutboundUrl(url: string | URL, policy: OutboundPolicy, use: TargetUse = {}): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OutboundTargetError("the endpoint is not a valid URL", "");
  }
  const shown = `${parsed.protocol}//${parsed.host}`;
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new OutboundTargetError(`the endpoint ${shown} is refused: only https URLs may be called`, shown);
  }
  if (policy.allowPrivateTargets) return parsed;
  const why = privateHostReason(parsed.hostname);
  if (why) throw refuse("the endpoint", shown, why);
  if (parsed.protocol === "http:" && use.credentials !== false) {
    throw new OutboundTargetError(
      `the endpoint ${shown} is refused: credentials are only sent over https (an http endpoint is for local development only)`,
      shown,
    );
  }
  return parsed;
}

/**
 * Checks a TCP target (a JDBC host) as checkOutboundUrl checks a URL: a public host, and TLS
 * when a password is sent (`plaintext` = the connection asked for no TLS). Returns the canonical host.
 */
export function checkOutboundHost(
  host: string,
  policy: OutboundPolicy,
  use: TargetUse & { plaintext?: boolean } = {},
): string {
  const canonical = canonicalHost(host);
  if (!canonical) throw new OutboundTargetError(`the host '${host}' is not a valid host name or address`, host);
  if (policy.allowPrivateTargets) return canonical;
  const why = privateHostReason(canonical);
  if (why) throw refuse("the host", canonical, why);
  if (use.plaintext && use.credentials !== false) {
    throw new OutboundTargetError(
      `the host ${canonical} is refused without TLS: the password is only sent over TLS (ssl: disable is for local development only)`,
      canonical,
    );
  }
  return canonical;
}
