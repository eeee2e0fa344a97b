import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { jiraModels } from "./jira-models";
import { modelErrors } from "./zod-models";

const { CreatedIssueSchema, DocumentSchema, ErrorCollectionSchema, IssueUpdateDetailsSchema } = jiraModels;

declare module "vitest" {
  export interface ProvidedContext {
    /** A local Jira Cloud stand-in: POST {url}/__sites to get a site (a base URL of its own). */
    jira: { url: string };
  }
}

/** A scripted answer for the next create-issue call of a site. */
interface Scripted {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Answer with the request echoed back, as a misconfigured proxy or a verbose error page does:
   * "text" a plain-text dump of every header and the body, "json" Jira's error shape quoting the
   * Authorization header in errorMessages.
   */
  echo?: "text" | "json";
}

interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /**
   * What does not match POST /rest/api/3/issue: its body model in jira.js (IssueUpdateDetails, with
   * the description an ADF Document), then our reading of Jira's documentation; [] when the call is right.
   */
  problems: string[];
}

interface Site {
  email: string;
  token: string;
  projectKey: string;
  script: Scripted[];
  requests: RecordedRequest[];
  issues: number;
}

// ADF block and inline nodes (developer.atlassian.com/cloud/jira/platform/apis/document/structure/).
const BLOCK_NODES = new Set([
  "paragraph",
  "heading",
  "bulletList",
  "orderedList",
  "listItem",
  "codeBlock",
  "blockquote",
  "rule",
  "panel",
  "table",
  "tableRow",
  "tableCell",
  "tableHeader",
  "mediaSingle",
]);
const INLINE_NODES = new Set(["text", "hardBreak", "mention", "emoji", "inlineCard", "date", "status"]);
const SYSTEM_FIELDS = new Set(["project", "issuetype", "summary", "description", "labels", "priority", "components"]);

/** Checks an ADF node the way Jira's validator does for the nodes it accepts; pushes each problem. */
function checkAdf(node: unknown, path: string, problems: string[]): void {
  if (!node || typeof node !== "object") {
    problems.push(`${path}: not an ADF node`);
    return;
  }
  const n = node as { type?: unknown; text?: unknown; content?: unknown; attrs?: { level?: unknown } };
  if (typeof n.type !== "string" || !(BLOCK_NODES.has(n.type) || INLINE_NODES.has(n.type))) {
    problems.push(`${path}: unknown node type ${String(n.type)}`);
    return;
  }
  if (n.type === "text" && (typeof n.text !== "string" || n.text.length === 0)) {
    problems.push(`${path}: a text node needs non-empty text`);
  }
  if (n.type === "heading") {
    const level = n.attrs?.level;
    if (typeof level !== "number" || level < 1 || level > 6) problems.push(`${path}: heading level must be 1-6`);
  }
  if ((n.type === "bulletList" || n.type === "orderedList") && !Array.isArray(n.content)) {
    problems.push(`${path}: a list needs content`);
  }
  if (n.content !== undefined) {
    if (!Array.isArray(n.content)) problems.push(`${path}.content: must be an array`);
    else
      n.content.forEach((c, i) => {
        checkAdf(c, `${path}.content[${i}]`, problems);
      });
  }
}

/** The documented request of POST /rest/api/3/issue: method, path, headers, body. */
function checkCreateIssue(site: Site, siteId: string, req: IncomingMessage, raw: string): RecordedRequest {
  const problems: string[] = [];
  const path = req.url ?? "";
  if (req.method !== "POST") problems.push(`method ${req.method}`);
  if (path !== `/${siteId}/rest/api/3/issue`) problems.push(`path ${path}`);
  const expectedAuth = `Basic ${Buffer.from(`${site.email}:${site.token}`).toString("base64")}`;
  if (req.headers.authorization !== expectedAuth) problems.push("authorization: not Basic email:api_token");
  if (!String(req.headers["content-type"] ?? "").startsWith("application/json")) problems.push("content-type");
  if (!String(req.headers.accept ?? "").includes("application/json")) problems.push("accept");
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    problems.push("body: not JSON");
  }
  const b = body as { fields?: Record<string, unknown> } | undefined;
  if (b && typeof b === "object") {
    // The request body as jira.js models it (generated from Atlassian's OpenAPI document): no
    // field it does not name, each of its kind; in API v3 the description is an ADF Document.
    problems.push(...modelErrors(IssueUpdateDetailsSchema, b, "body"));
    if (b.fields && typeof b.fields === "object" && b.fields.description !== undefined)
      problems.push(...modelErrors(DocumentSchema, b.fields.description, "fields.description"));
    const f = b.fields;
    if (!f || typeof f !== "object") {
      problems.push("body.fields: missing");
    } else {
      const project = f.project as { id?: unknown } | undefined;
      if (typeof project?.id !== "string" || !/^\d+$/.test(project.id)) problems.push("fields.project.id");
      const type = f.issuetype as { id?: unknown } | undefined;
      if (typeof type?.id !== "string" || !/^\d+$/.test(type.id)) problems.push("fields.issuetype.id");
      if (typeof f.summary !== "string" || f.summary.length === 0 || f.summary.length > 255 || /[\r\n]/.test(f.summary))
        problems.push("fields.summary: a single line of 1-255 characters");
      const d = f.description as { type?: unknown; version?: unknown; content?: unknown } | undefined;
      if (d?.type !== "doc" || d.version !== 1 || !Array.isArray(d.content)) {
        problems.push("fields.description: not an ADF document (type doc, version 1, content)");
      } else {
        d.content.forEach((c, i) => {
          checkAdf(c, `fields.description.content[${i}]`, problems);
        });
      }
      for (const key of Object.keys(f)) {
        if (!SYSTEM_FIELDS.has(key) && !/^customfield_\d+$/.test(key)) problems.push(`fields.${key}: unknown field`);
      }
    }
  }
  return { method: req.method ?? "", path, headers: req.headers, body, problems };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json;charset=UTF-8", ...headers }).end(JSON.stringify(body));
}

/**
 * The fake's own answer, when it is one of jira.js's models (CreatedIssue, ErrorCollection); else a
 * 500, so a fake that drifted from the model fails its test instead of passing silently.
 */
function answer(
  res: ServerResponse,
  status: number,
  body: unknown,
  model: typeof CreatedIssueSchema | typeof ErrorCollectionSchema,
) {
  const drift = modelErrors(model, body, "answer");
  if (drift.length > 0) {
    res
      .writeHead(500, { "content-type": "text/plain" })
      .end(`the fake's answer is not jira.js's model: ${drift.join("; ")}`);
    return;
  }
  json(res, status, body);
}

/**
 * Runs in Node before the tests: an HTTP server answering POST /{site}/rest/api/3/issue as Jira
 * Cloud does. Each test makes a site (POST /__sites {email, token, project_key}), scripts the
 * next answers (POST /__sites/{site}/script [{status, body, headers}]) and reads what was sent
 * (GET /__sites/{site}/requests). A request that breaks the documented shape gets Jira's 400.
 */
export default async function setup(project: TestProject) {
  const sites = new Map<string, Site>();
  let nextSite = 0;
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", () => {
      const url = req.url ?? "";
      const control = url.match(/^\/__sites(?:\/([^/]+)\/(script|requests))?$/);
      if (control) {
        if (!control[1] && req.method === "POST") {
          const input = JSON.parse(raw || "{}") as { email?: string; token?: string; project_key?: string };
          nextSite += 1;
          const id = `site${nextSite}`;
          sites.set(id, {
            email: input.email ?? "bot@example.com",
            token: input.token ?? "token",
            projectKey: input.project_key ?? "DQ",
            script: [],
            requests: [],
            issues: 0,
          });
          return json(res, 201, { site: id });
        }
        const site = control[1] ? sites.get(control[1]) : undefined;
        if (!site) return json(res, 404, { error: "no such site" });
        if (control[2] === "script" && req.method === "POST") {
          site.script.push(...(JSON.parse(raw) as Scripted[]));
          return json(res, 200, { queued: site.script.length });
        }
        if (control[2] === "requests" && req.method === "GET") return json(res, 200, site.requests);
        return json(res, 405, { error: "method" });
      }
      const siteId = url.split("/")[1] ?? "";
      const site = sites.get(siteId);
      if (!site) return json(res, 404, { errorMessages: ["Site not found"], errors: {} });
      const recorded = checkCreateIssue(site, siteId, req, raw);
      site.requests.push(recorded);
      if (recorded.problems.some((p) => p.startsWith("authorization"))) {
        res
          .writeHead(401, { "content-type": "text/plain" })
          .end("Client must be authenticated to access this resource.");
        return;
      }
      if (recorded.problems.length > 0) {
        return answer(res, 400, { errorMessages: recorded.problems, errors: {} }, ErrorCollectionSchema);
      }
      const next = site.script.shift();
      if (next?.echo === "text") {
        const headers = Object.entries(req.headers).map(([name, value]) => `${name}: ${String(value)}`);
        res
          .writeHead(next.status, { "content-type": "text/plain", ...next.headers })
          .end(`Bad request.\nRequest headers:\n${headers.join("\n")}\nRequest body:\n${raw}`);
        return;
      }
      if (next?.echo === "json") {
        return json(
          res,
          next.status,
          {
            errorMessages: [`Invalid request; headers were ${JSON.stringify(req.headers)}`],
            errors: { authorization: String(req.headers.authorization) },
          },
          next.headers,
        );
      }
      if (next) return json(res, next.status, next.body ?? {}, next.headers);
      site.issues += 1;
      const id = String(10_000 + site.issues);
      const port = (server.address() as AddressInfo).port;
      return answer(
        res,
        201,
        {
          id,
          key: `${site.projectKey}-${site.issues}`,
          self: `http://127.0.0.1:${port}/${siteId}/rest/api/3/issue/${id}`,
        },
        CreatedIssueSchema,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  project.provide("jira", { url: `http://127.0.0.1:${port}` });
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
