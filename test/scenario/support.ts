import { expect, vi } from "vitest";
import { admin, call } from "../support/api";
import type { Problem } from "./data";

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

/** Each injected problem, and exactly the alerts it must raise. */
export const EXPECTED: Array<[Problem, string[]]> = [
  ["null_spike", ["completeness:email"]],
  ["row_drop", ["row_count_anomaly:"]],
  ["dropped_column", ["schema_change:country"]],
  ["duplicate_ids", ["uniqueness:id"]],
  ["stale", ["freshness:updated_at"]],
  ["pattern_change", ["pattern_drift:email"]],
];
