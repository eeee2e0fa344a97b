/**
 * A typed client of the API: the request and response types come from `schema.d.ts`, generated
 * from the served OpenAPI document by openapi-typescript (`npm run lint:openapi` writes it, CI
 * fails when it is stale; never edit it by hand), and the calls are openapi-fetch's.
 *
 *   const dq = createDqClient({ baseUrl: "https://dq.example.com", apiKey: process.env.DQ_API_KEY });
 *   const { data, error } = await dq.GET("/api/backend/{tenant}/configuration/projects", {
 *     params: { path: { tenant: "acme" } },
 *   });
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

export function createDqClient(options: DqClientOptions): DqClient {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers["X-SVC-Key"] = options.apiKey;
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
