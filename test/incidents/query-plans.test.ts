import { env } from "cloudflare:workers";
import { fillPlaceholders } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db";
import { type BoundQuery, preparedEach, type ReadQuery } from "../../src/db/prepared";
import type { IncidentFilters } from "../../src/incidents/filters";
import { distributionQuery, listIncidentsQuery, summaryQueries } from "../../src/incidents/incidents";
import {
  dayCountsBuilds,
  dayCountsQueries,
  openByTagFromRollupQuery,
  tagTotalsBuilds,
  tagTotalsQueries,
} from "../../src/incidents/rollups";

const db = createDb(env.DB);
const range = { from: "2026-03-01T00:00:00.000Z", to: "2026-03-31T00:00:00.000Z" };

/** SQLite's plan of a drizzle query, one line per step. */
async function plan(query: { toSQL(): { sql: string; params: unknown[] } }): Promise<string[]> {
  const { sql, params } = query.toSQL();
  const res = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return res.results.map((r) => r.detail);
}

/** As plan, for a query prepared with placeholders and the values of one call (what the endpoints run). */
function planPrepared({ query, values }: BoundQuery<ReadQuery>): Promise<string[]> {
  const { sql, params } = (query as unknown as { getQuery(): { sql: string; params: unknown[] } }).getQuery();
  return plan({ toSQL: () => ({ sql, params: fillPlaceholders(params, values) }) });
}

/** Every access to incidents is an index search led by tenant_id, never a scan of the table. */
function expectTenantIndex(steps: string[], label: string) {
  const touching = steps.filter((s) => /\bincidents\b/.test(s));
  expect(touching.length, `${label}: ${steps.join(" | ")}`).toBeGreaterThan(0);
  for (const step of touching) {
    expect(step, `${label}: ${steps.join(" | ")}`).toMatch(
      /^SEARCH incidents USING (COVERING )?INDEX incidents_tenant_\w+ \(tenant_id=\?/,
    );
  }
}

const FILTERS: Array<[string, IncidentFilters, number[] | undefined]> = [
  ["no filter (tenant admin)", {}, undefined],
  ["a project member", {}, [1, 2, 3]],
  ["a time range", { from_time: range.from, to_time: range.to }, undefined],
  ["severities and text", { severities: ["HIGH"], text_to_search: "orders" }, [4]],
  [
    "every filter",
    {
      project_ids: [1],
      connection_types: ["S3"],
      alert_policy_ids: ["completeness"],
      severities: ["LOW"],
      impacts: ["HIGH"],
      connection_ids: [2],
      from_time: range.from,
      to_time: range.to,
      text_to_search: "x",
    },
    undefined,
  ],
];

describe("query plans of the incident reads (EXPLAIN QUERY PLAN)", () => {
  it("the list walks incidents_tenant_opened_idx in order: no sort step for the newest-first page", async () => {
    const steps = await plan(listIncidentsQuery(db, "acme", undefined, {}, 100)!);
    expect(steps.join(" | ")).toMatch(/SEARCH incidents USING INDEX incidents_tenant_opened_idx \(tenant_id=\?\)/);
    expect(steps.join(" | ")).not.toMatch(/TEMP B-TREE/);
    const next = await plan(listIncidentsQuery(db, "acme", undefined, {}, 100, { openedAt: range.to, id: 5 })!);
    // The cursor bounds the index range: a page deep in the list starts where the last one ended.
    expect(next.join(" | ")).toMatch(
      /incidents_tenant_opened_idx \(tenant_id=\? AND (opened_at<\?|\(opened_at,id\)<\(\?,\?\))\)/,
    );
    expect(next.join(" | ")).not.toMatch(/TEMP B-TREE/);
  });

  it("what is open per tag, from the per-(day, tag) rollup, searches it by tenant", async () => {
    const steps = await plan(openByTagFromRollupQuery(db, "acme"));
    expect(steps.join(" | ")).toMatch(/^SEARCH incident_tag_rollups USING (COVERING )?INDEX \w+ \(tenant_id=\?\)/);
  });

  for (const [label, filters, readable] of FILTERS) {
    it(`list, summary and distribution use a tenant-leading index: ${label}`, async () => {
      expectTenantIndex(await plan(listIncidentsQuery(db, "acme", readable, filters, 100)!), `list ${label}`);
      for (const [i, q] of summaryQueries(db, "acme", readable, filters, range)!.entries()) {
        expectTenantIndex(await plan(q), `summary[${i}] ${label}`);
      }
      expectTenantIndex(await plan(distributionQuery(db, "acme", readable, filters, range)!), `distribution ${label}`);
    });

    it(`the rollup reads search a rollup's key by tenant and day, the edges a tenant-leading index: ${label}`, async () => {
      const builds = [
        ...tagTotalsBuilds("acme", readable, filters, range),
        ...dayCountsBuilds("acme", readable, filters, range),
      ];
      // As built with the values inlined (bench/incidents), and as the endpoints run them: prepared
      // once, the id and level lists bound as JSON.
      const plans = [
        ...[
          ...tagTotalsQueries(db, "acme", readable, filters, range),
          ...dayCountsQueries(db, "acme", readable, filters, range),
        ].map((q) => () => plan(q)),
        ...preparedEach(db, builds).map((q) => () => planPrepared(q)),
      ];
      expect(plans.length).toBeGreaterThan(1);
      for (const [i, planOf] of plans.entries()) {
        const steps = await planOf();
        const rollup = steps.filter((s) => /\bincident(_day|_tag)?_rollups\b/.test(s));
        if (rollup.length === 0) {
          expectTenantIndex(steps, `rollup read [${i}] ${label}`);
          continue;
        }
        for (const step of rollup) {
          expect(step, `${label}: ${steps.join(" | ")}`).toMatch(
            /^SEARCH incident(_day|_tag)?_rollups USING (COVERING )?INDEX \w+ \(tenant_id=\? AND day>\? AND day<\?\)/,
          );
        }
      }
    });
  }
});
