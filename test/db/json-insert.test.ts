import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { getTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db";
import { insertJsonRows } from "../../src/db/json-insert";
import { alerts, incidentHistory, incidents } from "../../src/db/schema";
import { createTenant } from "../support/tenants";

const db = createDb(env.DB);

/** Strings JSON carries as they are, and two it carries escaped (NUL, a lone surrogate): those take the fallback. */
const TEXTS = ["plain", "", "quote ' \" and \\ backslash", "ünïcødé 日本語 🚀", "tab\tnew\nline", "\\u0000 as text"];
const UNSAFE = ["nul \u0000 inside", "lone \ud800 surrogate"];
const NUMBERS = [0, -0, 1, -5, 0.1, 1 / 3, 2 ** 53, 1e-300, 5e-324, 1.7976931348623157e308, 1e21, 2.5];

/** Every stored value of the table's rows for a tenant, with its SQLite type, in id order (ids and tenant left out). */
async function stored(table: SQLiteTable, tenant: string) {
  const { name, columns } = getTableConfig(table);
  const cols = columns.map((c) => c.name).filter((c) => c !== "id" && c !== "tenant_id" && c !== "incident_id");
  // Job ids start with the tenant's id (alerts' are unique across tenants): compared without it.
  const value = (c: string) => (c === "job_id" ? "substr(job_id, length(tenant_id) + 1)" : `"${c}"`);
  const select = cols.map((c) => `typeof("${c}") || ':' || hex(${value(c)})`).join(", ");
  const rows = await env.DB.prepare(`SELECT ${select} FROM "${name}" WHERE tenant_id = ? ORDER BY id`)
    .bind(tenant)
    .raw();
  return rows;
}

/** The ids of the tenant's rows in insertion order: consecutive when one statement (or a run of them) wrote them. */
async function idsOf(table: SQLiteTable, tenant: string): Promise<number[]> {
  const { name } = getTableConfig(table);
  const rows = await env.DB.prepare(`SELECT id FROM "${name}" WHERE tenant_id = ? ORDER BY id`).bind(tenant).raw();
  return rows.map((r) => Number(r[0]));
}

/** Where both tables' rows sit: the tenant, an asset, its project and connection. */
const placed = (tenant: string) => ({ tenantId: tenant, assetId: 7, projectId: 3, connectionId: 2 });
const LEVEL = ["LOW", "MEDIUM", "HIGH"] as const;

function alertRows(tenant: string, texts: string[]) {
  return texts.flatMap((text, i) =>
    NUMBERS.map((n, j) => ({
      ...placed(tenant),
      jobId: `${tenant}-job-${i}`,
      type: `policy-${j}`,
      policyName: text,
      attribute: j % 3 === 0 ? undefined : `${text}:${j}`,
      segment: j % 4 === 0 ? "" : JSON.stringify([text, n]),
      priority: LEVEL[j % 3]!,
      description: `${text} ${n}`,
      sourceName: text,
      sourceType: "S3",
      isNotificationEnabled: j % 2 === 0,
      metric: `m:${text}`,
      metricValue: String(n),
      metricTime: "2026-11-26T07:00:00.000Z",
      createTime: "2026-11-26T06:59:00.000Z",
      saveTime: "2026-11-26T07:00:01.000Z",
      details: { observed: n, text, nested: { values: [n, text, null, true] }, dimension: "completeness" },
    })),
  );
}

function incidentRows(tenant: string, texts: string[]) {
  return texts.flatMap((text, i) =>
    NUMBERS.map((n, j) => ({
      ...placed(tenant),
      connectionType: "S3",
      sourceName: text,
      policy: `policy-${j}`,
      policyName: text,
      attribute: `${text}:${i}`,
      segment: j % 4 === 0 ? "" : JSON.stringify([text, n]),
      state: "OPEN" as const,
      severity: LEVEL[j % 3]!,
      impact: LEVEL[i % 3]!,
      tag: (["completeness", "accuracy"] as const)[j % 2]!,
      alertCount: 1,
      cleanScans: j % 2 === 0 ? undefined : 0,
      levelScans: 1,
      deviation: j % 5 === 0 ? null : n,
      openedAt: `2026-11-2${i % 6}T07:00:00.000Z`,
      lastAlertAt: "2026-11-26T07:00:00.000Z",
      updatedAt: "2026-11-26T07:00:00.000Z",
    })),
  );
}

/** Both tenants' rows of a table, and the rollups the triggers keep, compared value by value and type by type. */
async function expectSame(a: string, b: string) {
  for (const table of [alerts, incidents, incidentHistory]) {
    expect(await stored(table, b), getTableConfig(table).name).toEqual(await stored(table, a));
  }
  for (const name of ["incident_rollups", "incident_day_rollups", "incident_tag_rollups"]) {
    const rollup = (t: string) =>
      env.DB.prepare(`SELECT * FROM ${name} WHERE tenant_id = ? ORDER BY 2, 3, 4, 5, 6, 7, 8, 9`).bind(t).raw();
    const rows = (await rollup(b)).map((r) => r.slice(1));
    expect(rows.length, name).toBeGreaterThan(0);
    expect(rows, name).toEqual((await rollup(a)).map((r) => r.slice(1)));
  }
}

describe("insertJsonRows", () => {
  for (const [label, texts, statements] of [
    ["strings JSON carries as they are", TEXTS, 1],
    ["strings with a NUL or a lone surrogate (one INSERT per row)", UNSAFE, UNSAFE.length * NUMBERS.length],
  ] as const) {
    it(`writes the rows drizzle's INSERTs write, in the same order, with ${label}`, async () => {
      const [a, b] = [await createTenant(), await createTenant()];
      // a: drizzle's multi-row INSERTs (4 rows each, D1's 100 parameters), as the monitor wrote them before.
      const chunked = <T>(rows: T[]) =>
        Array.from({ length: Math.ceil(rows.length / 4) }, (_, i) => rows.slice(i * 4, i * 4 + 4));
      for (const c of chunked(alertRows(a, [...texts]))) await db.insert(alerts).values(c).onConflictDoNothing();
      for (const c of chunked(incidentRows(a, [...texts]))) await db.insert(incidents).values(c);
      const history = (tenant: string) =>
        incidentRows(tenant, [...texts]).map((r, i) => ({
          tenantId: tenant,
          time: r.openedAt,
          fromState: i % 2 === 0 ? null : ("OPEN" as const),
          toState: "OPEN" as const,
          actor: "system",
          jobId: `${tenant}-job-${i}`,
          details: i % 3 === 0 ? undefined : { observed: i, text: r.sourceName },
          policy: r.policy,
          attribute: r.attribute,
          segment: r.segment,
        }));
      const openId = (tenant: string, f: (k: "policy" | "attribute" | "segment") => ReturnType<typeof sql>) =>
        sql`(SELECT id FROM incidents WHERE tenant_id = ${tenant} AND policy = ${f("policy")}
          AND attribute = ${f("attribute")} AND segment = ${f("segment")} AND state = 'OPEN')`;
      const refs = (f: (k: "policy" | "attribute" | "segment") => ReturnType<typeof sql>) =>
        sql`json_array((SELECT id FROM alerts WHERE type = ${f("policy")} AND attribute = ${f("attribute")} LIMIT 1))`;
      for (const c of chunked(history(a))) {
        await db.insert(incidentHistory).values(
          c.map(({ policy, attribute, segment, ...h }) => {
            const f = (k: "policy" | "attribute" | "segment") => sql`${{ policy, attribute, segment }[k]}`;
            return { ...h, incidentId: openId(a, f), alertRefs: refs(f) };
          }),
        );
      }

      // b: one statement each (or one per row, the fallback).
      const written = [
        insertJsonRows(db, alerts, alertRows(b, [...texts]), { onConflictDoNothing: true }),
        insertJsonRows(db, incidents, incidentRows(b, [...texts])),
        insertJsonRows(db, incidentHistory, history(b), {
          derived: { incidentId: (f) => openId(b, f), alertRefs: refs },
        }),
      ];
      expect(written.map((s) => s.length)).toEqual([statements, statements, statements]);
      const [first, ...rest] = written.flat();
      await db.batch([first!, ...rest]);

      await expectSame(a, b);
      for (const table of [alerts, incidents, incidentHistory]) {
        const ids = await idsOf(table, b);
        expect(ids.length).toBe(texts.length * NUMBERS.length);
        expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
      }
      // Written again, the alerts conflict and are skipped, as with ON CONFLICT DO NOTHING.
      const again = insertJsonRows(db, alerts, alertRows(b, [...texts]), { onConflictDoNothing: true });
      await db.batch([again[0]!, ...again.slice(1)]);
      expect((await idsOf(alerts, b)).length).toBe(texts.length * NUMBERS.length);
    });
  }

  it("writes nothing for no rows, and refuses a value it cannot carry", () => {
    expect(insertJsonRows(db, alerts, [])).toEqual([]);
    expect(() =>
      insertJsonRows(db, incidentHistory, [{ tenantId: "t", incidentId: sql`1`, time: "x", toState: "OPEN" }]),
    ).toThrow(/incident_id is SQL/);
  });
});
