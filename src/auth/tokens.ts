import {
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  type JWTPayload,
  errors as joseErrors,
  jwtVerify,
  SignJWT,
} from "jose";
import type { Env } from "../env";
import { UnauthenticatedError } from "../lib/errors";
import { type OutboundPolicy, OutboundTargetError, outboundPolicy } from "../lib/outbound";
import { outboundFetch } from "../lib/outbound-fetch";
import type { Principal } from "./principal";

/** The algorithm of the service's own tokens; pinned on verification. */
const SERVICE_ALG = "HS256";
/** Algorithms never accepted from an external issuer: "none" and symmetric ones (key confusion). */
const FORBIDDEN_OIDC_ALGS = /^(none|HS\d+)$/i;

/** Claims of a service token beside the registered ones. */
interface ServiceClaims extends JWTPayload {
  /** What the token acts as. */
  act: "admin" | "tenant_key" | "user";
  /** tenant of a tenant_key token */
  tid?: string;
  /** API key the token was exchanged for, if any; revoking the key revokes the token. */
  kid?: string;
}

function signingKey(env: Env): Uint8Array {
  const secret = env.TOKEN_SIGNING_SECRET;
  if (!secret || secret.length < 32) throw new Error("TOKEN_SIGNING_SECRET must be set to at least 32 characters");
  return new TextEncoder().encode(secret);
}

export function tokenTtlSeconds(env: Env): number {
  const ttl = Number(env.SERVICE_TOKEN_TTL_SECONDS);
  return Number.isInteger(ttl) && ttl > 0 ? ttl : 900;
}

/** Signs a short-lived JWT acting as the principal. */
export async function signServiceToken(env: Env, principal: Principal): Promise<string> {
  const claims: ServiceClaims =
    principal.kind === "admin"
      ? { act: "admin" }
      : principal.kind === "tenant_key"
        ? { act: "tenant_key", tid: principal.tenantId, kid: principal.keyId }
        : { act: "user", ...(principal.keyId ? { kid: principal.keyId } : {}) };
  const subject =
    principal.kind === "user" ? principal.email : principal.kind === "tenant_key" ? principal.keyId : "admin";
  return new SignJWT(claims)
    .setProtectedHeader({ alg: SERVICE_ALG, typ: "JWT" })
    .setIssuer(env.SERVICE_TOKEN_ISSUER)
    .setAudience(env.SERVICE_TOKEN_AUDIENCE)
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(`${tokenTtlSeconds(env)}s`)
    .setJti(crypto.randomUUID())
    .sign(signingKey(env));
}

/** A verified bearer token: who it names, and the API key it came from (checked for revocation). */
export interface VerifiedToken {
  principal: Principal;
  keyId?: string;
}

let jwksCache: { key: string; jwks: ReturnType<typeof createRemoteJWKSet> } | undefined;
/**
 * The issuer's key set, fetched through the outbound guard: a JWKS URL on a private, loopback
 * or metadata address (or plain http) is refused when deployed, and redirects are checked too.
 */
function remoteJwks(url: string, policy: OutboundPolicy) {
  const key = `${policy.allowPrivateTargets}|${url}`;
  if (jwksCache?.key !== key) {
    const jwks = createRemoteJWKSet(new URL(url), {
      [customFetch]: async (target: string, init: RequestInit) => {
        try {
          // https even without credentials: whoever can alter the key set can sign as any user.
          return await outboundFetch(target, init, { policy });
        } catch (err) {
          // An operator's misconfiguration: say so in the logs, the caller only sees "Invalid token".
          if (err instanceof OutboundTargetError) console.error(JSON.stringify({ oidc_jwks: err.message }));
          throw err;
        }
      },
    });
    jwksCache = { key, jwks };
  }
  return jwksCache.jwks;
}

function oidcAlgorithms(env: Env): string[] {
  return env.OIDC_ALGORITHMS.split(",")
    .map((a) => a.trim())
    .filter((a) => a && !FORBIDDEN_OIDC_ALGS.test(a));
}

function toAuthError(err: unknown): UnauthenticatedError {
  if (err instanceof UnauthenticatedError) return err;
  if (err instanceof joseErrors.JWTExpired) return new UnauthenticatedError("The token has expired", true);
  return new UnauthenticatedError("Invalid token");
}

/**
 * Tokens verified lately, kept in the isolate so that a client's next requests skip the signature
 * check (an HMAC or RSA verification and a key import each time, most of an authenticated read's
 * CPU): until the token's own `exp`, and TOKEN_CACHE_MS at most. What a token names is fixed by its
 * signature, so this changes nothing a token may do: revocation goes through the API key behind it
 * (checked on every request, src/auth/keys.ts) and through memberships (src/auth/access-cache.ts).
 * Rejected tokens are never cached, and the cache is keyed by the whole token and the verification
 * settings, so a token is accepted from it only if the same check passed in this isolate.
 */
export const TOKEN_CACHE_MS = 30_000;
const MAX_CACHED_TOKENS = 1000;
const verifiedTokens = new Map<string, { verified: VerifiedToken; until: number; settings: string }>();

/** What a verification depends on beside the token: a change of secret or issuer empties the cache. */
const verificationSettings = (env: Env) =>
  [
    env.TOKEN_SIGNING_SECRET,
    env.SERVICE_TOKEN_ISSUER,
    env.SERVICE_TOKEN_AUDIENCE,
    env.OIDC_ISSUER,
    env.OIDC_AUDIENCE,
    env.OIDC_JWKS_URL,
    env.OIDC_ALGORITHMS,
  ].join("\n");

/**
 * Verifies a bearer JWT (verifyBearerUncached), answering from the isolate's cache of tokens that
 * passed lately while they are within their `exp`.
 */
export async function verifyBearer(env: Env, token: string): Promise<VerifiedToken> {
  const settings = verificationSettings(env);
  const hit = verifiedTokens.get(token);
  if (hit) {
    if (hit.until > Date.now() && hit.settings === settings) return hit.verified;
    verifiedTokens.delete(token);
  }
  const verified = await verifyBearerUncached(env, token);
  const exp = decodeJwt(token).exp;
  const until = Math.min(Date.now() + TOKEN_CACHE_MS, typeof exp === "number" ? exp * 1000 : 0);
  if (until > Date.now()) {
    if (verifiedTokens.size >= MAX_CACHED_TOKENS) verifiedTokens.delete(verifiedTokens.keys().next().value!);
    verifiedTokens.set(token, { verified, until, settings });
  }
  return verified;
}

/**
 * Verifies a bearer JWT: the service's own (HS256, its issuer and audience) or, when configured,
 * the external OIDC issuer's (JWKS, pinned algorithms, issuer and audience). exp/nbf are checked.
 */
async function verifyBearerUncached(env: Env, token: string): Promise<VerifiedToken> {
  let issuer: string | undefined;
  try {
    issuer = decodeJwt(token).iss;
  } catch {
    throw new UnauthenticatedError("Malformed token");
  }
  try {
    if (issuer === env.SERVICE_TOKEN_ISSUER) {
      const { payload } = await jwtVerify<ServiceClaims>(token, signingKey(env), {
        algorithms: [SERVICE_ALG],
        issuer: env.SERVICE_TOKEN_ISSUER,
        audience: env.SERVICE_TOKEN_AUDIENCE,
        requiredClaims: ["exp", "sub", "act"],
      });
      return fromServiceClaims(payload);
    }
    if (env.OIDC_ISSUER && issuer === env.OIDC_ISSUER && env.OIDC_JWKS_URL) {
      const algorithms = oidcAlgorithms(env);
      if (algorithms.length === 0) throw new UnauthenticatedError("No acceptable OIDC algorithm is configured");
      const { payload } = await jwtVerify(token, remoteJwks(env.OIDC_JWKS_URL, outboundPolicy(env)), {
        algorithms,
        issuer: env.OIDC_ISSUER,
        audience: env.OIDC_AUDIENCE || undefined,
        requiredClaims: ["exp"],
      });
      const name = typeof payload.email === "string" ? payload.email : payload.sub;
      if (!name) throw new UnauthenticatedError("The token names no user (sub or email)");
      return { principal: { kind: "user", email: name.toLowerCase() } };
    }
  } catch (err) {
    throw toAuthError(err);
  }
  throw new UnauthenticatedError("Token from an untrusted issuer");
}

function fromServiceClaims(p: ServiceClaims): VerifiedToken {
  switch (p.act) {
    case "admin":
      return { principal: { kind: "admin" } };
    case "tenant_key":
      if (!p.tid || !p.kid) break;
      return { principal: { kind: "tenant_key", tenantId: p.tid, keyId: p.kid }, keyId: p.kid };
    case "user":
      if (!p.sub) break;
      return { principal: { kind: "user", email: p.sub, ...(p.kid ? { keyId: p.kid } : {}) }, keyId: p.kid };
  }
  throw new UnauthenticatedError("Invalid token claims");
}
