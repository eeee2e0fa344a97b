/**
 * The scan-job list's cursor is the keyset (created_at, id), across both of its sources — D1's
 * running jobs and the asset's AssetMonitor's ended ones — so a page that ends inside a
 * millisecond does not skip the rest of that millisecond.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import { scanJobs } from "../../src/db/schema";
import { newScanJobRow } from "../../src/jobs/scan-jobs";
import { admin, call } from "../support/api";
import { csvAsset } from "../support/assets";

type JobView = { job_id: string; status: string; created_at: string };

/** Every page of the asset's job list, `limit` a page, through the Link headers. */
async function pages(tenant: string, assetId: number, limit: number): Promise<JobView[][]> {
  let path: string | undefined = `/api/backend/${tenant}/configuration/assets/${assetId}/scans?limit=${limit}`;
  const out: JobView[][] = [];
  while (path) {
    const res: { status: number; body: JobView[]; headers: Headers } = await call("GET", path, { as: admin });
    expect(res.status).toBe(200);
    out.push(res.body);
    const link = res.headers.get("link");
    path = link ? link.slice(1, link.indexOf(">")) : undefined;
  }
  return out;
}

describe("the scan-job list's pages", () => {
  it("page by (created_at, id): jobs of one millisecond, running in D1 and ended in the object, one a page", async () => {
    const { tenant, asset } = await csvAsset();
    const assetId = asset.id as number;
    const at = "2026-11-28T10:00:00.000Z";
    const job = (status: "QUEUED" | "FAILED") => ({
      ...newScanJobRow({ tenantId: tenant, assetId, kind: "SCAN", trigger: "api" }, at),
      status,
      ...(status === "FAILED" ? { error: "ended", finishedAt: at } : {}),
    });
    const running = [job("QUEUED"), job("QUEUED"), job("QUEUED")];
    const ended = [job("FAILED"), job("FAILED"), job("FAILED")];
    const db = createDb(env.DB);
    for (const row of running) await db.insert(scanJobs).values(row);
    for (const row of ended) await assetMonitor(env, tenant, assetId).keepJob(row);
    // One more a millisecond before and after, so the keyset is checked across times too.
    const earlier = { ...job("FAILED"), createdAt: "2026-11-28T09:59:59.999Z" };
    const later = { ...job("QUEUED"), createdAt: "2026-11-28T10:00:00.001Z" };
    await assetMonitor(env, tenant, assetId).keepJob(earlier);
    await db.insert(scanJobs).values(later);

    const all = [...running, ...ended];
    const expected = [later.id, ...all.map((j) => j.id).sort((a, b) => (a < b ? 1 : -1)), earlier.id];
    const onePerPage = await pages(tenant, assetId, 1);
    expect(onePerPage.every((p) => p.length === 1)).toBe(true);
    expect(onePerPage.flat().map((j) => j.job_id)).toEqual(expected);
    expect((await pages(tenant, assetId, 2)).flat().map((j) => j.job_id)).toEqual(expected);
    // Without limit, the whole list in one answer: the same order.
    const whole = await call("GET", `/api/backend/${tenant}/configuration/assets/${assetId}/scans`, { as: admin });
    expect(whole.body.map((j: JobView) => j.job_id)).toEqual(expected);
  });
});
