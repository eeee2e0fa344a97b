/**
 * Jira Cloud REST API v3: `POST {base}/rest/api/3/issue` with Basic auth (account e-mail and
 * API token) and `{fields: {project: {id}, issuetype: {id}, summary, description (ADF), ...}}`.
 * https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-issues/#api-rest-api-3-issue-post
 */

import { logNetworkFailure, networkFailure } from "../lib/network-errors";
import { type OutboundPolicy, OutboundTargetError } from "../lib/outbound";
import { outboundFetch } from "../lib/outbound-fetch";
import { basicAuthSecrets, EXCERPT_MAX, excerpt, logUpstreamFailure } from "../lib/redact";

/** Jira's summary field holds at most 255 characters. */
export const JIRA_SUMMARY_MAX = 255;
/** Jira's ids of projects and issue types are numbers, sent as strings of digits. */
export const JIRA_ID = /^\d+$/;
/** A custom field's id as the create-issue request names it (`customfield_10010`); our own fields are never one. */
export const JIRA_CUSTOM_FIELD_ID = /^customfield_\d+$/;
/** How long one call may take before it counts as a network failure (retried). */
const REQUEST_TIMEOUT_MS = 15_000;

export interface JiraCredentials {
  baseUrl: string;
  email: string;
  apiToken: string;
}

/** An Atlassian Document Format node (https://developer.atlassian.com/cloud/jira/platform/apis/document/structure/). */
export type AdfNode = { type: string; text?: string; content?: AdfNode[]; attrs?: Record<string, unknown> };
export type AdfDocument = { type: "doc"; version: 1; content: AdfNode[] };

/** The body of a create-issue request. */
export interface JiraIssueFields {
  project: { id: string };
  issuetype: { id: string };
  summary: string;
  description: AdfDocument;
  [customField: string]: unknown;
}

/** The body of POST /rest/api/3/issue (jira.js's CreateIssue, checked in test/integrations/jira-contract.test.ts). */
export function createIssueRequest(fields: JiraIssueFields) {
  return { fields };
}

/** What one attempt came to: created, a final refusal, or a failure worth retrying. */
export type JiraOutcome =
  | { kind: "created"; id: string; key: string; url: string }
  | { kind: "rejected"; status: number | null; error: string }
  | { kind: "retry"; status: number | null; error: string; retryAfterSeconds: number | null };

export const adf = {
  doc: (...content: AdfNode[]): AdfDocument => ({ type: "doc", version: 1, content }),
  paragraph: (text: string): AdfNode => ({ type: "paragraph", content: [{ type: "text", text }] }),
  heading: (level: number, text: string): AdfNode => ({
    type: "heading",
    attrs: { level },
    content: [{ type: "text", text }],
  }),
  bullets: (items: string[]): AdfNode => ({
    type: "bulletList",
    content: items.map((text) => ({ type: "listItem", content: [adf.paragraph(text)] })),
  }),
};

/** `Authorization: Basic base64(email:api_token)`, UTF-8 safe. */
export function basicAuth(email: string, apiToken: string): string {
  const bytes = new TextEncoder().encode(`${email}:${apiToken}`);
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return `Basic ${btoa(s)}`;
}

/**
 * Jira's error body `{errorMessages: [], errors: {field: message}}` as one line; else the raw
 * text. Unbounded and unredacted: only jiraError() output may be stored or shown.
 */
export function jiraErrorText(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { errorMessages?: unknown; errors?: unknown };
    const parts: string[] = [];
    if (Array.isArray(body.errorMessages)) parts.push(...body.errorMessages.map(String));
    if (body.errors && typeof body.errors === "object") {
      for (const [field, message] of Object.entries(body.errors)) parts.push(`${field}: ${String(message)}`);
    }
    if (parts.length > 0) return `Jira answered ${status}: ${parts.join("; ")}`;
  } catch {
    // not JSON: fall through to the text
  }
  const trimmed = text.trim();
  return trimmed ? `Jira answered ${status}: ${trimmed}` : `Jira answered ${status}`;
}

/** What Jira's answers must never show: the e-mail, the API token, and the Basic header made of them. */
export function jiraSecrets(creds: Pick<JiraCredentials, "email" | "apiToken">): string[] {
  return [...basicAuthSecrets(creds.email, creds.apiToken), basicAuth(creds.email, creds.apiToken)];
}

/**
 * A failure message fit for a ticket request (stored, and shown to project viewers): the
 * credentials and anything like one removed, at most EXCERPT_MAX characters. The whole text,
 * redacted the same way, is logged with the ticket request's id.
 */
export function jiraError(
  message: string,
  creds: Pick<JiraCredentials, "email" | "apiToken">,
  context: { status: number | null; requestId?: string | undefined },
): string {
  const secrets = jiraSecrets(creds);
  logUpstreamFailure(
    { source: "jira", status: context.status, ...(context.requestId ? { request_id: context.requestId } : {}) },
    message,
    secrets,
  );
  return excerpt(message, secrets, EXCERPT_MAX);
}

/** How createJiraIssue runs: the clock (Retry-After), where it may call, and the ticket request it serves (logs). */
export interface JiraCallOptions {
  now?: () => Date;
  /** Default: the deployment's (ALLOW_PRIVATE_TARGETS). */
  policy?: OutboundPolicy;
  requestId?: string;
}

/** Retry-After as seconds (delta-seconds or an HTTP date), or null. */
export function retryAfterSeconds(value: string | null, now: Date): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** The browse address of an issue, shown on the incident. */
export function browseUrl(baseUrl: string, key: string): string {
  return `${baseUrl}/browse/${encodeURIComponent(key)}`;
}

/**
 * Creates one issue, once. 201 is created; 429, 5xx and network failures are worth retrying;
 * a base URL the outbound policy refuses, and any other status, are final refusals. Error
 * messages are excerpts of Jira's with the credentials removed (jiraError).
 */
export async function createJiraIssue(
  creds: JiraCredentials,
  fields: JiraIssueFields,
  options: JiraCallOptions = {},
): Promise<JiraOutcome> {
  const now = options.now ?? (() => new Date());
  const error = (message: string, status: number | null) =>
    jiraError(message, creds, { status, requestId: options.requestId });
  let res: Response;
  try {
    res = await outboundFetch(
      `${creds.baseUrl}/rest/api/3/issue`,
      {
        method: "POST",
        headers: {
          Authorization: basicAuth(creds.email, creds.apiToken),
          Accept: "application/json",
          "Content-Type": "application/json",
        },
        body: JSON.stringify(createIssueRequest(fields)),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      },
      options.policy ? { policy: options.policy } : {},
    );
  } catch (err) {
    if (err instanceof OutboundTargetError) {
      // Retrying changes nothing: the integration's base_url must change.
      return { kind: "rejected", status: null, error: error(`Jira base_url refused: ${err.message}`, null) };
    }
    logNetworkFailure(
      { source: "jira", request_id: options.requestId },
      err,
      basicAuthSecrets(creds.email, creds.apiToken),
    );
    return {
      kind: "retry",
      status: null,
      error: error(`Jira unreachable: ${networkFailure(err)}`, null),
      retryAfterSeconds: null,
    };
  }
  const text = await res.text().catch(() => "");
  if (res.status === 201 || res.status === 200) {
    try {
      const body = JSON.parse(text) as { id?: unknown; key?: unknown };
      if (typeof body.key === "string" && body.key) {
        return { kind: "created", id: String(body.id ?? ""), key: body.key, url: browseUrl(creds.baseUrl, body.key) };
      }
    } catch {
      // fall through: a success without a key is not a ticket we can show
    }
    // Not retried: the issue may exist, and a retry would open a second one.
    return { kind: "rejected", status: res.status, error: "Jira answered without an issue key" };
  }
  const message = error(jiraErrorText(res.status, text), res.status);
  if (res.status === 429 || res.status >= 500) {
    return {
      kind: "retry",
      status: res.status,
      error: message,
      retryAfterSeconds: retryAfterSeconds(res.headers.get("Retry-After"), now()),
    };
  }
  return { kind: "rejected", status: res.status, error: message };
}
