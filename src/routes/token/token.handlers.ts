import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { findKeyBySecret, keyPrincipal } from "../../auth/keys";
import type { Principal } from "../../auth/principal";
import { spendPrincipalRequest } from "../../auth/rate-limit";
import { signServiceToken, tokenTtlSeconds } from "../../auth/tokens";
import { timingSafeEqual } from "../../lib/crypto";
import { ForbiddenError, UnauthenticatedError } from "../../lib/errors";
import { adminPrincipal, keyDatabases, resolvePrincipal } from "../authenticate";
import type * as routes from "./token.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const issueToken: Handler<"issueToken"> = async (c) => {
  const body = c.req.valid("json");
  let principal: Principal;
  if ("api_key" in body) {
    if (c.env.ADMIN_API_KEY && timingSafeEqual(body.api_key, c.env.ADMIN_API_KEY)) {
      principal = adminPrincipal(c.env);
    } else {
      const row = await findKeyBySecret(keyDatabases(c), body.api_key);
      if (!row) throw new UnauthenticatedError("Invalid API key");
      principal = keyPrincipal(row, adminPrincipal(c.env).email);
    }
  } else {
    const caller = await resolvePrincipal(c.env, keyDatabases(c), { get: (n) => c.req.header(n) }, (p) =>
      c.executionCtx.waitUntil(p),
    );
    if (!caller) throw new UnauthenticatedError("Minting a user token needs the platform administrator's key");
    if (caller.kind !== "admin") throw new ForbiddenError("Only the platform administrator may mint user tokens");
    if (c.env.OIDC_ISSUER) throw new ForbiddenError("Users sign in through the configured OIDC issuer");
    principal = { kind: "user", email: body.user.toLowerCase() };
  }
  // The key's strict budget when exchanging a key; the administrator's minting is not limited.
  if ("api_key" in body) await spendPrincipalRequest(c.env, "strict", principal);
  const access_token = await signServiceToken(c.env, principal);
  return c.json({ access_token, token_type: "Bearer" as const, expires_in: tokenTtlSeconds(c.env) }, 200);
};
