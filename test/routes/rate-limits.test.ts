/**
 * Rate limits (issue 12, point 6): each credential has a budget per minute, kept by the Workers
 * rate-limiting binding; token minting and scan triggers spend a stricter one. Past it: 429
 * problem+json with Retry-After, and nothing is done. The limits are wrangler.toml's
 * (RATE_LIMIT 1200 and RATE_LIMIT_STRICT 60 per 60 s).
 */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { spendRequest } from "../../src/auth/rate-limit";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import { type EndedJobSource, listScanJobs } from "../../src/jobs/scan-jobs";
import { admin, call } from "../support/api";
import { countRows, csvAsset } from "../support/assets";
import { createProject } from "../support/projects";
import { createTenant, tenantKey } from "../support/tenants";

const STRICT_LIMIT = 60;
const STANDARD_LIMIT = 1200;

function expectRateLimited(res: { status: number; headers: Headers; body: any }) {
  expect(res.status).toBe(429);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.headers.get("retry-after")).toBe("60");
  expect(res.body).toMatchObject({ status: 429, code: "rate_limited" });
}

/**
 * The local binding's windows are fixed and aligned to the wall clock (a budget per minute since
 * the epoch), so a scenario that spends a budget and crosses into the next minute finds it full
 * again. Such a scenario runs once more, from the start of its window; one that fails within one
 * window fails.
 */
async function inOneWindow(scenario: () => Promise<void>): Promise<void> {
  const window = () => Math.floor(Date.now() / 60_000);
  const started = window();
  try {
    await scenario();
  } catch (err) {
    if (window() === started) throw err;
    await scenario();
  }
}

describe("rate limits", () => {
  it("refuses a key's token requests past the strict budget with 429 and Retry-After", () =>
    inOneWindow(async () => {
      const tenant = await createTenant();
      const { key } = await tenantKey(tenant);
      const mint = () => call("POST", "/auth/token", { body: { api_key: key } });
      for (let i = 0; i < STRICT_LIMIT; i++) expect((await mint()).status).toBe(200);
      expectRateLimited(await mint());

      // Another key of the same tenant has its own budget; ordinary reads with the key are not strict.
      const other = await tenantKey(tenant);
      expect((await call("POST", "/auth/token", { body: { api_key: other.key } })).status).toBe(200);
      expect((await call("GET", `/api/backend/${tenant}/configuration/projects`, { as: { key } })).status).toBe(200);
    }));

  it("refuses scan triggers past the strict budget, and queues nothing for them", () =>
    inOneWindow(async () => {
      const { tenant, asset } = await csvAsset();
      const key = await tenantKey(tenant);
      const trigger = () => call("POST", `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`, { as: key });
      for (let i = 0; i < STRICT_LIMIT; i++) expect((await trigger()).status).toBe(202);
      expectRateLimited(await trigger());
      // Queued ones in D1, ended ones in the asset's object (issue 38).
      const source: EndedJobSource = assetMonitor(env, tenant, asset.id);
      expect(await listScanJobs(createDb(env.DB), source, tenant, asset.id, 1000)).toHaveLength(STRICT_LIMIT);
    }));

  it("answers a read past the standard budget with 429 and nothing of what it read", () =>
    inOneWindow(async () => {
      const tenant = await createTenant();
      const created = await call("POST", `/auth/${tenant}/apiKeys`, { as: admin, body: { name: "reader" } });
      const as = { key: created.body.key as string };
      await createProject(tenant);
      await createProject(tenant);
      // A page of one: its answer carries data and a Link to the next page.
      const read = () => call("GET", `/api/backend/${tenant}/configuration/projects?limit=1`, { as });
      const first = await read();
      expect(first.status).toBe(200);
      expect(first.headers.get("link")).toContain("cursor=");
      // The rest of the key's budget, spent through the same binding (1,200 reads over HTTP take longer
      // than a test may).
      for (let i = 1; i < STANDARD_LIMIT - 1; i++) await spendRequest(env, "standard", `key:${created.body.id}`);
      expect((await read()).status).toBe(200);
      for (const res of [await read(), await read()]) {
        expectRateLimited(res);
        expect(res.headers.get("link")).toBeNull();
        expect(res.body.items).toBeUndefined();
      }
      // Writes are refused alike, and change nothing.
      const write = await call("POST", `/api/backend/${tenant}/configuration/projects`, { as, body: { name: "late" } });
      expectRateLimited(write);
      expect(await countRows("projects", "tenant_id = ? AND name = ?", tenant, "late")).toBe(0);
    }));

  it("does not limit the platform administrator's key", async () => {
    for (let i = 0; i < STRICT_LIMIT + 5; i++) {
      expect((await call("POST", "/auth/token", { as: admin, body: { user: "ops@example.test" } })).status).toBe(200);
    }
  });
});
