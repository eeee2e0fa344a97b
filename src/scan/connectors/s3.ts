import { AwsClient } from "aws4fetch";
import type { OutboundPolicy } from "../../lib/outbound";
import { outboundFetch } from "../../lib/outbound-fetch";
import { encodeKeyPath, type ListingPage, type ListOptions, listMatching, queryString } from "./glob";
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
  xmlElements,
  xmlText,
} from "./types";

export interface S3StoreOptions {
  bucket: string;
  /** Signing region; default us-east-1 ("auto" for R2's S3 API). */
  region?: string;
  /** An S3-compatible endpoint (MinIO, R2, s3rver…): path-style URLs are used with it. */
  endpoint?: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Keys per ListObjectsV2 page; S3's default and maximum is 1000. */
  pageSize?: number;
  /** Where requests may go; default the deployment's (ALLOW_PRIVATE_TARGETS). */
  policy?: OutboundPolicy;
}

/** S3 error codes that mean "not there", whatever the status says. */
const NOT_FOUND_CODES = new Set(["NoSuchKey", "NoSuchBucket", "NotFound"]);
/** S3 error codes that mean the credential is wrong or expired (some come as 400). */
const AUTH_CODES = new Set([
  "AccessDenied",
  "InvalidAccessKeyId",
  "SignatureDoesNotMatch",
  "ExpiredToken",
  "InvalidToken",
  "TokenRefreshRequired",
  "AuthorizationHeaderMalformed",
]);

/** Amazon S3 or an S3-compatible store, signed with SigV4 (aws4fetch). */
export class S3Store implements WritableObjectStore {
  private readonly client: AwsClient;
  private readonly base: string;
  private readonly bucket: string;
  private readonly pageSize: number | undefined;
  private readonly policy: OutboundPolicy | undefined;
  /** What no error message may show: the keys, and their forms in an echoed request. */
  private readonly secrets: string[];

  constructor(options: S3StoreOptions) {
    const region = options.region || "us-east-1";
    this.bucket = options.bucket;
    this.pageSize = options.pageSize;
    this.policy = options.policy;
    this.secrets = [options.secretAccessKey, options.accessKeyId];
    // The job queue retries with backoff; aws4fetch's own retries (10 by default) would multiply that.
    this.client = new AwsClient({
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
      service: "s3",
      region,
      retries: 0,
    });
    if (options.endpoint) {
      this.base = `${options.endpoint.replace(/\/+$/, "")}/${encodeURIComponent(options.bucket)}`;
    } else if (options.bucket.includes(".")) {
      // A dotted bucket name breaks the TLS wildcard of virtual-hosted URLs: path-style instead.
      this.base = `https://s3.${region}.amazonaws.com/${options.bucket}`;
    } else {
      this.base = `https://${options.bucket}.s3.${region}.amazonaws.com`;
    }
  }

  list(pattern: string, options?: ListOptions): Promise<StoredObject[]> {
    return listMatching(pattern, (prefix, token) => this.listPage(prefix, token), options);
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    const res = await this.send(this.objectUrl(key), {}, `object '${key}'`);
    return bodyOrEmpty(res);
  }

  async readRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    const headers = { range: `bytes=${offset}-${offset + length - 1}` };
    const res = await this.send(this.objectUrl(key), { headers }, `object '${key}'`);
    return rangeBytes(res, offset, length);
  }

  /** PutObject: one request, the payload unsigned (UNSIGNED-PAYLOAD) so it streams; S3 takes up to 5 GB so. */
  async put(key: string, body: ReadableStream<Uint8Array>, options: PutOptions): Promise<void> {
    const request = writeRequest("PUT", { "content-type": options.contentType }, body, options);
    const res = await this.send(this.objectUrl(key), request, `object '${key}'`);
    await res.body?.cancel();
  }

  async delete(key: string): Promise<void> {
    try {
      const res = await this.send(this.objectUrl(key), { method: "DELETE" }, `object '${key}'`);
      await res.body?.cancel();
    } catch (err) {
      if (!(err instanceof ConnectorError && err.kind === "not_found" && !/^bucket /.test(err.message))) throw err;
    }
  }

  private objectUrl(key: string): string {
    return `${this.base}/${encodeKeyPath(key)}`;
  }

  private async listPage(prefix: string, token: string | undefined): Promise<ListingPage> {
    const query = queryString({
      "list-type": 2,
      prefix,
      "continuation-token": token,
      "max-keys": this.pageSize,
    });
    const res = await this.send(`${this.base}/?${query}`, {}, "the listing");
    const xml = await res.text();
    const objects = xmlElements(xml, "Contents").map((el): StoredObject => {
      const key = xmlText(el.inner, "Key") ?? "";
      const size = Number(xmlText(el.inner, "Size") ?? "0");
      const modified = xmlText(el.inner, "LastModified");
      const time = modified ? Date.parse(modified) : Number.NaN;
      return { key, size, ...(Number.isNaN(time) ? {} : { lastModified: new Date(time).toISOString() }) };
    });
    const truncated = xmlText(xml, "IsTruncated") === "true";
    const next = truncated ? xmlText(xml, "NextContinuationToken") : undefined;
    return { objects, ...(next ? { next } : {}) };
  }

  /** A signed request (a GET unless `init` says otherwise); any answer but 2xx becomes a ConnectorError naming `what`. */
  private async send(url: string, init: StoreRequest, what: string): Promise<Response> {
    const method = init.method ?? "GET";
    const res = await fetchOrUnreachable(
      url,
      async () => {
        // The body is not part of the signature (aws4fetch signs S3 requests UNSIGNED-PAYLOAD).
        const signed = await this.client.sign(url, { method, headers: init.headers ?? {} });
        return outboundFetch(
          signed.url,
          { method, headers: signed.headers, body: init.body ?? null, ...(init.signal ? { signal: init.signal } : {}) },
          { policy: this.policy },
        );
      },
      this.secrets,
    );
    if (res.ok) return res;
    throw await this.failure(res, url, what);
  }

  private async failure(res: Response, url: string, what: string): Promise<ConnectorError> {
    const xml = await res.text().catch(() => "");
    logProviderFailure("s3", res.status, url, xml, this.secrets);
    const code = safeDetail(xmlText(xml, "Code"), this.secrets, 100);
    const message = safeDetail(xmlText(xml, "Message"), this.secrets);
    const detail = code ? ` (${code}${message ? `: ${message}` : ""})` : "";
    const bucket = `s3://${this.bucket}`;
    if (res.status === 404 || NOT_FOUND_CODES.has(code)) {
      const missing = code === "NoSuchBucket" ? `bucket ${bucket}` : `${what} in ${bucket}`;
      return new ConnectorError(`${missing} not found${detail}`, "not_found");
    }
    if (res.status === 401 || res.status === 403 || AUTH_CODES.has(code)) {
      return new ConnectorError(`access denied to bucket ${bucket}: check the credential${detail}`, "auth");
    }
    if (res.status === 301 || code === "PermanentRedirect") {
      const endpoint = safeDetail(xmlText(xml, "Endpoint"), this.secrets, 200);
      return new ConnectorError(
        `bucket ${bucket} is in another region${endpoint ? ` (endpoint ${endpoint})` : ""}: set the connection's region`,
        "invalid",
      );
    }
    if (res.status === 416) {
      return new ConnectorError(`${what} in ${bucket}: the range starts past the end of the object`, "invalid");
    }
    const kind = kindForStatus(res.status);
    return new ConnectorError(`S3 answered ${res.status} for ${what} at ${redactUrl(url)}${detail}`, kind);
  }
}
