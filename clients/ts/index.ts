/**
 * A typed client of the API: the request and response types come from `schema.d.ts`, generated
 * from the served OpenAPI document by openapi-typescript (`npm run lint:openapi` writes it, CI
 * fails when it is stale; never edit it by hand), and the calls are openapi-fetch's.
 *
 *   const dq = createDqClient({ baseUrl: "https://dq.example.com", apiKey: process.env.DQ_API_KEY });
 *   const { data, error } = await dq.GET("/api/backend/{tenant}/configuration/projects", {
 *     params: { path: { tenant: "acme" } },
 *   });
 *
 * The client carries the API's session bookmark (X-Session-Bookmark): it sends the newest one it
 * was given with each request, so its reads see its own writes even when read replicas answer.
 */
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema";

export type { components, operations, paths } from "./schema";

export interface DqClientOptions {
  /** The service's origin, e.g. https://dq.example.com. */
  baseUrl: string;
  /** An API key (tenant, user or the administrator's), sent as X-SVC-Key. */
  apiKey?: string;
  /** A bearer token (POST /auth/token), sent as Authorization. */
  token?: string;
  /** A fetch of your own (tests, proxies). */
  fetch?: typeof globalThis.fetch;
}

export type DqClient = Client<paths>;

/** The header of the API's session bookmark. */
export const BOOKMARK_HEADER = "X-Session-Bookmark";

export function createDqClient(options: DqClientOptions): DqClient {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers["X-SVC-Key"] = options.apiKey;
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  // The newest bookmark seen (bookmarks sort oldest to newest), sent back with every request.
  let bookmark: string | undefined;
  client.use({
    onRequest({ request }) {
      if (bookmark && !request.headers.has(BOOKMARK_HEADER)) request.headers.set(BOOKMARK_HEADER, bookmark);
      return request;
    },
    onResponse({ response }) {
      const seen = response.headers.get(BOOKMARK_HEADER);
      if (seen && (bookmark === undefined || seen > bookmark)) bookmark = seen;
      return response;
    },
  });
  return client;
}
