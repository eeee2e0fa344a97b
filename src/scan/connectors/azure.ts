import type { OutboundPolicy } from "../../lib/outbound";
import { outboundFetch } from "../../lib/outbound-fetch";
import { encodeKeyPath, type ListingPage, type ListOptions, listMatching, queryString } from "./glob";
import {
  bodyOrEmpty,
  ConnectorError,
  decodeXmlText,
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

/** The Blob service REST version the requests speak (it fixes the XML shapes read here). */
export const AZURE_API_VERSION = "2021-08-06";

export interface AzureBlobStoreOptions {
  account: string;
  container: string;
  /** A SAS token ("sv=…&sig=…", with or without "?") or a SAS URL of the account or container. */
  sasToken: string;
  /** Default https://{account}.blob.core.windows.net; Azurite: http://127.0.0.1:10000/devstoreaccount1. */
  endpoint?: string;
  /** Blobs per List Blobs page; Azure's default and maximum is 5000. */
  pageSize?: number;
  /** Where requests may go; default the deployment's (ALLOW_PRIVATE_TARGETS). */
  policy?: OutboundPolicy;
}

const NOT_FOUND_CODES = new Set(["ContainerNotFound", "BlobNotFound", "ResourceNotFound"]);
const AUTH_CODES = new Set([
  "AuthenticationFailed",
  "AuthorizationFailure",
  "AuthorizationPermissionMismatch",
  "AuthorizationResourceTypeMismatch",
  "AuthorizationServiceMismatch",
  "AuthorizationSourceIPMismatch",
  "AuthorizationProtocolMismatch",
  "InsufficientAccountPermissions",
]);

/** The query part of a SAS token or SAS URL, without the leading "?". */
export function sasQuery(sas: string): string {
  const trimmed = sas.trim();
  if (/^https?:\/\//i.test(trimmed)) return new URL(trimmed).search.replace(/^\?/, "");
  return trimmed.replace(/^\?/, "");
}

/** Azure Blob Storage through a SAS token. */
export class AzureBlobStore implements WritableObjectStore {
  private readonly base: string;
  private readonly sas: string;
  private readonly label: string;
  private readonly pageSize: number | undefined;
  private readonly policy: OutboundPolicy | undefined;
  /** The SAS token and its signature: never in a message. */
  private readonly secrets: string[];

  constructor(options: AzureBlobStoreOptions) {
    const endpoint = (options.endpoint || `https://${options.account}.blob.core.windows.net`).replace(/\/+$/, "");
    this.base = `${endpoint}/${encodeURIComponent(options.container)}`;
    this.sas = sasQuery(options.sasToken);
    this.label = `container '${options.container}' of storage account '${options.account}'`;
    this.pageSize = options.pageSize;
    this.policy = options.policy;
    this.secrets = [options.sasToken, this.sas, new URLSearchParams(this.sas).get("sig") ?? undefined].filter(
      (v): v is string => !!v,
    );
  }

  list(pattern: string, options?: ListOptions): Promise<StoredObject[]> {
    return listMatching(pattern, (prefix, token) => this.listPage(prefix, token), options);
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    return bodyOrEmpty(await this.send(this.blobUrl(key), {}, `blob '${key}'`));
  }

  async readRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    const range = `bytes=${offset}-${offset + length - 1}`;
    // x-ms-range wins over Range on the service; both are sent for proxies that know only Range.
    const res = await this.send(this.blobUrl(key), { headers: { "x-ms-range": range, range } }, `blob '${key}'`);
    return rangeBytes(res, offset, length);
  }

  /** Put Blob as a block blob in one request (up to 5000 MiB); the SAS needs create and write. */
  async put(key: string, body: ReadableStream<Uint8Array>, options: PutOptions): Promise<void> {
    const headers = { "x-ms-blob-type": "BlockBlob", "x-ms-blob-content-type": options.contentType };
    const res = await this.send(this.blobUrl(key), writeRequest("PUT", headers, body, options), `blob '${key}'`);
    await res.body?.cancel();
  }

  /** Delete Blob (and its snapshots); the SAS needs delete. */
  async delete(key: string): Promise<void> {
    try {
      const res = await this.send(
        this.blobUrl(key),
        { method: "DELETE", headers: { "x-ms-delete-snapshots": "include" } },
        `blob '${key}'`,
      );
      await res.body?.cancel();
    } catch (err) {
      if (!(err instanceof ConnectorError && err.kind === "not_found" && err.message.startsWith("blob "))) throw err;
    }
  }

  private blobUrl(key: string): string {
    return `${this.base}/${encodeKeyPath(key)}${this.sas ? `?${this.sas}` : ""}`;
  }

  private async listPage(prefix: string, marker: string | undefined): Promise<ListingPage> {
    const query = queryString({ restype: "container", comp: "list", prefix, marker, maxresults: this.pageSize });
    const res = await this.send(`${this.base}?${query}${this.sas ? `&${this.sas}` : ""}`, {}, "the listing");
    const xml = await res.text();
    const objects = xmlElements(xml, "Blob").map((blob): StoredObject => {
      const nameEl = xmlElements(blob.inner, "Name")[0];
      let key = nameEl ? decodeXmlText(nameEl.inner) : "";
      // Names with characters XML cannot carry come percent-encoded, flagged Encoded="true".
      if (nameEl && /Encoded\s*=\s*["']true["']/i.test(nameEl.attributes)) key = decodeURIComponent(key);
      const size = Number(xmlText(blob.inner, "Content-Length") ?? "0");
      const modified = xmlText(blob.inner, "Last-Modified");
      const time = modified ? Date.parse(modified) : Number.NaN;
      return { key, size, ...(Number.isNaN(time) ? {} : { lastModified: new Date(time).toISOString() }) };
    });
    const next = xmlText(xml, "NextMarker");
    return { objects, ...(next ? { next } : {}) };
  }

  /** A request (a GET unless `init` says otherwise); any answer but 2xx becomes a ConnectorError naming `what`. */
  private async send(url: string, init: StoreRequest, what: string): Promise<Response> {
    const res = await fetchOrUnreachable(
      url,
      () =>
        outboundFetch(
          url,
          {
            method: init.method ?? "GET",
            headers: { "x-ms-version": AZURE_API_VERSION, ...init.headers },
            body: init.body ?? null,
            ...(init.signal ? { signal: init.signal } : {}),
          },
          { policy: this.policy },
        ),
      this.secrets,
    );
    if (res.ok) return res;
    const xml = await res.text().catch(() => "");
    logProviderFailure("azure-blob", res.status, url, xml, this.secrets);
    // The error's Message and Code only: AuthenticationErrorDetail quotes the string that was signed.
    const code = safeDetail(xmlText(xml, "Code") ?? res.headers.get("x-ms-error-code"), this.secrets, 100);
    const message = safeDetail(xmlText(xml, "Message")?.split("\n")[0], this.secrets);
    const detail = code ? ` (${code}${message ? `: ${message}` : ""})` : "";
    if (res.status === 404 || NOT_FOUND_CODES.has(code)) {
      const missing = code === "ContainerNotFound" ? this.label : `${what} in ${this.label}`;
      throw new ConnectorError(`${missing} not found${detail}`, "not_found");
    }
    if (res.status === 401 || res.status === 403 || AUTH_CODES.has(code)) {
      throw new ConnectorError(
        `access denied to ${this.label}: check the SAS token (permissions, expiry)${detail}`,
        "auth",
      );
    }
    if (res.status === 416) {
      throw new ConnectorError(`${what}: the range starts past the end of the blob`, "invalid");
    }
    throw new ConnectorError(
      `Azure Blob Storage answered ${res.status} for ${what} at ${redactUrl(url)}${detail}`,
      kindForStatus(res.status),
    );
  }
}
