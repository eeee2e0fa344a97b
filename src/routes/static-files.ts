/**
 * The static files the Worker serves itself: the dashboard under /app/ and the Scalar bundle of the
 * API reference (/docs/scalar.js), gzipped into a generated module at install time
 * (scripts/build-app.mjs from public/). There is no static-assets `[assets]` table: with one, every
 * request, the API's included, first passed through the assets' router Worker (`run_worker_first`
 * skips its lookup, not its hop), ~0.5 ms of runtime thread a read (bench/log, issue 40).
 *
 * Served as the assets router served them: the content type, a strong ETag (304 on If-None-Match),
 * `Cache-Control: public, max-age=0, must-revalidate`; gzip as stored when the client accepts it,
 * inflated otherwise. A file's bytes are decoded once per isolate, on its first request.
 */
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { STATIC_FILES } from "./static-files.generated";

/** One file as the generated module holds it: Content-Type, strong ETag, the content gzipped in base64. */
type StaticFile = (typeof STATIC_FILES)[string];

const CACHE_CONTROL = "public, max-age=0, must-revalidate";

const decoded = new Map<string, Uint8Array>();

function gzipBytes(path: string, file: StaticFile): Uint8Array {
  let bytes = decoded.get(path);
  if (!bytes) {
    const binary = atob(file.gzip);
    bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    decoded.set(path, bytes);
  }
  return bytes;
}

/** Whether an If-None-Match header names `etag` (or is `*`). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(",")
    .map((tag) => tag.trim().replace(/^W\//, ""))
    .some((tag) => tag === etag || tag === "*");
}

/** Whether an Accept-Encoding header accepts gzip (not refused with q=0). */
function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  return acceptEncoding.split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    if (coding !== "gzip" && coding !== "*") return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** The file at `path` as a response, or undefined when there is none. */
export function staticFile(c: Context<AppEnv>, path: string): Response | undefined {
  const file = Object.hasOwn(STATIC_FILES, path) ? STATIC_FILES[path] : undefined;
  if (!file) return undefined;
  const headers: Record<string, string> = {
    "Content-Type": file.type,
    ETag: file.etag,
    "Cache-Control": CACHE_CONTROL,
    Vary: "Accept-Encoding",
  };
  if (matches(c.req.header("If-None-Match"), file.etag)) return new Response(null, { status: 304, headers });
  const bytes = gzipBytes(path, file);
  if (acceptsGzip(c.req.header("Accept-Encoding"))) {
    // Sent as stored: the runtime must not encode it again.
    return new Response(bytes, { headers: { ...headers, "Content-Encoding": "gzip" }, encodeBody: "manual" });
  }
  const body = new Response(bytes).body!.pipeThrough(new DecompressionStream("gzip"));
  return new Response(body, { headers });
}
