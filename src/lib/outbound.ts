/**
 * Where outbound calls made with a tenant's credentials may go.
 *
 * Deployed, credentials go only to public provider addresses. Local development and the tests
 * talk to emulators and fakes on this machine, so `ALLOW_PRIVATE_TARGETS = "true"` (set in
 * `.dev.vars` and the test bindings, never in wrangler.toml) lifts the restriction.
 */
export interface OutboundPolicy {
  /** Loopback/private addresses and non-default provider endpoints (token URIs) are allowed. */
  allowPrivateTargets: boolean;
}

export function outboundPolicy(env: { ALLOW_PRIVATE_TARGETS?: string }): OutboundPolicy {
  return { allowPrivateTargets: env.ALLOW_PRIVATE_TARGETS === "true" };
}

/** Google's OAuth token endpoint: the only place a service-account JWT is sent when deployed. */
export const GOOGLE_TOKEN_URI = "https://oauth2.googleapis.com/token";
