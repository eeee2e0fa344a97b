import { importPKCS8, SignJWT } from "jose";
import { GOOGLE_TOKEN_URI, type OutboundPolicy } from "../../lib/outbound";
import { outboundFetch } from "../../lib/outbound-fetch";
import { encodeRfc3986, type ListingPage, type ListOptions, listMatching, queryString } from "./glob";
import { type CachedToken, cachedToken, TokenCache } from "./token-cache";
import {
  bodyOrEmpty,
  ConnectorError,
  fetchOrUnreachable,
  kindForStatus,
  logProviderFailure,
  type PutOptions,
  rangeBytes,
  redactUrl,
  type StoredObject,
  type StoreRequest,
  safeDetail,
  type WritableObjectStore,
  writeRequest,
} from "./types";

export const GCS_READ_SCOPE = "https://www.googleapis.com/auth/devstorage.read_only";
/** What a store that writes asks for: read_write creates and deletes objects, nothing more. */
export const GCS_WRITE_SCOPE = "https://www.googleapis.com/auth/devstorage.read_write";

/** The fields of a service-account key file that signing needs. */
export interface GcsServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id: string;
  token_uri?: string;
}

export interface GcsStoreOptions {
  bucket: string;
  serviceAccount: GcsServiceAccount;
  /** Default https://storage.googleapis.com. */
  endpoint?: string;
  /** Objects per list page; GCS's default and maximum is 1000. */
  pageSize?: number;
  /** Where requests may go; default the deployment's (ALLOW_PRIVATE_TARGETS). */
  policy?: OutboundPolicy;
  /** Ask for write access (put, delete); default read-only. */
  writable?: boolean;
}

/** Access tokens by service account, shared by the stores of one isolate. */
const tokenCache = new TokenCache();

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Google Cloud Storage over the JSON API, authenticated as a service account (JWT bearer grant). */
export class GcsStore implements WritableObjectStore {
  private readonly endpoint: string;
  private readonly bucket: string;
  private readonly account: GcsServiceAccount;
  private readonly tokenUri: string;
  private readonly pageSize: number | undefined;
  private readonly policy: OutboundPolicy | undefined;
  private readonly scope: string;
  private cacheKey: string | undefined;
  private signingIn: Promise<CachedToken> | undefined;

  constructor(options: GcsStoreOptions) {
    this.endpoint = (options.endpoint || "https://storage.googleapis.com").replace(/\/+$/, "");
    this.bucket = options.bucket;
    this.account = options.serviceAccount;
    this.tokenUri = options.serviceAccount.token_uri || GOOGLE_TOKEN_URI;
    this.pageSize = options.pageSize;
    this.policy = options.policy;
    this.scope = options.writable ? GCS_WRITE_SCOPE : GCS_READ_SCOPE;
  }

  list(pattern: string, options?: ListOptions): Promise<StoredObject[]> {
    return listMatching(pattern, (prefix, token) => this.listPage(prefix, token), options);
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    return bodyOrEmpty(await this.send(this.mediaUrl(key), {}, `object '${key}'`));
  }

  async readRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    const headers = { range: `bytes=${offset}-${offset + length - 1}` };
    return rangeBytes(await this.send(this.mediaUrl(key), { headers }, `object '${key}'`), offset, length);
  }

  /** A simple (uploadType=media) upload: one request, up to 5 TiB; needs a writable store. */
  async put(key: string, body: ReadableStream<Uint8Array>, options: PutOptions): Promise<void> {
    const query = queryString({ uploadType: "media", name: key });
    const url = `${this.endpoint}/upload/storage/v1/b/${encodeRfc3986(this.bucket)}/o?${query}`;
    const request = writeRequest("POST", { "content-type": options.contentType }, body, options);
    const res = await this.send(url, request, `object '${key}'`);
    await res.body?.cancel();
  }

  async delete(key: string): Promise<void> {
    try {
      const res = await this.send(`${this.bucketUrl}/${encodeRfc3986(key)}`, { method: "DELETE" }, `object '${key}'`);
      await res.body?.cancel();
    } catch (err) {
      if (!(err instanceof ConnectorError && err.kind === "not_found" && err.message.startsWith("object "))) throw err;
    }
  }

  private get bucketUrl(): string {
    return `${this.endpoint}/storage/v1/b/${encodeRfc3986(this.bucket)}/o`;
  }

  private mediaUrl(key: string): string {
    return `${this.bucketUrl}/${encodeRfc3986(key)}?alt=media`;
  }

  private async listPage(prefix: string, pageToken: string | undefined): Promise<ListingPage> {
    const query = queryString({
      prefix: prefix || undefined,
      pageToken,
      maxResults: this.pageSize,
      fields: "items(name,size,updated),nextPageToken",
    });
    const res = await this.send(`${this.bucketUrl}?${query}`, {}, "the listing");
    const body = (await res.json()) as {
      items?: { name: string; size?: string; updated?: string }[];
      nextPageToken?: string;
    };
    const objects = (body.items ?? []).map(
      (item): StoredObject => ({
        key: item.name,
        size: Number(item.size ?? "0"),
        ...(item.updated ? { lastModified: new Date(item.updated).toISOString() } : {}),
      }),
    );
    return { objects, ...(body.nextPageToken ? { next: body.nextPageToken } : {}) };
  }

  /**
   * A request with the bearer token (a GET unless `init` says otherwise); one retry with a fresh
   * token when a cached one was refused, unless a streamed body is already spent.
   */
  private async send(url: string, init: StoreRequest, what: string): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const { token, cached } = await this.accessToken(attempt > 0);
      const res = await fetchOrUnreachable(
        url,
        () =>
          outboundFetch(
            url,
            {
              method: init.method ?? "GET",
              headers: { ...init.headers, authorization: `Bearer ${token}` },
              body: init.body ?? null,
              ...(init.signal ? { signal: init.signal } : {}),
            },
            { policy: this.policy },
          ),
        [token],
      );
      if (res.ok) return res;
      if (res.status === 401 && cached && attempt === 0 && !init.body) {
        // Revoked or expired early: forget it and sign in again once.
        await res.body?.cancel();
        continue;
      }
      throw await this.failure(res, url, what, token);
    }
  }

  private async failure(res: Response, url: string, what: string, token: string): Promise<ConnectorError> {
    const text = await res.text().catch(() => "");
    const secrets = [token, ...accountSecrets(this.account)];
    logProviderFailure("gcs", res.status, url, text, secrets);
    let message = "";
    try {
      message = safeDetail((JSON.parse(text) as { error?: { message?: string } }).error?.message, secrets);
    } catch {
      message = safeDetail(text, secrets, 200);
    }
    const detail = message ? ` (${message})` : "";
    const bucket = `gs://${this.bucket}`;
    switch (kindForStatus(res.status)) {
      case "auth":
        return new ConnectorError(
          `access denied to bucket ${bucket} for the connection's service account: check the credential${detail}`,
          "auth",
        );
      case "not_found":
        return new ConnectorError(
          `${what === "the listing" ? `bucket ${bucket}` : `${what} in ${bucket}`} not found${detail}`,
          "not_found",
        );
      case "transient":
        return new ConnectorError(`GCS answered ${res.status} for ${what} at ${redactUrl(url)}${detail}`, "transient");
      default:
        if (res.status === 416) {
          return new ConnectorError(`${what} in ${bucket}: the range starts past the end of the object`, "invalid");
        }
        return new ConnectorError(`GCS answered ${res.status} for ${what} at ${redactUrl(url)}${detail}`, "invalid");
    }
  }

  /** An OAuth access token for the service account, from the cache while it is fresh. */
  private async accessToken(forceNew: boolean): Promise<{ token: string; cached: boolean }> {
    // Keyed by a digest of the key itself: someone presenting the same e-mail and key id with
    // another private key must not be handed the token that the genuine key earned.
    this.cacheKey ??= await sha256Hex(
      [
        this.account.client_email,
        this.account.private_key_id,
        this.account.private_key,
        this.tokenUri,
        this.scope,
      ].join("\n"),
    );
    const key = this.cacheKey;
    const hit = tokenCache.fresh(key);
    if (hit && !forceNew) return { token: hit.accessToken, cached: true };
    // Concurrent reads of this store share one sign-in. Only plain values cross requests (the
    // module-level cache): a promise created by one request must not be awaited by another.
    if (!this.signingIn || forceNew) {
      this.signingIn = this.exchangeAssertion().then(
        (token) => {
          tokenCache.set(key, token);
          return token;
        },
        (err: unknown) => {
          tokenCache.delete(key);
          this.signingIn = undefined;
          throw err;
        },
      );
    }
    const token = await this.signingIn;
    this.signingIn = undefined;
    return { token: token.accessToken, cached: false };
  }

  /** Signs an RS256 assertion and exchanges it at the token URI (OAuth 2.0 JWT bearer grant). */
  private exchangeAssertion(): Promise<CachedToken> {
    return exchangeServiceAccountAssertion(this.account, this.scope, this.policy);
  }
}

/** What a service account's errors must never show: the key, its id and the account's e-mail. */
export function accountSecrets(account: GcsServiceAccount): string[] {
  return [account.private_key, account.private_key_id, account.client_email];
}

/**
 * Signs an RS256 assertion for a service account and exchanges it at its token URI (OAuth 2.0
 * JWT bearer grant) for an access token with `scope`. Shared with the BigQuery runner.
 */
export async function exchangeServiceAccountAssertion(
  account: GcsServiceAccount,
  scope: string,
  policy?: OutboundPolicy,
): Promise<{ accessToken: string; refreshAt: number }> {
  const tokenUri = account.token_uri || GOOGLE_TOKEN_URI;
  // The e-mail is part of the credential: messages say "the service account", the logs redact it.
  const who = "the connection's service account";
  let key: CryptoKey;
  try {
    key = await importPKCS8(account.private_key, "RS256");
  } catch {
    throw new ConnectorError(`the private key of ${who} is not a valid PKCS#8 RSA key`, "auth");
  }
  const now = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ scope })
    .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: account.private_key_id })
    .setIssuer(account.client_email)
    .setSubject(account.client_email)
    .setAudience(tokenUri)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(key);
  const secrets = [assertion, ...accountSecrets(account)];
  const res = await fetchOrUnreachable(
    tokenUri,
    () =>
      outboundFetch(
        tokenUri,
        {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }),
        },
        { policy },
      ),
    secrets,
  );
  const text = await res.text().catch(() => "");
  let body: { access_token?: string; expires_in?: number; error?: string; error_description?: string } = {};
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's error page): the status decides below.
  }
  if (res.ok && body.access_token) {
    return cachedToken(body.access_token, body.expires_in);
  }
  logProviderFailure("google-oauth", res.status, tokenUri, text, secrets);
  const reason = safeDetail([body.error, body.error_description].filter(Boolean).join(": "), secrets);
  const detail = reason ? ` (${reason})` : "";
  // Google answers a refused assertion (bad signature, unknown key, disabled account) with 400 invalid_grant.
  if (res.status === 400 || res.status === 401 || res.status === 403) {
    throw new ConnectorError(`Google refused to sign in ${who}: check the credential${detail}`, "auth");
  }
  throw new ConnectorError(
    `the token endpoint ${redactUrl(tokenUri)} answered ${res.status} for ${who}${detail}`,
    kindForStatus(res.status),
  );
}
