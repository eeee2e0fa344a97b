/**
 * The daily rollups (issue 17, point 3): the summary and the distribution read whole days from
 * incident_rollups / incident_day_rollups and must answer exactly what the incidents table alone
 * gives, for every filter the endpoints take, after opens, closes, reopens, severity changes,
 * moves and retention deletes, whichever code wrote the incident.
 */

import { env } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import { incidents } from "../../src/db/schema";
import type { IncidentFilters } from "../../src/incidents/filters";
import {
  incidentDistribution,
  incidentDistributionFromIncidents,
  incidentSummary,
  incidentSummaryFromIncidents,
} from "../../src/incidents/incidents";
import { decisionStatements, followMove } from "../../src/incidents/monitor-store";
import { dayCountsQueries, rangeParts, tagTotalsQueries } from "../../src/incidents/rollups";
import { purgeTenant } from "../../src/retention/retention";
import { type AssetRef, seedAsset } from "../support/assets";
import { seedIncident } from "../support/incidents";
import { createProject } from "../support/projects";
import { prng } from "../support/random";
import { createTenant } from "../support/tenants";

const db = createDb(env.DB);
const DAY = 86_400_000;
const NOW = new Date("2026-04-20T12:34:56.789Z");
const POLICIES = [
  ["completeness", "Completeness", "completeness"],
  ["uniqueness", "Uniqueness", "consistency"],
  ["freshness", "Freshness", "timeliness"],
  ["value_range", "Value range", "accuracy"],
] as const;
const LEVELS = ["LOW", "MEDIUM", "HIGH"] as const;

interface World {
  tenant: string;
  projects: [number, number];
  assets: AssetRef[];
}

/** A tenant with two projects and three assets, and `n` incidents in the 60 days before NOW, and some at the ranges' edges. */
async function world(n: number, seed: number): Promise<World> {
  const tenant = await createTenant();
  const projects: [number, number] = [await createProject(tenant), await createProject(tenant)];
  const assets = [
    await seedAsset(tenant, projects[0]),
    await seedAsset(tenant, projects[0]),
    await seedAsset(tenant, projects[1]),
  ];
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  // Incidents right at and around every range's edges, the rest spread over 60 days (some at midnight).
  const edges = ranges()
    .flatMap((r) => [r.from_time, r.to_time])
    .flatMap((t) => (t ? [-3_600_000, -1, 0, 1, 3_600_000].map((d) => Date.parse(t) + d) : []));
  for (let i = 0; i < n + edges.length; i++) {
    const asset = pick(assets);
    const [policy, policyName, tag] = pick(POLICIES);
    const openedMs =
      edges[i - n] ??
      NOW.getTime() - Math.floor(rand() * 60) * DAY - (rand() < 0.2 ? NOW.getTime() % DAY : rand() * DAY);
    const openedAt = new Date(openedMs).toISOString();
    const closed = rand() < 0.6;
    const closedAt = closed ? new Date(openedMs + rand() * 5 * DAY).toISOString() : null;
    await seedIncident(asset, {
      connectionType: pick(["S3", "GCS"]),
      sourceName: pick(["orders", "payments"]),
      policy,
      policyName,
      tag,
      state: closed ? "CLOSED" : "OPEN",
      severity: pick(LEVELS),
      impact: pick(LEVELS),
      openedAt,
      lastAlertAt: openedAt,
      closedAt,
      closeReason: closed ? "FIXED" : null,
      firstResponseAt: rand() < 0.4 ? new Date(openedMs + rand() * 2 * DAY).toISOString() : null,
    });
  }
  return { tenant, projects, assets };
}

/** Ranges with whole days inside, edges at odd times and at midnight, and none at all. */
function ranges(): Array<Pick<IncidentFilters, "from_time" | "to_time">> {
  const iso = (ms: number) => new Date(ms).toISOString();
  const t = NOW.getTime();
  return [
    {},
    { from_time: iso(t - 365 * DAY), to_time: iso(t) },
    { from_time: iso(t - 47.3 * DAY), to_time: iso(t - 3.6 * DAY) },
    { from_time: "2026-02-01T00:00:00.000Z", to_time: "2026-03-15T00:00:00.000Z" },
    { from_time: "2026-03-10T05:00:00.000Z", to_time: "2026-03-10T20:00:00.000Z" },
    { from_time: "2026-03-10T05:00:00.000Z", to_time: "2026-03-11T20:00:00.000Z" },
  ];
}

/** Every filter the endpoints take, alone and together, and callers who see some projects or none. */
function filterSets(w: World): Array<[IncidentFilters, number[] | undefined]> {
  const [a, b] = w.projects;
  const [first] = w.assets;
  return [
    [{}, undefined],
    [{ project_ids: [a] }, undefined],
    [{ connection_ids: [first!.connectionId] }, undefined],
    [{ connection_types: ["GCS"] }, undefined],
    [{ alert_policy_ids: ["completeness", "freshness"] }, undefined],
    [{ severities: ["HIGH"] }, undefined],
    [{ impacts: ["LOW", "MEDIUM"] }, undefined],
    [{ severities: ["HIGH", "LOW"], impacts: ["MEDIUM"] }, undefined],
    [{ text_to_search: "pay" }, undefined],
    [
      { project_ids: [a, b], connection_types: ["S3"], alert_policy_ids: ["uniqueness"], severities: ["MEDIUM"] },
      undefined,
    ],
    [{}, [b]],
    [{ project_ids: [a] }, [b]],
    [{ severities: ["LOW"] }, [a]],
  ];
}

/** The rollups' answers equal the incidents table's, for every filter set and range. */
async function expectExact(w: World) {
  let compared = 0;
  for (const [filters, readable] of filterSets(w)) {
    for (const range of ranges()) {
      const f = { ...filters, ...range };
      const label = JSON.stringify({ f, readable });
      expect(await incidentSummary(db, w.tenant, readable, f, NOW), label).toEqual(
        await incidentSummaryFromIncidents(db, w.tenant, readable, f, NOW),
      );
      expect(await incidentDistribution(db, w.tenant, readable, f, NOW), label).toEqual(
        await incidentDistributionFromIncidents(db, w.tenant, readable, f, NOW),
      );
      compared += 1;
    }
  }
  // And the rollup tables hold exactly the incidents' counts (no zero rows left behind).
  const recount = async (table: string, keys: string, levels = false) => {
    const levelSums = LEVELS.flatMap((l) => [
      `sum(severity = '${l}') as severity_${l.toLowerCase()}`,
      `sum(impact = '${l}') as impact_${l.toLowerCase()}`,
    ]);
    const sums = `count(*) as total, sum(state = 'CLOSED') as closed,
      sum(case when state = 'CLOSED' then round((julianday(closed_at) - julianday(opened_at)) * 86400) end is not null) as resolved,
      coalesce(sum(case when state = 'CLOSED' then round((julianday(closed_at) - julianday(opened_at)) * 86400) end), 0) as resolve_seconds,
      count(first_response_at) as responded,
      coalesce(sum(round((julianday(first_response_at) - julianday(opened_at)) * 86400)), 0) as response_seconds
      ${levels ? `, ${levelSums.join(", ")}` : ""}`;
    const levelColumns = levels
      ? `, ${LEVELS.flatMap((l) => [`severity_${l.toLowerCase()}`, `impact_${l.toLowerCase()}`]).join(", ")}`
      : "";
    const fromIncidents = await env.DB.prepare(
      `select ${keys.replace("day", "substr(opened_at, 1, 10) as day")}, ${sums} from incidents where tenant_id = ?
       group by ${keys.replace("day", "substr(opened_at, 1, 10)")} order by ${keys.replace("day", "substr(opened_at, 1, 10)")}`,
    )
      .bind(w.tenant)
      .all();
    const rollup = await env.DB.prepare(
      `select ${keys}, total, closed, resolved, resolve_seconds, responded, response_seconds${levelColumns} from ${table}
       where tenant_id = ? order by ${keys}`,
    )
      .bind(w.tenant)
      .all();
    expect(rollup.results, table).toEqual(fromIncidents.results);
  };
  await recount("incident_rollups", "day, project_id, connection_id, connection_type, policy, tag, severity, impact");
  await recount("incident_day_rollups", "day, tag, severity, impact");
  await recount("incident_tag_rollups", "day, tag", true);
  return compared;
}

async function incidentsOf(tenant: string) {
  return db.query.incidents.findMany({ where: eq(incidents.tenantId, tenant), orderBy: incidents.id });
}

describe("incident rollups answer what the incidents table answers", () => {
  it("cuts a range into raw edge days and whole rollup days", () => {
    expect(rangeParts({ from: "2026-03-10T05:00:00.000Z", to: "2026-03-13T01:00:00.000Z" })).toEqual({
      days: { firstDay: "2026-03-11", endDay: "2026-03-13" },
      raw: [
        { from: "2026-03-10T05:00:00.000Z", to: "2026-03-11" },
        { from: "2026-03-13", to: "2026-03-13T01:00:00.000Z" },
      ],
    });
    // No whole day inside: the incidents table alone.
    const short = { from: "2026-03-10T05:00:00.000Z", to: "2026-03-11T23:00:00.000Z" };
    expect(rangeParts(short)).toEqual({ raw: [short] });
    // A text search is not in the rollups.
    const long = { from: "2026-01-01T00:00:00.000Z", to: "2026-03-01T00:00:00.000Z" };
    expect(rangeParts(long, false)).toEqual({ raw: [long] });
  });

  it("reads the narrowest rollup the filters allow", () => {
    const range = { from: "2026-01-01T05:00:00.000Z", to: "2026-03-01T05:00:00.000Z" };
    const tables = (f: IncidentFilters, readable?: number[]) => {
      const sqlOf = (qs: Array<{ toSQL(): { sql: string } }>) => qs.map((q) => q.toSQL().sql)[0]!;
      const from = (s: string) => /from "(\w+)"/.exec(s)?.[1];
      return [
        from(sqlOf(tagTotalsQueries(db, "t", readable, f, range))),
        from(sqlOf(dayCountsQueries(db, "t", readable, f, range))),
      ];
    };
    expect(tables({})).toEqual(["incident_tag_rollups", "incident_tag_rollups"]);
    expect(tables({ severities: ["HIGH"] })).toEqual(["incident_day_rollups", "incident_day_rollups"]);
    expect(tables({ impacts: ["LOW"] })).toEqual(["incident_day_rollups", "incident_day_rollups"]);
    expect(tables({ project_ids: [1] })).toEqual(["incident_rollups", "incident_rollups"]);
    expect(tables({}, [1])).toEqual(["incident_rollups", "incident_rollups"]);
    expect(tables({ text_to_search: "x" })).toEqual(["incidents", "incidents"]);
  });

  it("after the incidents are written", async () => {
    const w = await world(80, 1);
    expect(await expectExact(w)).toBeGreaterThan(70);
  });

  it("after closes and reopens through the AssetMonitor, and first responses", async () => {
    const w = await world(50, 2);
    const rows = await incidentsOf(w.tenant);
    const open = rows.filter((r) => r.state === "OPEN").slice(0, 6);
    const closed = rows.filter((r) => r.state === "CLOSED").slice(0, 4);
    for (const r of open) {
      const result = await assetMonitor(env, w.tenant, r.assetId).setIncidentState({
        tenantId: w.tenant,
        incidentId: r.id,
        state: "CLOSED",
        reason: "FIXED",
        actor: "someone@example.com",
      });
      expect(result).toMatchObject({ ok: true });
    }
    for (const r of closed) {
      const result = await assetMonitor(env, w.tenant, r.assetId).setIncidentState({
        tenantId: w.tenant,
        incidentId: r.id,
        state: "OPEN",
        actor: "someone@example.com",
      });
      // A reopen is refused when the key already has an open incident; either way the rollups agree.
      expect(typeof result.ok).toBe("boolean");
    }
    expect(await expectExact(w)).toBeGreaterThan(70);
  });

  it("after the monitor's escalations, adoptions and auto-closes, and a move to another project", async () => {
    const w = await world(50, 3);
    const rows = (await incidentsOf(w.tenant)).filter((r) => r.state === "OPEN");
    const byAsset = (r: (typeof rows)[number]) => w.assets.find((a) => a.assetId === r.assetId)!;
    for (const [i, r] of rows.slice(0, 9).entries()) {
      const a = byAsset(r);
      const scan = {
        asset: {
          tenantId: w.tenant,
          id: a.assetId,
          name: "orders",
          type: "S3",
          projectId: a.projectId,
          connectionId: a.connectionId,
        },
        jobId: `job-${i}`,
        scanTime: new Date(NOW.getTime() + i * 1000).toISOString(),
        impact: "LOW" as const,
        alerts: new Map(),
      };
      const alert = {
        policy: r.policy as "completeness",
        policy_name: r.policyName,
        attribute: r.attribute,
        priority: "HIGH" as const,
        dimension: r.tag as "completeness",
      };
      const decision =
        i % 3 === 0
          ? { kind: "escalate" as const, incident: r, alert, severity: "HIGH" as const }
          : i % 3 === 1
            ? { kind: "adopt" as const, incident: r, alert, levelScans: 3 }
            : { kind: "auto_close" as const, incident: r, cleanScans: 3 };
      const [first, ...rest] = decisionStatements(db, scan, [decision]);
      await db.batch([first!, ...rest]);
    }
    await db.batch(
      followMove(db, w.tenant, [w.assets[0]!.assetId], { projectId: w.projects[1], connectionId: 999_999 }) as [
        never,
        ...never[],
      ],
    );
    expect((await incidentsOf(w.tenant)).some((r) => r.severity === "HIGH" && r.state === "OPEN")).toBe(true);
    expect(await expectExact(w)).toBeGreaterThan(70);
  });

  it("after retention deletes closed incidents, and when every incident is gone", async () => {
    const w = await world(60, 4);
    const before = (await incidentsOf(w.tenant)).length;
    await purgeTenant(env, db, { id: w.tenant, dataTtl: 40 }, NOW);
    const after = (await incidentsOf(w.tenant)).length;
    expect(after).toBeLessThan(before);
    expect(await expectExact(w)).toBeGreaterThan(70);
    await env.DB.prepare("delete from incidents where tenant_id = ?").bind(w.tenant).run();
    expect(await expectExact(w)).toBeGreaterThan(70);
    const left = await env.DB.prepare(
      `select (select count(*) from incident_rollups where tenant_id = ?1) + (select count(*) from incident_day_rollups where tenant_id = ?1)
         + (select count(*) from incident_tag_rollups where tenant_id = ?1) as n`,
    )
      .bind(w.tenant)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("the migrations' backfills compute the rows the triggers keep", async () => {
    const w = await world(40, 6);
    const migrations = env.TEST_MIGRATIONS.filter((m) => m.name.startsWith("0009_") || m.name.startsWith("0011_"));
    const backfills = migrations
      .flatMap((m) => m.queries)
      .flatMap((q) => {
        const m = /INSERT INTO (\w+) \(([^)]+)\)\s*(SELECT[\s\S]*?);?\s*$/.exec(q.replace(/^--.*$/gm, "").trim());
        return m ? [{ table: m[1]!, columns: m[2]!, select: m[3]! }] : [];
      });
    expect(backfills.map((b) => b.table)).toEqual(["incident_rollups", "incident_day_rollups", "incident_tag_rollups"]);
    for (const { table, columns, select } of backfills) {
      const backfilled = await env.DB.prepare(
        `with b(${columns}) as (${select}) select ${columns} from b where tenant_id = ? order by ${columns}`,
      )
        .bind(w.tenant)
        .all();
      const kept = await env.DB.prepare(`select ${columns} from ${table} where tenant_id = ? order by ${columns}`)
        .bind(w.tenant)
        .all();
      expect(backfilled.results.length).toBeGreaterThan(0);
      expect(backfilled.results, table).toEqual(kept.results);
    }
  });

  it("a tag with nothing open is left out of what is open, as counting the open incidents leaves it out", async () => {
    const w = await world(30, 7);
    await db
      .update(incidents)
      .set({ state: "CLOSED", closedAt: NOW.toISOString(), closeReason: "FIXED" })
      .where(and(eq(incidents.tenantId, w.tenant), eq(incidents.tag, "timeliness"), eq(incidents.state, "OPEN")));
    const summary = await incidentSummary(db, w.tenant, undefined, {}, NOW);
    expect(summary.open).toBeGreaterThan(0);
    expect(Object.keys(summary.open_by_tag)).not.toContain("timeliness");
    expect(await expectExact(w)).toBeGreaterThan(70);
  });

  it("a write of an incident's other columns leaves its rollup alone", async () => {
    const w = await world(5, 5);
    const [r] = await incidentsOf(w.tenant);
    await db
      .update(incidents)
      .set({ cleanScans: 2, levelScans: 0, updatedAt: NOW.toISOString() })
      .where(eq(incidents.id, r!.id));
    expect(await expectExact(w)).toBeGreaterThan(70);
  });
});
