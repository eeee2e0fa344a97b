/**
 * Issue 38 for incidents' history: a scan's history entries are kept by its asset's AssetMonitor
 * (D1 changes only the incident's row), and the entries from before move in with the history move.
 * The incident's detail and the listings are the same before, during (scans and reads going on)
 * and after; a step cut short and run again doubles nothing; a read that raced a step reads again;
 * retention forgets the entries of incidents closed before the cutoff.
 */

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AssetMonitorRpc, KeptIncidentHistory } from "../../src/contracts/asset-monitor";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import { incidentDetail } from "../../src/incidents/incidents";
import { moveHistoryTick } from "../../src/retention/history-move";
import { admin, call } from "../support/api";
import { countRows, csvAsset } from "../support/assets";
import { emailBatch, scanJob, uploadCsv } from "../support/scans";

type Detail = {
  id: string;
  state: string;
  metrics: unknown[];
  history: Array<{ time: string; job_id: string | null }>;
};

/** The asset's entries kept by its object (applied ones). */
const entriesInObject = (tenant: string, assetId: number) =>
  runInDurableObject(
    assetMonitor(env, tenant, assetId),
    (_o, state) =>
      (
        state.storage.sql.exec("SELECT count(*) AS n FROM incident_history WHERE applied = 1").toArray()[0] as {
          n: number;
        }
      ).n,
  );
const entriesInD1 = (assetId: number) =>
  countRows("incident_history", "incident_id in (select id from incidents where asset_id = ?)", assetId);

async function scan(tenant: string, assetId: number, seq: number, broken: boolean) {
  const jobId = await uploadCsv(tenant, assetId, emailBatch(seq, broken ? 150 : 0));
  expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
  return jobId;
}

/**
 * An asset whose incidents have a varied history (opened, confirmed, auto-closed, opened again,
 * closed and reopened by hand), laid out as before issue 38: every entry taken back from the object
 * into D1's incident_history, in the object's order.
 */
async function legacyAsset() {
  const { tenant, asset } = await csvAsset();
  const assetId = asset.id as number;
  const plan = [false, false, false, true, true, false, false, false, true];
  for (const [i, broken] of plan.entries()) await scan(tenant, assetId, i + 1, broken);
  const incidentIds = (
    await env.DB.prepare("SELECT id FROM incidents WHERE asset_id = ? ORDER BY id").bind(assetId).all<{ id: number }>()
  ).results.map((r) => r.id);
  expect(incidentIds.length).toBeGreaterThanOrEqual(2);
  const last = incidentIds.at(-1)!;
  const path = `/api/backend/${tenant}/incidents/${last}`;
  expect((await call("PATCH", path, { as: admin, body: { state: "CLOSED", reason: "FIXED", note: "x" } })).status).toBe(
    200,
  );
  expect((await call("PATCH", path, { as: admin, body: { state: "OPEN", note: "back" } })).status).toBe(200);
  expect(await entriesInD1(assetId)).toBe(0);
  const kept = await runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) => {
    const rows = state.storage.sql
      .exec<Record<string, string | number | null>>("SELECT * FROM incident_history ORDER BY time, seq")
      .toArray()
      .map((r) => ({ ...r }));
    state.storage.sql.exec("DELETE FROM incident_history");
    return rows;
  });
  expect(kept.length).toBeGreaterThanOrEqual(6);
  await env.DB.batch(
    kept.map((r) =>
      env.DB.prepare(
        `INSERT INTO incident_history (tenant_id, incident_id, time, from_state, to_state, alert_refs, actor, note,
           reason, job_id, details, alert_metrics) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).bind(
        tenant,
        r.incident_id,
        r.time,
        r.from_state,
        r.to_state,
        r.alert_refs,
        r.actor,
        r.note,
        r.reason,
        r.job_id,
        r.details,
        r.alert_metrics,
      ),
    ),
  );
  return { tenant, assetId, incidentIds, entries: kept.length };
}

/** What the API says of the asset's incidents: each one's detail, the listing, the alerts of their refs. */
async function incidentViews(tenant: string, assetId: number, incidentIds: readonly number[]) {
  const details: Detail[] = [];
  for (const id of incidentIds) {
    const res = await call("GET", `/api/backend/${tenant}/incidents/${id}`, { as: admin });
    expect(res.status).toBe(200);
    details.push(res.body as Detail);
  }
  const list = await call("GET", `/api/backend/${tenant}/incidents?limit=100`, { as: admin });
  expect(list.status).toBe(200);
  const refs = details.flatMap((d) => d.history.flatMap((h) => (h as unknown as { alert_refs: number[] }).alert_refs));
  const alerts = await call("POST", `/api/backend/${tenant}/configuration/alerts/by_filters`, {
    as: admin,
    body: { asset_id: String(assetId), alert_refs: refs },
  });
  expect(alerts.status).toBe(200);
  return { details, list: list.body as Array<{ id: string }>, alerts: alerts.body };
}

/** Ticks until nothing is left (each tick `rows` rows a step, `steps` steps). */
async function moveAll(rows: number, steps: number) {
  let ticks = 0;
  for (let more = true; more; ticks++) {
    more = (await moveHistoryTick(env, { rows, steps })).more;
    expect(ticks).toBeLessThan(500);
  }
  return ticks;
}

describe("the move of incidents' history into the assets' objects (issue 38)", { timeout: 120_000 }, () => {
  it("a scan's entries are kept by the object: D1 gets none, the detail shows them", async () => {
    const { tenant, asset } = await csvAsset();
    const assetId = asset.id as number;
    for (let seq = 1; seq <= 4; seq++) await scan(tenant, assetId, seq, seq === 4);
    const [incident] = (
      await env.DB.prepare("SELECT id FROM incidents WHERE asset_id = ?").bind(assetId).all<{ id: number }>()
    ).results;
    expect(incident).toBeDefined();
    expect(await entriesInD1(assetId)).toBe(0);
    expect(await entriesInObject(tenant, assetId)).toBe(1);
    const detail = await call("GET", `/api/backend/${tenant}/incidents/${incident!.id}`, { as: admin });
    expect(detail.body).toMatchObject({ history: [{ from_state: null, to_state: "OPEN", actor: "system" }] });
    expect((detail.body as Detail).metrics.length).toBeGreaterThan(0);
  });

  it("the detail and the listings are the same before and after, and a second run doubles nothing", async () => {
    const { tenant, assetId, incidentIds, entries } = await legacyAsset();
    const before = await incidentViews(tenant, assetId, incidentIds);
    expect(before.details.flatMap((d) => d.history)).toHaveLength(entries);
    expect(await entriesInD1(assetId)).toBe(entries);

    expect(await moveAll(2, 1)).toBeGreaterThan(1);
    expect(await entriesInD1(assetId)).toBe(0);
    expect(await entriesInObject(tenant, assetId)).toBe(entries);
    expect(await incidentViews(tenant, assetId, incidentIds)).toEqual(before);

    // A step cut short (its rows copied in, not yet deleted from D1) and run again doubles nothing.
    const [first] = (
      await runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) =>
        state.storage.sql
          .exec<Record<string, string | number | null>>("SELECT * FROM incident_history ORDER BY legacy_id LIMIT 1")
          .toArray()
          .map((r) => ({ ...r })),
      )
    ).slice(0, 1);
    await env.DB.prepare(
      `INSERT INTO incident_history (id, tenant_id, incident_id, time, from_state, to_state, alert_refs, actor, note,
         reason, job_id, details, alert_metrics) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
      .bind(
        first!.legacy_id,
        tenant,
        first!.incident_id,
        first!.time,
        first!.from_state,
        first!.to_state,
        first!.alert_refs,
        first!.actor,
        first!.note,
        first!.reason,
        first!.job_id,
        first!.details,
        first!.alert_metrics,
      )
      .run();
    expect(await incidentViews(tenant, assetId, incidentIds)).toEqual(before);
    await moveAll(2, 1);
    expect(await entriesInD1(assetId)).toBe(0);
    expect(await entriesInObject(tenant, assetId)).toBe(entries);
    expect(await incidentViews(tenant, assetId, incidentIds)).toEqual(before);
    expect((await moveHistoryTick(env)).assets).toBe(0);
  });

  it("scans and reads go on while it moves: no entry lost or doubled", async () => {
    const { tenant, assetId, incidentIds, entries } = await legacyAsset();
    const before = await incidentViews(tenant, assetId, incidentIds);
    let moving = true;
    const reads: Awaited<ReturnType<typeof incidentViews>>[] = [];
    const move = (async () => {
      try {
        await moveAll(1, 1);
      } finally {
        moving = false;
      }
    })();
    const reading = (async () => {
      while (moving) reads.push(await incidentViews(tenant, assetId, incidentIds));
    })();
    // Scans meanwhile: the open incident confirmed, then clean scans.
    for (let seq = 20; seq < 23; seq++) await scan(tenant, assetId, seq, seq === 20);
    await Promise.all([move, reading]);
    expect(reads.length).toBeGreaterThan(0);
    for (const r of reads) {
      r.details.forEach((d, i) => {
        // Every entry from before is there, once, in its order; later ones only follow.
        expect(d.history.slice(0, before.details[i]!.history.length)).toEqual(before.details[i]!.history);
        const jobs = d.history.flatMap((h) => (h.job_id ? [h.job_id] : []));
        expect(new Set(jobs).size).toBe(jobs.length);
      });
    }
    expect(await entriesInD1(assetId)).toBe(0);
    const after = await incidentViews(tenant, assetId, incidentIds);
    expect(await entriesInObject(tenant, assetId)).toBe(after.details.flatMap((d) => d.history).length);
    expect(after.details.flatMap((d) => d.history).length).toBeGreaterThan(entries);
    after.details.forEach((d, i) => {
      expect(d.history.slice(0, before.details[i]!.history.length)).toEqual(before.details[i]!.history);
    });
  });

  it("a read whose object answered before a step's copy and D1 after its delete reads again", async () => {
    const { tenant, assetId, incidentIds } = await legacyAsset();
    const monitor: Pick<AssetMonitorRpc, "incidentHistory" | "moveHistoryIn"> = assetMonitor(env, tenant, assetId);
    const db = createDb(env.DB);
    const row = (await db.query.incidents.findFirst({ where: (i, { eq }) => eq(i.id, incidentIds[0]!) }))!;
    const before = await incidentDetail(db, monitor, row);
    expect(before.history.length).toBeGreaterThan(0);
    const stale = await monitor.incidentHistory(row.id);
    expect(
      (await monitor.moveHistoryIn({ asset: { tenantId: tenant, id: assetId }, limit: 100 })).incidentHistory,
    ).toBe(await entriesInObject(tenant, assetId));
    let answers = 0;
    const racing = {
      incidentHistory: async (id: number): Promise<KeptIncidentHistory> => {
        answers += 1;
        return answers === 1 ? stale : monitor.incidentHistory(id);
      },
    };
    // The same entries (the object's own order, seq, is not part of an answer).
    const bare = (d: typeof before) => ({ ...d, history: d.history.map(({ seq: _s, ...e }) => e) });
    expect(bare(await incidentDetail(db, racing, row))).toEqual(bare(before));
    expect(answers).toBe(2);
  });

  it("retention forgets the entries of incidents closed before the cutoff, and keeps the open ones'", async () => {
    const { tenant, assetId } = await legacyAsset();
    await moveAll(100, 10);
    const monitor: Pick<AssetMonitorRpc, "pruneHistory" | "incidentHistory"> = assetMonitor(env, tenant, assetId);
    const incidents = (
      await env.DB.prepare("SELECT id, state FROM incidents WHERE asset_id = ? ORDER BY id")
        .bind(assetId)
        .all<{ id: number; state: string }>()
    ).results;
    const open = incidents.filter((i) => i.state === "OPEN");
    const closed = incidents.filter((i) => i.state === "CLOSED");
    expect(open.length).toBeGreaterThan(0);
    expect(closed.length).toBeGreaterThan(0);
    const openEntries = (await Promise.all(open.map((i) => monitor.incidentHistory(i.id)))).flatMap((h) => h.entries);
    const pruned = await monitor.pruneHistory(new Date(Date.now() + 86_400_000).toISOString());
    expect(pruned.incidentHistory).toBeGreaterThan(0);
    for (const i of closed) expect((await monitor.incidentHistory(i.id)).entries).toEqual([]);
    expect((await Promise.all(open.map((i) => monitor.incidentHistory(i.id)))).flatMap((h) => h.entries)).toEqual(
      openEntries,
    );
  });
});
