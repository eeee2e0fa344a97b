/**
 * The dashboard's access to the API: the typed client (clients/ts) over the session's bearer
 * token, the session itself (token and tenant in sessionStorage, never the key), and problem+json
 * errors turned into messages that carry the API's `detail`.
 */
import { type components, createDqClient, type DqClient } from "../clients/ts";

export type Schemas = components["schemas"];

const SESSION_KEY = "dq.session";

export interface Session {
  tenant: string;
  token: string;
  /** Epoch ms after which the token is refused. */
  expiresAt: number;
}

/** An API answer that was not a success: the problem's title and detail. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export function loadSession(): Session | null {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? "null") as Session | null;
    return s && s.expiresAt > Date.now() ? s : null;
  } catch {
    return null;
  }
}

export function forgetSession(): void {
  sessionStorage.removeItem(SESSION_KEY);
}

/** What a problem+json (or any failed answer) says, for the person reading the page. */
export function problemText(status: number, body: unknown): string {
  const p = (body ?? {}) as { title?: string; detail?: string };
  return p.detail ?? p.title ?? `The service answered ${status}`;
}

/** Exchanges an API key for a token (POST /auth/token); keeps the token and the tenant, not the key. */
export async function signIn(tenant: string, apiKey: string): Promise<Session> {
  const dq = createDqClient({ baseUrl: location.origin });
  const { data, error, response } = await dq.POST("/auth/token", { body: { api_key: apiKey } });
  if (!data) throw new ProblemError(response.status, problemText(response.status, error));
  const session = { tenant, token: data.access_token, expiresAt: Date.now() + data.expires_in * 1000 };
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
  return session;
}

export function client(session: Session): DqClient {
  return createDqClient({ baseUrl: location.origin, token: session.token });
}

/** The data of a client call, or a ProblemError with the problem's detail. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw new ProblemError(response.status, problemText(response.status, error));
  return data;
}
