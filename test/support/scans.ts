import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import worker from "../../src/index";
import { admin, call } from "./api";

/** Uploads a CSV batch to an asset (POST /v2/{tenant}/sources/{asset}/batch_data); returns the scan job's id. */
export async function uploadCsv(tenant: string, assetId: number, csv: string): Promise<string> {
  const res = await call("POST", `/v2/${tenant}/sources/${assetId}/batch_data`, {
    as: admin,
    raw: csv,
    headers: { "Content-Type": "text/csv" },
  });
  expect(res.status).toBe(202);
  return res.body.job_id;
}

/** Waits until the scan job's status matches (by default: it ended), and returns it. */
export async function scanJob(tenant: string, assetId: number, jobId: string, status: RegExp = /^(SUCCEEDED|FAILED)$/) {
  const path = `/api/backend/${tenant}/configuration/assets/${assetId}/scans/${jobId}`;
  return vi.waitFor(
    async () => {
      const res = await call("GET", path, { as: admin });
      expect(res.body.status).toMatch(status);
      return res.body as { status: string; error: string | null; attempts: number };
    },
    { timeout: 30_000, interval: 25 },
  );
}

/** A CSV batch of 200 rows (id, email, amount); `nulls` rows of them have no e-mail. */
export function emailBatch(seq: number, nulls = 0): string {
  const lines = ["id,email,amount"];
  for (let i = 0; i < 200; i++) {
    const id = seq * 1000 + i;
    lines.push(`${id},${i < nulls ? "" : `u${id}@example.com`},${(i % 50) + 10}`);
  }
  return `${lines.join("\n")}\n`;
}

/** A scan-jobs queue binding that refuses every send (the platform's binding, not our code, stands in). */
const refusingQueue = {
  send: async () => {
    throw new Error("queue unavailable");
  },
  sendBatch: async () => {
    throw new Error("queue unavailable");
  },
};

/** Sends a request to the Worker with a scan-jobs queue that refuses every send. */
export async function fetchWithRefusingQueue(path: string, init: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`https://dq.test${path}`, init),
    { ...env, SCAN_JOBS: refusingQueue as unknown as typeof env.SCAN_JOBS },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}
