/** Users' tokens: minted by the platform administrator, or forged with claims of the test's choosing. */

import { SignJWT } from "jose";
import { ADMIN_KEY, type Credential, call, TOKEN_SECRET } from "./api";
import { expectStatus } from "./unique";

/** A service token for a user, minted by the platform administrator. */
export async function userToken(email: string): Promise<Credential & { token: string }> {
  const res = await call("POST", "/auth/token", { as: { key: ADMIN_KEY }, body: { user: email } });
  expectStatus(res, 200, "mint user token");
  return { token: res.body.access_token };
}

/** A JWT signed like the service's, with claims and expiry of the test's choosing. */
export async function forgeToken(
  claims: Record<string, unknown>,
  opts: { secret?: string; expiresIn?: string | number; issuer?: string; audience?: string; alg?: string } = {},
): Promise<string> {
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: opts.alg ?? "HS256" })
    .setIssuer(opts.issuer ?? "dq-monitor")
    .setAudience(opts.audience ?? "dq-monitor-api")
    .setIssuedAt()
    .setExpirationTime(opts.expiresIn ?? "5m");
  return jwt.sign(new TextEncoder().encode(opts.secret ?? TOKEN_SECRET));
}
