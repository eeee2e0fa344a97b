import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Local notification receivers: POST {url}/__receivers to get one (a URL of its own). */
    receivers: { url: string };
  }
}

/**
 * What a receiver saw. A webhook receiver verifies each request with the Standard Webhooks
 * reference library (`standardwebhooks`, the specification's TypeScript implementation, with its
 * five-minute timestamp tolerance) against the secret it was given; a Slack receiver checks the
 * body as Slack's incoming webhooks do (api.slack.com/messaging/webhooks, reference/block-kit).
 */
interface Seen {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** webhook: the signature verified; slack: the message is one Slack accepts. */
  verified: boolean;
  problems: string[];
  at: number;
}

interface Scripted {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Answer only after this many ms (to exceed the sender's timeout). */
  delayMs?: number;
}

interface Receiver {
  kind: "webhook" | "slack";
  secret?: string;
  script: Scripted[];
  seen: Seen[];
}

const SLACK_BLOCKS = new Set(["header", "section", "context", "divider", "actions", "image", "rich_text"]);

/** Slack's incoming-webhook checks that matter here: text or blocks, known block types, length limits. */
function slackProblems(raw: string): string[] {
  let body: { text?: unknown; blocks?: unknown };
  try {
    body = JSON.parse(raw);
  } catch {
    return ["invalid_payload: not JSON"];
  }
  const problems: string[] = [];
  if (typeof body.text !== "string" && !Array.isArray(body.blocks)) problems.push("no_text");
  if (body.blocks !== undefined) {
    if (!Array.isArray(body.blocks) || body.blocks.length > 50) problems.push("invalid_blocks: at most 50 blocks");
    for (const [i, b] of (Array.isArray(body.blocks) ? body.blocks : []).entries()) {
      const block = b as { type?: string; text?: { type?: string; text?: string }; fields?: { text?: string }[] };
      if (!block.type || !SLACK_BLOCKS.has(block.type)) problems.push(`invalid_blocks: blocks[${i}].type`);
      if (block.type === "header" && (block.text?.type !== "plain_text" || (block.text?.text ?? "").length > 150)) {
        problems.push(`invalid_blocks: blocks[${i}] header must be plain_text of at most 150 characters`);
      }
      if (block.type === "section") {
        if (!block.text && !block.fields) problems.push(`invalid_blocks: blocks[${i}] section needs text or fields`);
        if ((block.text?.text ?? "").length > 3000) problems.push(`invalid_blocks: blocks[${i}] text over 3000`);
        if ((block.fields?.length ?? 0) > 10) problems.push(`invalid_blocks: blocks[${i}] more than 10 fields`);
        for (const f of block.fields ?? [])
          if ((f.text ?? "").length > 2000) problems.push(`invalid_blocks: field over 2000`);
      }
    }
  }
  return problems;
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

export default async function setup(project: TestProject) {
  const receivers = new Map<string, Receiver>();
  let next = 0;
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://receiver");
    const parts = url.pathname.split("/").filter(Boolean);
    const raw = await read(req);
    if (parts[0] === "__receivers" && parts.length === 1 && req.method === "POST") {
      const { kind, secret } = JSON.parse(raw || "{}") as { kind?: "webhook" | "slack"; secret?: string };
      const id = `r${++next}`;
      receivers.set(id, { kind: kind ?? "webhook", ...(secret ? { secret } : {}), script: [], seen: [] });
      const { port } = server.address() as AddressInfo;
      const path = kind === "slack" ? `services/T0001/B0001/${id}XXXXXXXXXXXXXXXX` : `hooks/${id}`;
      return json(res, 201, { id, url: `http://127.0.0.1:${port}/${path}` });
    }
    if (parts[0] === "__receivers" && parts[1]) {
      const r = receivers.get(parts[1]);
      if (!r) return json(res, 404, { error: "no such receiver" });
      if (parts[2] === "secret" && req.method === "POST") {
        r.secret = (JSON.parse(raw) as { secret: string }).secret;
        return json(res, 200, {});
      }
      if (parts[2] === "script" && req.method === "POST") {
        r.script.push(...(JSON.parse(raw) as Scripted[]));
        return json(res, 200, {});
      }
      if (parts[2] === "requests") return json(res, 200, r.seen);
    }
    const id = parts[0] === "hooks" ? parts[1] : parts[0] === "services" ? parts[3]?.replace(/X+$/, "") : undefined;
    const r = id ? receivers.get(id) : undefined;
    if (!r || req.method !== "POST") return json(res, 404, { error: "not found" });
    let problems: string[] = [];
    let verified = false;
    if (r.kind === "webhook") {
      try {
        if (!r.secret) throw new Error("the receiver has no secret yet");
        new Webhook(r.secret).verify(raw, req.headers as Record<string, string>);
        verified = true;
      } catch (err) {
        problems = [`signature: ${(err as Error).message}`];
      }
      if (req.headers["content-type"] !== "application/json") problems.push("content-type is not application/json");
    } else {
      problems = slackProblems(raw);
      verified = problems.length === 0;
    }
    r.seen.push({ headers: req.headers, body: raw, verified, problems, at: Date.now() });
    const scripted = r.script.shift();
    if (scripted?.delayMs) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
    if (scripted) {
      res.writeHead(scripted.status, { "content-type": "text/plain", ...scripted.headers }).end(scripted.body ?? "");
      return;
    }
    if (r.kind === "slack" && problems.length > 0) {
      res.writeHead(400, { "content-type": "text/plain" }).end(problems[0]!.split(":")[0]);
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  project.provide("receivers", { url: `http://127.0.0.1:${port}` });
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}
