import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { KEY_CACHE_MS } from "../../src/auth/keys";
import { call } from "../support/api";
import { createTenant, tenantKey } from "../support/tenants";

afterEach(() => {
  vi.useRealTimers();
});

describe("verified keys cached in the isolate", () => {
  it("a key deleted elsewhere (another isolate) stops working within KEY_CACHE_MS", async () => {
    const tenant = await createTenant();
    const key = await tenantKey(tenant);
    const projects = `/api/backend/${tenant}/configuration/projects`;
    expect((await call("GET", projects, { as: key })).status).toBe(200);
    // Deleted behind this isolate's back, as another isolate's DELETE would: the cached key still works…
    await env.DB.prepare("delete from api_keys where tenant_id = ?").bind(tenant).run();
    expect((await call("GET", projects, { as: key })).status).toBe(200);
    // …until its time in the cache is over.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + KEY_CACHE_MS + 1);
    const res = await call("GET", projects, { as: key });
    expect(res.status).toBe(401);
    expect(res.body.detail).toBe("Invalid API key");
  });
});
