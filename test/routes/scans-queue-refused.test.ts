/**
 * A request whose scan queue send fails after its D1 batch committed (an upload, a scan trigger):
 * answered 503 problem+json with Retry-After, not 500; its job is FAILED with the reason, never
 * left QUEUED (no delivery would claim it, and retention removes only ended jobs); the audit log
 * records the 503 under the path called, and the accepted tally does not count it.
 */
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, admin, call } from "../support/api";
import { countRows, csvAsset } from "../support/assets";
import { fetchWithRefusingQueue } from "../support/scans";

const CSV = "id,amount\n1,10\n2,20\n";

async function expectUnavailable(res: Response) {
  expect(res.status).toBe(503);
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  const body = (await res.json()) as { code: string; status: number; request_id: string };
  expect(body).toMatchObject({ code: "unavailable", status: 503 });
  expect(body.request_id).toBe(res.headers.get("x-request-id"));
}

describe("a scan job its queue refused", () => {
  it("answers an upload 503 with Retry-After, and leaves its job FAILED with the reason, not QUEUED", async () => {
    const { tenant, asset } = await csvAsset();
    const path = `/v2/${tenant}/sources/${asset.id}/batch_data`;
    const res = await fetchWithRefusingQueue(path, {
      method: "POST",
      headers: { "X-SVC-Key": ADMIN_KEY, "Content-Type": "text/csv", "Content-Length": String(CSV.length) },
      body: CSV,
    });
    await expectUnavailable(res);

    expect(await countRows("scan_jobs", "tenant_id = ? and status = 'QUEUED'", tenant)).toBe(0);
    const jobs = await call("GET", `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`, { as: admin });
    expect(jobs.status).toBe(200);
    expect(jobs.body.map((j: any) => [j.status, j.trigger])).toEqual([["FAILED", "upload"]]);
    expect(jobs.body[0].error).toMatch(/not queued/);

    const log = (await call("GET", `/api/backend/${tenant}/audit`, { as: admin })).body;
    const uploads = log.filter((e: any) => e.route === "/v2/:tenant/sources/:source_id/batch_data");
    expect(uploads.map((e: any) => [e.path, e.status, e.count, e.request_id])).toEqual([
      [path, 503, 1, res.headers.get("x-request-id")],
    ]);
  });

  it("answers a scan trigger 503 with Retry-After, and leaves its job FAILED; sent again, it is queued", async () => {
    const { tenant, asset } = await csvAsset();
    const path = `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`;
    const res = await fetchWithRefusingQueue(path, {
      method: "POST",
      headers: { "X-SVC-Key": ADMIN_KEY, "Content-Type": "application/json" },
      body: "{}",
    });
    await expectUnavailable(res);
    expect(await countRows("scan_jobs", "tenant_id = ? and status = 'QUEUED'", tenant)).toBe(0);

    const again = await call("POST", path, { as: admin });
    expect(again.status).toBe(202);
    const jobs = (await call("GET", path, { as: admin })).body;
    expect(jobs.map((j: any) => j.job_id)).toContain(again.body.job_id);
    expect(jobs).toHaveLength(2);
    const refused = jobs.find((j: any) => j.job_id !== again.body.job_id);
    expect(refused).toMatchObject({ status: "FAILED", trigger: "api" });
    expect(refused.error).toMatch(/not queued/);

    const log = (await call("GET", `/api/backend/${tenant}/audit`, { as: admin })).body;
    const triggers = log.filter((e: any) => e.route === "/api/backend/:tenant/configuration/assets/:assetId/scans");
    expect(triggers.map((e: any) => [e.path, e.status, e.count])).toEqual([
      [`/api/backend/${tenant}/configuration/assets/:assetId/scans`, 202, 1],
      [path, 503, 1],
    ]);
  });
});
