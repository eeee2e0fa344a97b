/**
 * Rate limits (issue 12, point 6): each credential has a budget per minute, kept by the Workers
 * rate-limiting binding; token minting and scan triggers spend a stricter one. Past it: 429
 * problem+json with Retry-After, and nothing is done. The limits are wrangler.toml's
 * (RATE_LIMIT 1200 and RATE_LIMIT_STRICT 60 per 60 s).
 */

import { describe, expect, it } from "vitest";
import { admin, call } from "../support/api";
import { countRows, csvAsset } from "../support/assets";
import { createTenant, tenantKey } from "../support/tenants";

const STRICT_LIMIT = 60;

function expectRateLimited(res: { status: number; headers: Headers; body: any }) {
  expect(res.status).toBe(429);
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  expect(res.headers.get("retry-after")).toBe("60");
  expect(res.body).toMatchObject({ status: 429, code: "rate_limited" });
}

describe("rate limits", () => {
  it("refuses a key's token requests past the strict budget with 429 and Retry-After", async () => {
    const tenant = await createTenant();
    const { key } = await tenantKey(tenant);
    const mint = () => call("POST", "/auth/token", { body: { api_key: key } });
    for (let i = 0; i < STRICT_LIMIT; i++) expect((await mint()).status).toBe(200);
    expectRateLimited(await mint());

    // Another key of the same tenant has its own budget; ordinary reads with the key are not strict.
    const other = await tenantKey(tenant);
    expect((await call("POST", "/auth/token", { body: { api_key: other.key } })).status).toBe(200);
    expect((await call("GET", `/api/backend/${tenant}/configuration/projects`, { as: { key } })).status).toBe(200);
  });

  it("refuses scan triggers past the strict budget, and queues nothing for them", async () => {
    const { tenant, asset } = await csvAsset();
    const key = await tenantKey(tenant);
    const trigger = () => call("POST", `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`, { as: key });
    for (let i = 0; i < STRICT_LIMIT; i++) expect((await trigger()).status).toBe(202);
    expectRateLimited(await trigger());
    expect(await countRows("scan_jobs", "asset_id = ?", asset.id)).toBe(STRICT_LIMIT);
  });

  it("does not limit the platform administrator's key", async () => {
    for (let i = 0; i < STRICT_LIMIT + 5; i++) {
      expect((await call("POST", "/auth/token", { as: admin, body: { user: "ops@example.test" } })).status).toBe(200);
    }
  });
});
