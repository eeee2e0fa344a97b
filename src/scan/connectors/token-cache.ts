/**
 * OAuth access tokens kept between the calls of one isolate (GCS and BigQuery's service accounts,
 * Databricks service principals): plain values only (a promise of one request must not be awaited
 * by another), bounded, each used until a margin before it expires.
 */

/** A token and when to stop using it. */
export interface CachedToken {
  accessToken: string;
  /** Epoch ms after which the token is not used any more (a margin before its real expiry). */
  refreshAt: number;
}

/** A bounded map of tokens by a key that digests the credential they were issued for. */
export class TokenCache {
  private readonly tokens = new Map<string, CachedToken>();
  constructor(private readonly max = 500) {}

  /** The token of `key` while it is fresh. */
  fresh(key: string): CachedToken | undefined {
    const hit = this.tokens.get(key);
    return hit && Date.now() < hit.refreshAt ? hit : undefined;
  }

  set(key: string, token: CachedToken): void {
    // Bounded: the oldest entry goes first (a Map iterates in insertion order).
    if (this.tokens.size >= this.max) this.tokens.delete(this.tokens.keys().next().value!);
    this.tokens.set(key, token);
  }

  delete(key: string): void {
    this.tokens.delete(key);
  }
}

/** Renew this long before expiry, so a token never runs out in the middle of a read. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;

/** A token answered with `expires_in` seconds (default an hour), to be renewed 5 minutes early (or at half its life). */
export function cachedToken(accessToken: string, expiresIn: unknown): CachedToken {
  const lifetimeMs = (Number(expiresIn) || 3600) * 1000;
  return { accessToken, refreshAt: Date.now() + Math.max(lifetimeMs - REFRESH_MARGIN_MS, lifetimeMs / 2) };
}
