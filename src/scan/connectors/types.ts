import { logNetworkFailure, networkFailure } from "../../lib/network-errors";
import { OutboundTargetError } from "../../lib/outbound";
import { EXCERPT_MAX, excerpt, logUpstreamFailure, redactSecrets } from "../../lib/redact";

/** An object (file) in object storage. */
export interface StoredObject {
  key: string;
  size: number;
  /** ISO 8601 UTC, when the store reports it. */
  lastModified?: string;
}

/**
 * Files in object storage (S3, GCS, Azure Blob, R2): the one interface every file connector
 * implements. Bytes are streamed or read by range, never loaded whole.
 */
export interface ObjectStore {
  /**
   * Objects whose keys match a path with `*` / `?` wildcards (or a plain key or prefix); with
   * `folders`, a wildcard that matches a folder takes everything below it.
   */
  list(pattern: string, options?: { folders?: boolean }): Promise<StoredObject[]>;
  /** The object's bytes as a stream. */
  stream(key: string): Promise<ReadableStream<Uint8Array>>;
  /** `length` bytes from `offset` (Parquet footers and column chunks). */
  readRange(key: string, offset: number, length: number): Promise<Uint8Array>;
}

/** How an object is written: its exact length (the body must carry that many bytes) and media type. */
export interface PutOptions {
  bytes: number;
  contentType: string;
  /** Aborts the request (e.g. when the upload turns out to be over the tenant's limit). */
  signal?: AbortSignal;
}

/**
 * An object store the service writes to as well as reads: the bucket a tenant configured for its
 * uploaded batches (S3, R2, GCS, Azure). Each object is written in one request.
 */
export interface WritableObjectStore extends ObjectStore {
  /** Stores `body` (exactly `options.bytes` bytes, streamed) at `key`, replacing any object there. */
  put(key: string, body: ReadableStream<Uint8Array>, options: PutOptions): Promise<void>;
  /** Deletes `key`; an object that is not there is not an error. */
  delete(key: string): Promise<void>;
}

/** A request of an HTTP store: a GET unless it says otherwise. */
export interface StoreRequest {
  method?: "GET" | "PUT" | "POST" | "DELETE";
  headers?: Record<string, string>;
  body?: ReadableStream<Uint8Array> | null;
  signal?: AbortSignal;
}

/**
 * The request that writes `body`: streamed with a known length, so it goes out with a
 * Content-Length (stores refuse chunked uploads without one); a body shorter or longer than
 * `options.bytes` fails the request.
 */
export function writeRequest(
  method: "PUT" | "POST",
  headers: Record<string, string>,
  body: ReadableStream<Uint8Array>,
  options: PutOptions,
): StoreRequest {
  return {
    method,
    headers,
    body: body.pipeThrough(new FixedLengthStream(options.bytes)),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

/** A connector error a user can act on; `transient` ones are retried with backoff. */
export class ConnectorError extends Error {
  constructor(
    message: string,
    readonly kind: "auth" | "not_found" | "unreachable" | "invalid" | "unsupported" | "transient",
  ) {
    super(message);
    this.name = "ConnectorError";
  }

  get transient(): boolean {
    return this.kind === "transient" || this.kind === "unreachable";
  }
}

// ---- Helpers shared by the HTTP object stores (S3, GCS, Azure) ----

/** A URL fit for an error message: scheme, host and path only (no SAS token or signature). */
export function redactUrl(url: string | URL): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return String(url).replace(/[?#].*$/s, "");
  }
}

/**
 * A provider's message fit for an error: every secret of the request (and anything that looks
 * like one) removed, query strings dropped, whitespace collapsed, at most `max` characters.
 */
export function safeDetail(
  text: unknown,
  secrets: readonly (string | null | undefined)[] = [],
  max: number = EXCERPT_MAX,
): string {
  const raw = typeof text === "string" ? text : text === undefined || text === null ? "" : String(text);
  return excerpt(redactSecrets(raw, secrets).replace(/\?[^\s"'<>]*/g, ""), [], max);
}

/**
 * Logs a provider's whole error answer, redacted (see lib/redact.ts), beside the short message
 * the user sees; `source` names the provider, `url` where it was asked (without query).
 */
export function logProviderFailure(
  source: string,
  status: number | string | null,
  url: string | URL | undefined,
  text: unknown,
  secrets: readonly (string | null | undefined)[],
): void {
  logUpstreamFailure({ source, status, ...(url ? { target: redactUrl(url) } : {}) }, text, secrets);
}

/** A refused target (lib/outbound.ts) as the connector error the user sees: not retried, names the target. */
export function refusedTarget(err: OutboundTargetError): ConnectorError {
  return new ConnectorError(err.message, "invalid");
}

/**
 * Sends a request; a network failure (the fetch itself throws) becomes an "unreachable"
 * ConnectorError that names the host, never the full URL, and says what failed in our words
 * (lib/network-errors.ts: never the runtime's own text, which is logged). A target the outbound
 * policy refuses is an "invalid" one (the user must change the endpoint; retrying changes nothing).
 */
export async function fetchOrUnreachable(
  url: string | URL,
  send: () => Promise<Response>,
  secrets: readonly (string | null | undefined)[] = [],
): Promise<Response> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof ConnectorError) throw err;
    if (err instanceof OutboundTargetError) throw refusedTarget(err);
    const host = (() => {
      try {
        return new URL(url).host;
      } catch {
        return "the storage endpoint";
      }
    })();
    logNetworkFailure({ target: host }, err, secrets);
    throw new ConnectorError(`cannot reach ${host}: ${networkFailure(err)}`, "unreachable");
  }
}

/** The kind of a failed HTTP answer: 401/403 auth, 404 not found, 429/5xx transient, else invalid. */
export function kindForStatus(status: number): ConnectorError["kind"] {
  if (status === 401 || status === 403) return "auth";
  if (status === 404) return "not_found";
  if (status === 408 || status === 429 || status >= 500) return "transient";
  return "invalid";
}

/**
 * The bytes of a ranged GET: a 206 body as is, or, from a server that ignored the Range header
 * (200), the requested slice taken from the stream without holding the whole object.
 */
export async function rangeBytes(res: Response, offset: number, length: number): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0);
  const skip = res.status === 206 ? 0 : offset;
  const out = new Uint8Array(length);
  let filled = 0;
  let seen = 0;
  const reader = res.body.getReader();
  try {
    while (filled < length) {
      const { done, value } = await reader.read();
      if (done) break;
      const from = Math.max(0, skip - seen);
      seen += value.byteLength;
      if (from >= value.byteLength) continue;
      const take = value.subarray(from, from + (length - filled));
      out.set(take, filled);
      filled += take.byteLength;
    }
  } finally {
    // Stop the download once the slice is complete (a 200 answer may carry the whole object).
    await reader.cancel().catch(() => {});
  }
  return filled === length ? out : out.slice(0, filled);
}

/** A store's answer body, or an empty stream for an empty object. */
export function bodyOrEmpty(res: Response): ReadableStream<Uint8Array> {
  return res.body ?? new ReadableStream({ start: (c) => c.close() });
}

// ---- A small XML reader for the S3 and Azure listing answers (workerd has no DOMParser) ----

const XML_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

/** Decodes XML character data: CDATA sections, the five named entities and numeric references. */
export function decodeXmlText(raw: string): string {
  let out = "";
  let last = 0;
  const cdata = /<!\[CDATA\[([\s\S]*?)\]\]>/g;
  for (let m = cdata.exec(raw); m; m = cdata.exec(raw)) {
    out += decodeEntities(raw.slice(last, m.index)) + m[1];
    last = m.index + m[0].length;
  }
  return out + decodeEntities(raw.slice(last));
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code =
        ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return XML_ENTITIES[ref] ?? whole;
  });
}

/** An element found by xmlElements: its attributes as written and its raw inner XML. */
export interface XmlElement {
  attributes: string;
  inner: string;
}

const escapeName = (name: string) => name.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");

/**
 * The elements named exactly `name` in `xml`, outermost first, in document order (self-closing
 * ones have empty inner XML). The listing schemas never nest an element inside one of its own name.
 */
export function xmlElements(xml: string, name: string): XmlElement[] {
  const body = xml.replace(/<!--[\s\S]*?-->/g, "");
  // The name must end at whitespace, "/" or ">": <Key> is not <KeyCount>, <Blob> is not <Blobs>.
  const open = new RegExp(`<${escapeName(name)}(\\s[^>]*?)?(/?)>`, "g");
  const close = `</${name}>`;
  const found: XmlElement[] = [];
  for (let m = open.exec(body); m; m = open.exec(body)) {
    const attributes = m[1] ?? "";
    if (m[2] === "/") {
      found.push({ attributes, inner: "" });
      continue;
    }
    const start = m.index + m[0].length;
    const end = body.indexOf(close, start);
    if (end < 0) break;
    found.push({ attributes, inner: body.slice(start, end) });
    open.lastIndex = end + close.length;
  }
  return found;
}

/** The decoded text of the first element named `name`, or undefined. */
export function xmlText(xml: string, name: string): string | undefined {
  const el = xmlElements(xml, name)[0];
  return el === undefined ? undefined : decodeXmlText(el.inner);
}
