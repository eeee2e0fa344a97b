import { env } from "cloudflare:workers";
import { generateKeyPair, importJWK, SignJWT } from "jose";
import { describe, expect, inject, it } from "vitest";
import { verifyBearer } from "../../src/auth/tokens";
import type { Env } from "../../src/env";
import { UnauthenticatedError } from "../../src/lib/errors";

const ISSUER = "https://idp.example.test";
const AUDIENCE = "dq-monitor";
const oidc = inject("oidc");
const oidcEnv: Env = {
  ...(env as unknown as Env),
  OIDC_ISSUER: ISSUER,
  OIDC_AUDIENCE: AUDIENCE,
  OIDC_JWKS_URL: oidc.jwksUrl,
  OIDC_ALGORITHMS: "RS256",
};

async function idpToken(
  claims: Record<string, unknown>,
  opts: { audience?: string; exp?: number; nbf?: number; key?: CryptoKey; kid?: string } = {},
) {
  const key = opts.key ?? ((await importJWK(oidc.privateJwk as never, "RS256")) as CryptoKey);
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: opts.kid ?? oidc.kid })
    .setIssuer(ISSUER)
    .setAudience(opts.audience ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(opts.exp ?? now + 300);
  if (opts.nbf) jwt.setNotBefore(opts.nbf);
  return jwt.sign(key);
}

describe("external OIDC issuer", () => {
  it("accepts the issuer's token (JWKS over HTTP) and names the user by e-mail, else sub", async () => {
    const byEmail = await verifyBearer(oidcEnv, await idpToken({ sub: "u-1", email: "Ada@Example.com" }));
    expect(byEmail.principal).toEqual({ kind: "user", email: "ada@example.com" });
    const bySub = await verifyBearer(oidcEnv, await idpToken({ sub: "grace@example.com" }));
    expect(bySub.principal).toEqual({ kind: "user", email: "grace@example.com" });
  });

  it("checks audience, exp and nbf", async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect(verifyBearer(oidcEnv, await idpToken({ sub: "a" }, { audience: "other" }))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
    await expect(verifyBearer(oidcEnv, await idpToken({ sub: "a" }, { exp: now - 10 }))).rejects.toMatchObject({
      name: "UnauthenticatedError",
      expired: true,
    });
    await expect(verifyBearer(oidcEnv, await idpToken({ sub: "a" }, { nbf: now + 600 }))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
  });

  it("refuses a token signed by a key the issuer does not publish", async () => {
    const { privateKey } = await generateKeyPair("RS256");
    await expect(
      verifyBearer(oidcEnv, await idpToken({ sub: "a" }, { key: privateKey, kid: "rogue" })),
    ).rejects.toBeInstanceOf(UnauthenticatedError);
    await expect(verifyBearer(oidcEnv, await idpToken({ sub: "a" }, { key: privateKey }))).rejects.toBeInstanceOf(
      UnauthenticatedError,
    );
  });

  it("pins algorithms: an HS256 token under the issuer's name is refused, and so is a config allowing only none/HS*", async () => {
    const hs = await new SignJWT({ sub: "a" })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("a-guessable-shared-secret-of-32-chars!"));
    await expect(verifyBearer(oidcEnv, hs)).rejects.toBeInstanceOf(UnauthenticatedError);
    const weak = { ...oidcEnv, OIDC_ALGORITHMS: "none,HS256" };
    await expect(verifyBearer(weak, await idpToken({ sub: "a" }))).rejects.toBeInstanceOf(UnauthenticatedError);
  });

  it("ignores the issuer when OIDC is not configured", async () => {
    const token = await idpToken({ sub: "a" });
    await expect(verifyBearer(env as unknown as Env, token)).rejects.toBeInstanceOf(UnauthenticatedError);
  });
});
