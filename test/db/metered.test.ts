import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db";
import { meteredD1, newD1Meter, serverTiming } from "../../src/db/metered";
import { tenants } from "../../src/db/schema";
import { admin, call } from "../support/api";
import { createTenant } from "../support/tenants";

describe("metered D1", () => {
  it("counts each statement run and each batch as one round trip, parallel ones as one sequential step", async () => {
    const meter = newD1Meter();
    const d1 = meteredD1(env.DB, meter);
    await d1.prepare("select 1 as one").first();
    await d1.prepare("select ?1 as v").bind(2).all();
    expect(meter).toMatchObject({ roundTrips: 2, sequential: 2, inFlight: 0 });
    // A batch of three statements is one trip; bound statements go through unwrapped.
    const rows = await d1.batch([
      d1.prepare("select 1 as a"),
      d1.prepare("select ?1 as b").bind(5),
      d1.prepare("select 3 as c"),
    ]);
    expect(rows.map((r) => r.results[0])).toEqual([{ a: 1 }, { b: 5 }, { c: 3 }]);
    expect(meter).toMatchObject({ roundTrips: 3, sequential: 3 });
    // Two queries in flight together: two trips, one sequential step (through drizzle, as the app uses it).
    const db = createDb(d1);
    await Promise.all([db.select().from(tenants).limit(1), db.select().from(tenants).limit(2)]);
    expect(meter).toMatchObject({ roundTrips: 5, sequential: 4, inFlight: 0 });
    expect(serverTiming(meter)).toMatch(/^d1;dur=\d+;desc="5 round trips, 4 sequential"$/);
  });

  it("reports what each request cost in Server-Timing", async () => {
    const tenant = await createTenant();
    const res = await call("GET", `/api/backend/${tenant}/configuration/projects`, { as: admin });
    expect(res.status).toBe(200);
    const timing = res.headers.get("server-timing") ?? "";
    const m = /d1;dur=\d+;desc="(\d+) round trips, (\d+) sequential"/.exec(timing);
    expect(m, timing).not.toBeNull();
    expect(Number(m![1])).toBeGreaterThanOrEqual(2);
    expect((await call("GET", "/health")).headers.get("server-timing")).toMatch(/desc="0 round trips, 0 sequential"/);
  });

  it("sets its headers once on the handler's response, and on a static file's", async () => {
    const tenant = await createTenant();
    const res = await call("GET", `/api/backend/${tenant}/configuration/projects`, { as: admin });
    expect(res.status).toBe(200);
    // One entry, and the bookmark of the state the read saw, beside the handler's own headers.
    expect(res.headers.get("server-timing")).toMatch(/^d1;dur=\d+;desc="\d+ round trips, \d+ sequential"$/);
    expect(res.headers.get("x-session-bookmark")).toMatch(/^[0-9a-f]{8}-/);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    // A static file the Worker serves itself (src/routes/static-files.ts): still answered, with the entry.
    const script = await call("GET", "/app/app.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect(script.headers.get("server-timing")).toMatch(/^d1;dur=0;desc="0 round trips, 0 sequential"$/);
  });
});
