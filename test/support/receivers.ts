import { inject } from "vitest";

const base = () => inject("receivers").url;

export interface SeenRequest {
  headers: Record<string, string | undefined>;
  body: string;
  verified: boolean;
  problems: string[];
  at: number;
}

/** A fresh local receiver (receivers.global.ts): its URL, and calls to steer and read it. */
export async function receiver(kind: "webhook" | "slack" = "webhook", secret?: string) {
  const res = await fetch(`${base()}/__receivers`, { method: "POST", body: JSON.stringify({ kind, secret }) });
  const { id, url } = (await res.json()) as { id: string; url: string };
  return {
    url,
    /** The signing secret the receiver verifies with (a generated one is known only after create). */
    trust: (s: string) =>
      fetch(`${base()}/__receivers/${id}/secret`, { method: "POST", body: JSON.stringify({ secret: s }) }),
    /** Answers for the next requests, in order; then 200 "ok". */
    script: (answers: Array<{ status: number; body?: string; headers?: Record<string, string>; delayMs?: number }>) =>
      fetch(`${base()}/__receivers/${id}/script`, { method: "POST", body: JSON.stringify(answers) }),
    requests: async () => (await (await fetch(`${base()}/__receivers/${id}/requests`)).json()) as SeenRequest[],
  };
}
