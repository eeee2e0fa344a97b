/**
 * A scan of a table at the attribute cap (2,000 columns) in the Workers runtime, through the real
 * path: an uploaded CSV batch in our bucket → its scan job → the consumer's admission → the
 * profiler (sketches sized by the scan's memory budget, profiler/budget.ts) → the asset's monitor
 * and D1 (issue 40, point 2). No timing: it finishes, and what it reports is right.
 */

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { processScanJob } from "../../src/consumers/scan-jobs";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import type { AssetAttribute } from "../../src/db/schema";
import type { EndedJobSource } from "../../src/jobs/scan-jobs";
import { uploadPrefix } from "../../src/jobs/upload-storage";
import { MAX_SCAN_COLUMNS } from "../../src/scan/profiler/budget";
import { csvAsset } from "../support/assets";

const ROWS = 200;
const CATEGORIES = ["red", "green", "blue"];

/** Column k, row i: unique ids, three categories, amounts, and e-mails with every tenth missing, in turn. */
function cell(k: number, i: number): string {
  switch (k % 4) {
    case 0:
      return String(k * 1000 + i);
    case 1:
      return CATEGORIES[(i + k) % 3]!;
    case 2:
      return ((i % 50) + k / 100).toFixed(2);
    default:
      return i % 10 === 0 ? "" : `u${i}@c${k}.test`;
  }
}

function wideCsv(columns: number): string {
  const lines = [Array.from({ length: columns }, (_, k) => `c${k}`).join(",")];
  for (let i = 0; i < ROWS; i++) lines.push(Array.from({ length: columns }, (_, k) => cell(k, i)).join(","));
  return `${lines.join("\n")}\n`;
}

async function queueUpload(tenant: string, assetId: number, csv: string) {
  const id = `job_wide_${crypto.randomUUID()}`;
  const key = `${uploadPrefix(tenant)}${assetId}/${id}.csv`;
  await env.UPLOADS.put(key, csv);
  const request = { upload: { key, bytes: csv.length, format: "csv" } };
  await env.DB.prepare(
    "insert into scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, created_at) values (?, ?, ?, 'SCAN', 'QUEUED', 'upload', ?, ?)",
  )
    .bind(id, tenant, assetId, JSON.stringify(request), new Date().toISOString())
    .run();
  return { job_id: id, tenant_id: tenant, asset_id: assetId };
}

describe("a scan of a 2,000-column table in a Worker", () => {
  it("profiles every column, its first scan estimated at the cap and its next by its width", async () => {
    const { tenant, asset } = await csvAsset();
    const csv = wideCsv(MAX_SCAN_COLUMNS);
    for (const scan of [1, 2]) {
      const message = await queueUpload(tenant, asset.id as number, csv);
      expect(await processScanJob(env, message, 1)).toBe("done");
      // The ended job is in the asset's object (issue 38).
      const source: EndedJobSource = assetMonitor(env, tenant, asset.id as number);
      const { job } = await source.scanJob(message.job_id);
      expect({ scan, status: job?.status, error: job?.error, rows_scanned: job?.rowsScanned }).toEqual({
        scan,
        status: "SUCCEEDED",
        error: null,
        rows_scanned: ROWS,
      });
    }
    const row = await env.DB.prepare("select attributes from assets where id = ?")
      .bind(asset.id)
      .first<{ attributes: string }>();
    const attributes = JSON.parse(row!.attributes) as AssetAttribute[];
    expect(attributes).toHaveLength(MAX_SCAN_COLUMNS);
    const byName = new Map(attributes.map((a) => [a.name, a]));
    // Ids: all distinct (exact at 200 values, within the smallest sketch's exact range).
    expect(byName.get("c0")!.stats).toMatchObject({ count: ROWS, distinct: ROWS, distinct_exact: true, nulls: 0 });
    expect(byName.get("c1997")!.stats).toMatchObject({ distinct: 3, inferred_type: "string" });
    expect(byName.get("c1998")!.stats).toMatchObject({ inferred_type: "number", distinct: 50 });
    // Every tenth e-mail is an empty field: a missing value as the profile counts it.
    const emails = byName.get("c1999")!.stats!;
    expect(emails.nulls + emails.empties).toBe(ROWS / 10);
    // No timing: room for a slow shared machine only.
  }, 600_000);
});
