/** What the write-round-trip tests read of an answer: its sequential D1 round trips, and the audit log. */
import { expect } from "vitest";
import { admin, call } from "./api";

/** The sequential D1 round trips of an answer, from its Server-Timing header (src/db/metered.ts). */
export const sequential = (res: { headers: Headers }) =>
  Number(/desc="\d+ round trips, (\d+) sequential"/.exec(res.headers.get("server-timing") ?? "")?.[1]);

/** The statuses the tenant's audit log holds for `method path`, newest first. */
export async function audited(tenant: string, method: string, path: string): Promise<number[]> {
  const log = await call("GET", `/api/backend/${tenant}/audit`, { as: admin });
  expect(log.status).toBe(200);
  return log.body
    .filter((e: { method: string; path: string }) => e.method === method && e.path === path)
    .map((e: { status: number }) => e.status);
}
