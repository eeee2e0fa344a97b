/**
 * The queue consumer's D1 calls for an uploaded batch (issue 17, point 3): the claim records the
 * upload's engine reason, so a scan makes no separate write for it; the monitor's batch ends the job
 * (issue 38: it leaves D1 for the asset's object), so the consumer makes no write for the end either.
 */

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { processScanJob } from "../../src/consumers/scan-jobs";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { meteredD1, newD1Meter } from "../../src/db/metered";
import type { EndedJobSource } from "../../src/jobs/scan-jobs";
import { uploadPrefix } from "../../src/jobs/upload-storage";
import { UPLOAD_ENGINE_REASON } from "../../src/pipeline/scan-pipeline";
import { csvAsset } from "../support/assets";
import { emailBatch } from "../support/scans";

/** A queued upload job of a new asset, its batch already in our bucket (as the upload route leaves it). */
async function queuedUpload(id: string) {
  const { tenant, asset } = await csvAsset();
  const csv = emailBatch(1);
  const key = `${uploadPrefix(tenant)}${asset.id}/${id}.csv`;
  await env.UPLOADS.put(key, csv);
  const request = { upload: { key, bytes: csv.length, format: "csv" } };
  await env.DB.prepare(
    "insert into scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, created_at) values (?, ?, ?, 'SCAN', 'QUEUED', 'upload', ?, ?)",
  )
    .bind(id, tenant, asset.id, JSON.stringify(request), new Date().toISOString())
    .run();
  return { job_id: id, tenant_id: tenant, asset_id: asset.id as number };
}

const d1Row = (id: string) =>
  env.DB.prepare("select status, engine_reason, rows_scanned, attempts from scan_jobs where id = ?")
    .bind(id)
    .first<{ status: string; engine_reason: string | null; rows_scanned: number; attempts: number }>();

/** The job as readers see it: D1's row while it runs, the asset's object's record once it ended (issue 38). */
async function jobRow(message: { job_id: string; tenant_id: string; asset_id: number }) {
  const row = await d1Row(message.job_id);
  if (row) return row;
  const source: EndedJobSource = assetMonitor(env, message.tenant_id, message.asset_id);
  const { job } = await source.scanJob(message.job_id);
  return job
    ? { status: job.status, engine_reason: job.engineReason, rows_scanned: job.rowsScanned, attempts: job.attempts }
    : null;
}

describe("the consumer's scan of an uploaded batch", () => {
  it("claims the job with its engine reason: two D1 calls (claim, progress), the end in the monitor's batch", async () => {
    const message = await queuedUpload(`job_upload_claim_${crypto.randomUUID()}`);
    const meter = newD1Meter();
    expect(await processScanJob({ ...env, DB: meteredD1(env.DB, meter) }, message, 1)).toBe("done");
    // The ended job left D1 (issue 38): its asset's object keeps it, as it ended.
    expect(await d1Row(message.job_id)).toBeNull();
    expect(await jobRow(message)).toEqual({
      status: "SUCCEEDED",
      engine_reason: UPLOAD_ENGINE_REASON,
      rows_scanned: 200,
      attempts: 1,
    });
    expect(meter.roundTrips).toBe(2);
  });

  it("keeps the reason on a second delivery, and a job that is not an upload keeps the reason it had", async () => {
    const message = await queuedUpload(`job_upload_again_${crypto.randomUUID()}`);
    await env.DB.prepare("update scan_jobs set status = 'RUNNING', attempts = 1 where id = ?")
      .bind(message.job_id)
      .run();
    expect(await processScanJob(env, message, 2)).toBe("done");
    expect(await jobRow(message)).toMatchObject({ status: "SUCCEEDED", engine_reason: UPLOAD_ENGINE_REASON });

    // A job that is not an upload (of an asset deleted since: it fails before any placement): the
    // claim leaves its reason as it was.
    const other = await queuedUpload(`job_not_upload_${crypto.randomUUID()}`);
    await env.DB.prepare("update scan_jobs set request = '{}', engine_reason = 'earlier reason' where id = ?")
      .bind(other.job_id)
      .run();
    await env.DB.prepare("delete from assets where id = ?").bind(other.asset_id).run();
    expect(await processScanJob(env, other, 1)).toBe("done");
    expect(await jobRow(other)).toMatchObject({
      status: "FAILED",
      engine_reason: "earlier reason",
      attempts: 1,
    });
  });
});
