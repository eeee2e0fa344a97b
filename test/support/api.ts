import { SELF } from "cloudflare:test";

export const ADMIN_KEY = "test-admin-key";
export const TOKEN_SECRET = "test-token-signing-secret-0123456789abcdef";

/** How a test request authenticates: an API key, a bearer token, or nothing. */
export type Credential = { key: string } | { token: string } | undefined;

export interface CallOptions {
  as?: Credential;
  body?: unknown;
  /** Raw body text, sent as is (e.g. malformed JSON). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** Calls the Worker through its real fetch handler, inside the Workers runtime. */
export async function call<T = any>(method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.as && "key" in opts.as) headers["X-SVC-Key"] = opts.as.key;
  if (opts.as && "token" in opts.as) headers.Authorization = `Bearer ${opts.as.token}`;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers["Content-Type"] ??= "application/json";
  const res = await SELF.fetch(`https://dq.test${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export const admin: Credential = { key: ADMIN_KEY };

/** A path template of the OpenAPI document (`/x/{name}`) with each parameter's value from `values`. */
export const fillPath = (template: string, values: Record<string, string>) =>
  template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no fixture for the path parameter {${name}} of ${template}`);
    return encodeURIComponent(value);
  });
