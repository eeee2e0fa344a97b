/**
 * How our Databricks calls (Jobs API, SQL Statement Execution API) authenticate: a personal access
 * token as it is, or a service principal's OAuth client id and secret exchanged for a workspace
 * access token (OAuth M2M, Databricks' "client credentials" flow): `POST {workspace}/oidc/v1/token`
 * with HTTP Basic client authentication and the form `grant_type=client_credentials&scope=all-apis`,
 * answered `{access_token, token_type: "Bearer", expires_in}`. The token is cached per workspace
 * and client until shortly before it expires.
 */

import { sha256Hex, toBase64 } from "../../lib/crypto";
import type { OutboundPolicy } from "../../lib/outbound";
import { outboundFetch } from "../../lib/outbound-fetch";
import { basicAuthSecrets } from "../../lib/redact";
import { type CachedToken, cachedToken, TokenCache } from "./token-cache";
import { ConnectorError, fetchOrUnreachable, kindForStatus, logProviderFailure, safeDetail } from "./types";

/** A Databricks credential: a personal access token, or a service principal's OAuth client. */
export type DatabricksAuth = { token: string } | { clientId: string; clientSecret: string };

/** The scope Databricks documents for workspace REST API calls with an M2M token. */
export const DATABRICKS_M2M_SCOPE = "all-apis";

/** Workspace access tokens by workspace and client, shared by the calls of one isolate. */
const tokenCache = new TokenCache();

/** The bearer of a Databricks workspace's calls, and what its errors must never show. */
export interface DatabricksBearer {
  /** The Authorization header's value for the next call. */
  authorization(): Promise<string>;
  /** Whether a refused call is worth one more try with a new token (OAuth: revoked before its expiry). */
  readonly renews: boolean;
  /** Forgets the cached OAuth token the workspace refused. */
  refused(): void;
  /** The credential's secrets, and every access token issued so far. */
  readonly secrets: string[];
  /** "the token" or "the service principal", for messages. */
  readonly who: string;
}

/** The bearer of the calls to the workspace at `base` (https://host[:port], or a private endpoint). */
export function databricksBearer(base: string, auth: DatabricksAuth, policy?: OutboundPolicy): DatabricksBearer {
  if ("token" in auth) {
    return {
      authorization: async () => `Bearer ${auth.token}`,
      renews: false,
      refused: () => {},
      secrets: [auth.token],
      who: "the token",
    };
  }
  const tokenUrl = `${base}/oidc/v1/token`;
  // The redaction covers each secret's base64 too: the Basic header included.
  const secrets = basicAuthSecrets(auth.clientId, auth.clientSecret);
  let key: string | undefined;
  return {
    secrets,
    who: "the service principal",
    renews: true,
    async authorization() {
      // Keyed by a digest of the secret too: another secret for the same client id gets its own token.
      key ??= await sha256Hex([tokenUrl, auth.clientId, auth.clientSecret].join("\n"));
      let hit = tokenCache.fresh(key);
      if (!hit) {
        hit = await exchangeClientCredentials(tokenUrl, auth, secrets, policy);
        tokenCache.set(key, hit);
      }
      if (!secrets.includes(hit.accessToken)) secrets.push(hit.accessToken);
      return `Bearer ${hit.accessToken}`;
    },
    refused() {
      if (key) tokenCache.delete(key);
    },
  };
}

const basicHeader = (auth: { clientId: string; clientSecret: string }) =>
  `Basic ${toBase64(new TextEncoder().encode(`${auth.clientId}:${auth.clientSecret}`))}`;

/** The client credentials grant at the workspace's token endpoint, as Databricks documents it. */
async function exchangeClientCredentials(
  tokenUrl: string,
  auth: { clientId: string; clientSecret: string },
  secrets: string[],
  policy?: OutboundPolicy,
): Promise<CachedToken> {
  const init: RequestInit = {
    method: "POST",
    headers: { authorization: basicHeader(auth), "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", scope: DATABRICKS_M2M_SCOPE }).toString(),
  };
  const res = await fetchOrUnreachable(tokenUrl, () => outboundFetch(tokenUrl, init, { policy }), secrets);
  const text = await res.text().catch(() => "");
  let body: { access_token?: unknown; expires_in?: unknown; error?: string; error_description?: string } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's error page): the status decides below.
  }
  if (res.ok && typeof body.access_token === "string" && body.access_token) {
    return cachedToken(body.access_token, body.expires_in);
  }
  logProviderFailure("databricks-oauth", res.status, tokenUrl, text, secrets);
  const reason = safeDetail([body.error, body.error_description].filter(Boolean).join(": "), secrets);
  const detail = reason ? ` (${reason})` : "";
  // A wrong id or secret is 401 invalid_client; a client without the scope 400 invalid_scope.
  if (res.status === 400 || res.status === 401 || res.status === 403) {
    throw new ConnectorError(
      `Databricks refused to sign in the service principal: check its client id and secret${detail}`,
      "auth",
    );
  }
  throw new ConnectorError(
    `the Databricks token endpoint answered ${res.status}${detail}`,
    res.ok ? "invalid" : kindForStatus(res.status),
  );
}
