import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db";
import { meteredD1, newD1Meter } from "../../src/db/metered";
import { preparedOnce } from "../../src/db/prepared";
import { requestScopedD1, withRequestD1 } from "../../src/db/request-d1";
import { tenants } from "../../src/db/schema";
import { type IncidentFilters, incidentWhere } from "../../src/incidents/filters";
import { incidentSummary, incidentSummaryFromIncidents } from "../../src/incidents/incidents";
import { Placeholders } from "../../src/lib/sql";
import { admin, call } from "../support/api";
import { seedAsset } from "../support/assets";
import { seedIncident } from "../support/incidents";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";

describe("the request-scoped D1 binding", () => {
  it("runs each statement on the D1 of the request it runs in, requests in flight together included", async () => {
    const db = createDb(requestScopedD1);
    const [a, b] = [newD1Meter(), newD1Meter()];
    const tenantA = await createTenant();
    const tenantB = await createTenant();
    const byId = preparedOnce(db, "test.tenantById", () =>
      db
        .select({ id: tenants.id })
        .from(tenants)
        .where(eq(tenants.id, sql.placeholder("id")))
        .prepare(),
    );
    // Two "requests" interleaved: each one's statements go to its own metered binding.
    const request = (d1: D1Database, id: string) =>
      withRequestD1(d1, async () => {
        const first = await byId.all({ id });
        await Promise.resolve();
        const [[second], third] = await db.batch([
          db.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, id)),
          db.select({ one: sql<number>`1` }).from(tenants).limit(1),
        ]);
        const raw = await requestScopedD1.prepare("select ?1 as v").bind(id).first<{ v: string }>();
        return [first[0]?.id, second?.id, third.length, raw?.v];
      });
    const [ra, rb] = await Promise.all([
      request(meteredD1(env.DB, a), tenantA),
      request(meteredD1(env.DB, b), tenantB),
    ]);
    expect(ra).toEqual([tenantA, tenantA, 1, tenantA]);
    expect(rb).toEqual([tenantB, tenantB, 1, tenantB]);
    // Each request's three calls (a prepared query, a batch, a raw statement) on its own meter.
    expect(a.roundTrips).toBe(3);
    expect(b.roundTrips).toBe(3);
  });

  it("refuses a statement run outside any request", async () => {
    const db = createDb(requestScopedD1);
    // drizzle wraps the binding's error in its "Failed query" error.
    const err = await db
      .select()
      .from(tenants)
      .limit(1)
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(String((err as Error | undefined)?.cause)).toMatch(/outside a request/);
    expect(() => requestScopedD1.prepare("select 1").bind().first()).toThrow(/outside a request/);
  });
});

describe("preparedOnce", () => {
  it("builds a query once per database and key", async () => {
    const db = createDb(env.DB);
    let builds = 0;
    const build = () => {
      builds++;
      return db
        .select({ id: tenants.id })
        .from(tenants)
        .where(eq(tenants.id, sql.placeholder("id")))
        .prepare();
    };
    const q1 = preparedOnce(db, "test.once", build);
    const q2 = preparedOnce(db, "test.once", build);
    expect(q2).toBe(q1);
    expect(builds).toBe(1);
    const tenant = await createTenant();
    expect(await q1.all({ id: tenant })).toEqual([{ id: tenant }]);
    expect(await q1.all({ id: "no-such-tenant" })).toEqual([]);
    // Another database (another binding) builds its own.
    preparedOnce(createDb(meteredD1(env.DB, newD1Meter())), "test.once", build);
    expect(builds).toBe(2);
  });

  it("serves the routes' prepared reads to each caller with their own values", async () => {
    const tenantA = await createTenant();
    const tenantB = await createTenant();
    for (const [tenant, name] of [
      [tenantA, "alpha"],
      [tenantB, "beta"],
    ] as const) {
      const res = await call("POST", `/api/backend/${tenant}/configuration/projects`, { as: admin, body: { name } });
      expect(res.status).toBeLessThan(300);
    }
    const names = async (tenant: string) => {
      const res = await call("GET", `/api/backend/${tenant}/configuration/projects`, { as: admin });
      expect(res.status).toBe(200);
      return res.body as unknown;
    };
    const [a, b] = await Promise.all([names(tenantA), names(tenantB)]);
    expect(JSON.stringify(a)).toContain("alpha");
    expect(JSON.stringify(a)).not.toContain("beta");
    expect(JSON.stringify(b)).toContain("beta");
    expect(JSON.stringify(b)).not.toContain("alpha");
  });
});

describe("the incidents summary, prepared once per shape of its filters", () => {
  const NOW = new Date("2026-03-20T12:00:00.000Z");

  /** A tenant with two projects and `n` incidents in each (some closed, levels alternating). */
  async function tenantWithIncidents(n: number) {
    const tenant = await createTenant();
    const projects = [await createProject(tenant), await createProject(tenant)];
    for (const projectId of projects) {
      const asset = await seedAsset(tenant, projectId);
      for (let i = 0; i < n; i++) {
        const openedAt = new Date(Date.parse("2026-03-01T06:00:00.000Z") + i * 86_400_000).toISOString();
        await seedIncident(asset, {
          openedAt,
          severity: i % 2 ? "HIGH" : "LOW",
          state: i % 3 ? "OPEN" : "CLOSED",
          closedAt: i % 3 ? null : new Date(Date.parse(openedAt) + 7_200_000).toISOString(),
          closeReason: i % 3 ? null : "FIXED",
        });
      }
    }
    return { tenant, projects };
  }

  it("answers each caller with their own tenant, readable projects and filters, requests in flight together", async () => {
    const a = await tenantWithIncidents(3);
    const b = await tenantWithIncidents(5);
    const db = createDb(requestScopedD1);
    const reference = createDb(env.DB);
    // The same shapes (no filter; a project scope; a severity and a range) with other values in each call.
    const calls: Array<[string, number[] | undefined, IncidentFilters]> = [
      [a.tenant, undefined, {}],
      [b.tenant, undefined, {}],
      [a.tenant, [a.projects[0]!], {}],
      [b.tenant, [b.projects[1]!], {}],
      [a.tenant, undefined, { severities: ["HIGH"], from_time: "2026-03-02T00:00:00.000Z" }],
      [b.tenant, undefined, { severities: ["LOW"], from_time: "2026-03-01T00:00:00.000Z" }],
      [b.tenant, [b.projects[0]!], { severities: ["HIGH"], to_time: "2026-03-04T00:00:00.000Z" }],
    ];
    const summaries = await Promise.all(
      calls.map(([tenant, readable, filters]) =>
        withRequestD1(meteredD1(env.DB, newD1Meter()), () => incidentSummary(db, tenant, readable, filters, NOW)),
      ),
    );
    for (const [i, [tenant, readable, filters]] of calls.entries()) {
      const expected = await incidentSummaryFromIncidents(reference, tenant, readable, filters, NOW);
      expect(summaries[i], JSON.stringify(calls[i])).toEqual(expected);
    }
    // The calls differ: a query that kept its first caller's values would answer them alike.
    expect(summaries[0]!.total).toBe(6);
    expect(summaries[1]!.total).toBe(10);
    expect(summaries[2]!.total).toBe(3);
    expect(summaries[3]!.total).toBe(5);
  });

  it("keys a prepared incidents query by the filters present, not by their values", () => {
    const key = (readable: number[] | undefined, f: IncidentFilters) => {
      const bind = new Placeholders("test");
      incidentWhere("acme", readable, f, undefined, bind);
      return bind.key;
    };
    expect(key([1, 2], { severities: ["LOW"] })).toBe(key([3], { severities: ["HIGH", "MEDIUM"] }));
    expect(key([1], {})).not.toBe(key(undefined, {}));
    expect(key(undefined, { severities: ["LOW"] })).not.toBe(key(undefined, { impacts: ["LOW"] }));
    expect(key(undefined, { text_to_search: "a" })).toBe("test(tenant,pattern)");
  });

  it("runs the summary's statements in one D1 call", async () => {
    const a = await tenantWithIncidents(2);
    const meter = newD1Meter();
    await withRequestD1(meteredD1(env.DB, meter), () =>
      incidentSummary(createDb(requestScopedD1), a.tenant, [a.projects[0]!], {}, NOW),
    );
    expect(meter.roundTrips).toBe(1);
  });
});
