/**
 * A Databricks workspace's OAuth token endpoint for a service principal (OAuth M2M), as Databricks
 * documents it ("Manually generate a workspace-level access token"): `POST /oidc/v1/token`,
 * `Content-Type: application/x-www-form-urlencoded`, the client id and secret as HTTP Basic
 * credentials (curl --user), the form exactly `grant_type=client_credentials&scope=all-apis`;
 * answered `{access_token, token_type: "Bearer", expires_in: 3600, scope}`. OAuth errors are
 * RFC 6749's (`invalid_client` 401, `invalid_request` / `unsupported_grant_type` / `invalid_scope` 400).
 * The workspace's APIs accept the personal access token and the tokens issued here, and none once
 * revoked (the test endpoint `POST …/_test/oauth/revoke`).
 */

import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { send } from "./warehouses/shared";

/** What a test connects with, and the count of token requests so far (GET …/_test/oauth). */
export interface DatabricksOAuthFixture {
  clientId: string;
  clientSecret: string;
}

export function createDatabricksOAuth(pat: string) {
  const client: DatabricksOAuthFixture = {
    clientId: randomUUID(),
    clientSecret: `dose${randomBytes(20).toString("hex")}`,
  };
  const issued = new Set<string>();
  let requests = 0;
  const oauthError = (res: ServerResponse, status: number, error: string, description: string) =>
    send(res, status, { error, error_description: description });

  /** POST /oidc/v1/token: the client credentials grant, checked as documented. */
  function token(req: IncomingMessage, res: ServerResponse, raw: Buffer) {
    requests++;
    if (req.method !== "POST") return oauthError(res, 405, "invalid_request", "POST only");
    if (String(req.headers["content-type"]).split(";")[0]?.trim() !== "application/x-www-form-urlencoded") {
      return oauthError(res, 400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded");
    }
    const basic = /^Basic ([A-Za-z0-9+/=]+)$/.exec(req.headers.authorization ?? "")?.[1];
    const [id, ...rest] = basic ? Buffer.from(basic, "base64").toString("utf8").split(":") : [];
    if (id !== client.clientId || rest.join(":") !== client.clientSecret) {
      return oauthError(res, 401, "invalid_client", "Client authentication failed");
    }
    const form = new URLSearchParams(raw.toString("utf8"));
    const keys = [...form.keys()].sort();
    if (keys.join(",") !== "grant_type,scope" || keys.length !== new Set(keys).size) {
      return oauthError(res, 400, "invalid_request", `expected grant_type and scope only, got ${keys.join(", ")}`);
    }
    if (form.get("grant_type") !== "client_credentials") {
      return oauthError(res, 400, "unsupported_grant_type", "grant_type must be client_credentials");
    }
    if (form.get("scope") !== "all-apis") return oauthError(res, 400, "invalid_scope", "scope must be all-apis");
    const accessToken = `eyJ${randomBytes(24).toString("base64url")}`;
    issued.add(accessToken);
    return send(res, 200, { access_token: accessToken, token_type: "Bearer", expires_in: 3600, scope: "all-apis" });
  }

  return {
    client,
    /** Handles /oidc/v1/token and the test endpoints under `path`; false: not one of them. */
    handle(req: IncomingMessage, res: ServerResponse, path: string, raw: Buffer): boolean {
      if (path === "/oidc/v1/token") token(req, res, raw);
      else if (path === "/_test/oauth" && req.method === "GET") send(res, 200, { requests, issued: issued.size });
      else if (path === "/_test/oauth/revoke" && req.method === "POST") {
        issued.clear();
        send(res, 200, {});
      } else return false;
      return true;
    },
    /** Whether an Authorization header carries the personal access token or a live issued token. */
    accepts(authorization: string | undefined): boolean {
      const bearer = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
      return bearer !== undefined && (bearer === pat || issued.has(bearer));
    },
  };
}
