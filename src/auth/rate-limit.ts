import type { Env } from "../env";
import { RateLimitedError } from "../lib/errors";
import type { Principal } from "./principal";

/**
 * Per-credential request budgets, kept by the Workers rate-limiting binding (wrangler.toml
 * `[[ratelimits]]`): `standard` for every authenticated request, `strict` for token minting and
 * scan triggers. The binding counts per Cloudflare location and period, so the limits are a
 * guard against floods, not an exact quota.
 */
export type RateBudget = "standard" | "strict";

/** The period of both bindings (wrangler.toml `simple.period`), which is what a client waits at most. */
export const RATE_LIMIT_PERIOD_SECONDS = 60;

/**
 * Whose budget a request spends: one per API key (a token exchanged for a key spends the key's),
 * one per user otherwise (all of a person's tokens share it). The platform administrator's key is
 * not limited: it is one operator secret, never handed to a tenant, and the test and seeding
 * scripts that run as it must not starve.
 */
export function rateLimitKey(p: Principal): string | undefined {
  switch (p.kind) {
    case "admin":
      return undefined;
    case "tenant_key":
      return `key:${p.keyId}`;
    case "user":
      return p.keyId ? `key:${p.keyId}` : `user:${p.email}`;
  }
}

/** Spends one request of `key`'s budget; throws RateLimitedError when it is spent. */
export async function spendRequest(env: Env, budget: RateBudget, key: string): Promise<void> {
  const limiter = budget === "strict" ? env.RATE_LIMIT_STRICT : env.RATE_LIMIT;
  const { success } = await limiter.limit({ key: `${budget}:${key}` });
  if (!success) {
    throw new RateLimitedError(
      budget === "strict"
        ? "Too many token requests or scan triggers with this credential; try again in a minute"
        : "Too many requests with this credential; try again in a minute",
      RATE_LIMIT_PERIOD_SECONDS,
    );
  }
}

/** Spends a request of the principal's budget (nothing for the platform administrator). */
export async function spendPrincipalRequest(env: Env, budget: RateBudget, p: Principal): Promise<void> {
  const key = rateLimitKey(p);
  if (key !== undefined) await spendRequest(env, budget, key);
}
