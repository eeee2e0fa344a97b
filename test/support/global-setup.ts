import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair } from "jose";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** A local OIDC issuer's JWKS endpoint and the private key that signs its tokens. */
    oidc: { jwksUrl: string; privateJwk: JsonWebKey; kid: string };
  }
}

/** Runs in Node before the tests: a real HTTP server publishing an RSA JWKS, as an OIDC issuer does. */
export default async function setup(project: TestProject) {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = "test-key-1";
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" }] };
  const server = createServer((req, res) => {
    if (req.url === "/.well-known/jwks.json") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwks));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  project.provide("oidc", {
    jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    privateJwk: (await exportJWK(privateKey)) as JsonWebKey,
    kid,
  });
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
