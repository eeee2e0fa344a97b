import { expect, vi } from "vitest";
import { admin, call } from "../support/api";

/** Waits for a job to finish (the real queue runs it) and returns it; it must have SUCCEEDED. */
export async function finishedJob(tenant: string, assetId: number, jobId: string) {
  const path = `/api/backend/${tenant}/configuration/assets/${assetId}/scans/${jobId}`;
  const job = await vi.waitFor(
    async () => {
      const res = await call("GET", path, { as: admin });
      expect(res.body.status).toMatch(/^(SUCCEEDED|FAILED)$/);
      return res.body;
    },
    { timeout: 30_000, interval: 25 },
  );
  expect(job, JSON.stringify(job)).toMatchObject({ status: "SUCCEEDED" });
  return job;
}

/** The alerts of a job through the scan-alerts operation, as `policy:attribute` strings. */
export async function alertKeys(tenant: string, assetId: number, jobId: string): Promise<string[]> {
  const res = await call("POST", `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${jobId}`, {
    as: admin,
  });
  expect(res.status).toBe(200);
  return res.body.map((a: { type: string; attribute: string | null }) => `${a.type}:${a.attribute ?? ""}`).sort();
}
