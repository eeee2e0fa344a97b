/**
 * Issue 38, point 3: the move of each asset's DQ scores and job markers from D1 into its Durable
 * Object. Online (scans and reads go on while it moves; nothing lost or doubled), idempotent (a
 * second run changes nothing) and resumable (small steps, any number of ticks); the listings are
 * the same before and after.
 */

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import { type AlertSource, readAlerts } from "../../src/incidents/alerts";
import { lastFreshness } from "../../src/incidents/monitor-store";
import { moveHistoryTick } from "../../src/retention/history-move";
import { dqScoreHistory } from "../../src/settings/dq-score";
import { seedAlert } from "../support/alerts";
import { admin, call } from "../support/api";
import { countRows, csvAsset } from "../support/assets";
import { seedHistory, seedIncident } from "../support/incidents";
import { emailBatch, scanJob, uploadCsv } from "../support/scans";

const LEGACY_FRESHNESS = "2026-01-01T00:00:00.000Z";

/** An asset with `scans` scans applied, its history laid out as before issue 38 (in D1), plus `extra` older scores. */
async function legacyAsset(scans: number, extra: number) {
  const { tenant, asset } = await csvAsset();
  const assetId = asset.id as number;
  for (let seq = 1; seq <= scans; seq++) {
    expect(await scanJob(tenant, assetId, await uploadCsv(tenant, assetId, emailBatch(seq)))).toMatchObject({
      status: "SUCCEEDED",
    });
  }
  const monitor = assetMonitor(env, tenant, assetId);
  const scored = await runInDurableObject(monitor, (_o, state) => {
    const rows = state.storage.sql
      .exec<Record<string, string | number>>("SELECT * FROM dq_scores")
      .toArray()
      .map((r) => ({ ...r }));
    state.storage.sql.exec("DELETE FROM dq_scores");
    return rows;
  });
  expect(scored).toHaveLength(scans);
  const older = Array.from({ length: extra }, (_, i) => ({
    job_id: `legacy_${assetId}_${String(i).padStart(3, "0")}`,
    scored_at: new Date(Date.UTC(2026, 0, 1) - (extra - i) * 3_600_000).toISOString(),
    completeness: 90 + (i % 10),
    accuracy: 80,
    consistency: 70 + (i % 5),
    timeliness: 100,
    overall: 85 + (i % 7),
  }));
  const statements = [...scored, ...older].flatMap((s) => [
    env.DB.prepare(
      `INSERT INTO dq_scores (job_id, tenant_id, asset_id, scored_at, completeness, accuracy, consistency, timeliness, overall)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).bind(s.job_id, tenant, assetId, s.scored_at, s.completeness, s.accuracy, s.consistency, s.timeliness, s.overall),
    env.DB.prepare(
      "INSERT INTO monitor_applied_jobs (job_id, tenant_id, asset_id, applied_at, freshness) VALUES (?, ?, ?, ?, ?)",
    ).bind(s.job_id, tenant, assetId, s.scored_at, s.job_id === older.at(-1)?.job_id ? LEGACY_FRESHNESS : null),
  ]);
  await env.DB.batch([
    ...statements,
    env.DB.prepare("DELETE FROM asset_monitor_marks WHERE asset_id = ?").bind(assetId),
  ]);
  return { tenant, assetId, jobs: [...scored, ...older].map((s) => String(s.job_id)) };
}

const historyPath = (tenant: string, assetId: number) =>
  `/api/backend/${tenant}/configuration/assets/${assetId}/dq_score/history`;

/** The whole listing, page by page (`limit` a page) through the Link headers, or in one answer. */
async function listing(tenant: string, assetId: number, limit?: number) {
  let path: string | undefined = `${historyPath(tenant, assetId)}${limit ? `?limit=${limit}` : ""}`;
  const out: Array<{ job_id: string; scored_at: string }> = [];
  while (path) {
    const res: { status: number; body: Array<{ job_id: string; scored_at: string }>; headers: Headers } = await call(
      "GET",
      path,
      { as: admin },
    );
    expect(res.status).toBe(200);
    out.push(...res.body);
    const link: string | null = res.headers.get("link");
    path = link ? link.slice(1, link.indexOf(">")) : undefined;
  }
  return out;
}

const inD1 = async (assetId: number) => ({
  dq_scores: await countRows("dq_scores", "asset_id = ?", assetId),
  monitor_applied_jobs: await countRows("monitor_applied_jobs", "asset_id = ?", assetId),
});
const alertsInD1 = (assetId: number) => countRows("alerts", "asset_id = ?", assetId);
const alertsInObject = (tenant: string, assetId: number) =>
  runInDurableObject(
    assetMonitor(env, tenant, assetId),
    (_o, state) => (state.storage.sql.exec("SELECT count(*) AS n FROM alerts").toArray()[0] as { n: number }).n,
  );

/**
 * `n` alerts of the asset in D1, as before issue 38 (D1 gave their ids), on the asset's scanned jobs
 * (one attribute each, so the listing of a job has several), and an incident whose history names
 * them (alert_refs, without the alerts themselves: alert_metrics null).
 */
async function legacyAlerts(tenant: string, assetId: number, jobs: readonly string[], n: number) {
  const row = await env.DB.prepare("SELECT project_id, connection_id FROM assets WHERE id = ?")
    .bind(assetId)
    .first<{ project_id: number; connection_id: number }>();
  const ref = { tenant, assetId, projectId: row!.project_id, connectionId: row!.connection_id };
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const time = new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
    ids.push(
      await seedAlert(ref, {
        jobId: jobs[i % jobs.length]!,
        attribute: `col_${i}`,
        metric: `attr:col_${i % 3}:null_rate`,
        metricValue: String(i / 100),
        metricTime: time,
        createTime: time,
        saveTime: time,
        details: { observed: i / 100, expected: { low: 0, high: 0.01 }, dimension: "completeness", n: i },
      }),
    );
  }
  const incidentId = await seedIncident(ref, { alertCount: n });
  await seedHistory(
    tenant,
    incidentId,
    ids.map((id, i) => ({
      time: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
      toState: "OPEN",
      fromState: i === 0 ? null : "OPEN",
      alertRefs: [id],
      jobId: `hist_${incidentId}_${i}`,
    })),
  );
  return { ids, incidentId };
}

/** What the API says of the asset's alerts: each job's, those of `ids`, the incident's detail's, a metric's history. */
async function alertListings(
  tenant: string,
  assetId: number,
  jobs: readonly string[],
  ids: number[],
  incidentId: number,
) {
  const byJob: unknown[] = [];
  for (const job of jobs) {
    const res = await call("POST", `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${job}`, {
      as: admin,
    });
    expect(res.status).toBe(200);
    byJob.push(res.body);
  }
  const refs = await call("POST", `/api/backend/${tenant}/configuration/alerts/by_filters`, {
    as: admin,
    body: { asset_id: String(assetId), alert_refs: ids },
  });
  expect(refs.status).toBe(200);
  const detail = await call("GET", `/api/backend/${tenant}/incidents/${incidentId}`, { as: admin });
  expect(detail.status).toBe(200);
  const metric = await call(
    "GET",
    `/api/backend/${tenant}/configuration/assets/${assetId}/metrics/history?metric=${encodeURIComponent("attr:col_1:null_rate")}`,
    { as: admin },
  );
  expect(metric.status).toBe(200);
  // Of the incident, what its alerts make (scans going on may count clean scans, or close it).
  const { metrics, history } = detail.body as { metrics: unknown[]; history: Array<{ alert_refs: number[] }> };
  const entries = history.filter((h) => h.alert_refs.length > 0);
  return { byJob, refs: refs.body as Array<{ id: number }>, detail: { metrics, entries }, metric: metric.body };
}

const inObject = (tenant: string, assetId: number) =>
  runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) => ({
    dq_scores: (state.storage.sql.exec("SELECT count(*) AS n FROM dq_scores").toArray()[0] as { n: number }).n,
    applied_jobs: (state.storage.sql.exec("SELECT count(*) AS n FROM applied_jobs").toArray()[0] as { n: number }).n,
  }));

/** Ticks until nothing is left (each tick `rows` rows a step, `steps` steps). */
async function moveAll(rows: number, steps: number) {
  let ticks = 0;
  for (let more = true; more; ticks++) {
    more = (await moveHistoryTick(env, { rows, steps })).more;
    expect(ticks).toBeLessThan(500);
  }
  return ticks;
}

/**
 * The whole move, one row a step and one step a tick (many interleavings with the rest), and `read`
 * again and again until it ends; `done` once both are.
 */
function readWhileMoving<T>(read: () => Promise<T>) {
  let moving = true;
  const reads: T[] = [];
  const move = (async () => {
    try {
      await moveAll(1, 1);
    } finally {
      moving = false;
    }
  })();
  const reading = (async () => {
    while (moving) reads.push(await read());
  })();
  return { reads, done: Promise.all([move, reading]) };
}

describe("the move of DQ scores and job markers into the assets' objects (issue 38)", { timeout: 120_000 }, () => {
  it("lists the same scores before and after, paged or whole, and a second run changes nothing", async () => {
    const { tenant, assetId, jobs } = await legacyAsset(3, 25);
    const db = createDb(env.DB);
    const asset = { tenantId: tenant, id: assetId };
    const before = await listing(tenant, assetId);
    expect(before.map((s) => s.job_id).sort()).toEqual([...jobs].sort());
    expect(await listing(tenant, assetId, 4)).toEqual(before);
    expect(await lastFreshness(db, asset)).toBe(LEGACY_FRESHNESS);
    expect(await inD1(assetId)).toEqual({ dq_scores: 28, monitor_applied_jobs: 28 });

    // Steps of 5 rows, 2 steps a tick: several ticks, each resuming where the last stopped.
    expect(await moveAll(5, 2)).toBeGreaterThan(1);
    expect(await inD1(assetId)).toEqual({ dq_scores: 0, monitor_applied_jobs: 0 });
    expect(await inObject(tenant, assetId)).toEqual({ dq_scores: 28, applied_jobs: 28 });
    expect(await listing(tenant, assetId)).toEqual(before);
    expect(await listing(tenant, assetId, 4)).toEqual(before);
    expect(await lastFreshness(db, asset)).toBe(LEGACY_FRESHNESS);

    // Idempotent: the same step again (rows copied back into D1, as a step cut short leaves
    // them) moves them again and doubles nothing.
    await env.DB.prepare(
      `INSERT INTO dq_scores (job_id, tenant_id, asset_id, scored_at, completeness, accuracy, consistency, timeliness, overall)
       VALUES (?, ?, ?, ?, 1, 1, 1, 1, 1)`,
    )
      .bind(jobs[0], tenant, assetId, before.find((s) => s.job_id === jobs[0])!.scored_at)
      .run();
    expect(await listing(tenant, assetId)).toEqual(before);
    await moveAll(5, 2);
    expect(await inObject(tenant, assetId)).toEqual({ dq_scores: 28, applied_jobs: 28 });
    expect(await listing(tenant, assetId)).toEqual(before);
    expect((await moveHistoryTick(env)).assets).toBe(0);
  });

  it("a read whose object answered before a step's copy and D1 after its delete reads again", async () => {
    const { tenant, assetId } = await legacyAsset(1, 6);
    const monitor = assetMonitor(env, tenant, assetId);
    const db = createDb(env.DB);
    const asset = { tenantId: tenant, id: assetId };
    const before = await dqScoreHistory(db, monitor, asset, 100);
    // The object's answer from before the step, then the step (copy in, delete from D1).
    const stale = await monitor.dqScores(101);
    expect((await monitor.moveHistoryIn({ asset, limit: 100 })).dqScores).toBe(7);
    let answers = 0;
    const source = {
      dqScores: async (limit: number, before?: string) => {
        answers += 1;
        return answers === 1 ? stale : monitor.dqScores(limit, before);
      },
    };
    expect(await dqScoreHistory(db, source, asset, 100)).toEqual(before);
    expect(answers).toBe(2);
  });

  it("scans and reads go on while it moves: no score lost or doubled, the listing always whole", async () => {
    const { tenant, assetId, jobs } = await legacyAsset(2, 40);
    const before = await listing(tenant, assetId);
    const { reads, done } = readWhileMoving(() => listing(tenant, assetId));
    const scanned: string[] = [];
    for (let seq = 10; seq < 13; seq++) {
      const jobId = await uploadCsv(tenant, assetId, emailBatch(seq));
      expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
      scanned.push(jobId);
    }
    await done;
    expect(reads.length).toBeGreaterThan(2);
    for (const r of reads) {
      const ids = r.map((s) => s.job_id);
      expect(new Set(ids).size).toBe(ids.length);
      // Every score from before is there in every read, in the order of the listing before.
      expect(r.filter((s) => jobs.includes(s.job_id))).toEqual(before);
    }
    expect(await inD1(assetId)).toEqual({ dq_scores: 0, monitor_applied_jobs: 0 });
    const after = await listing(tenant, assetId);
    expect(after.map((s) => s.job_id).sort()).toEqual([...jobs, ...scanned].sort());
    expect(after.filter((s) => jobs.includes(s.job_id))).toEqual(before);
  });

  it("alerts: every listing is the same before, during and after, and the ids stay", async () => {
    const { tenant, assetId, jobs } = await legacyAsset(3, 0);
    const { ids, incidentId } = await legacyAlerts(tenant, assetId, jobs, 12);
    const before = await alertListings(tenant, assetId, jobs, ids, incidentId);
    expect(before.refs.map((a) => a.id)).toEqual(ids);
    expect((before.detail as { metrics: unknown[] }).metrics).toHaveLength(12);
    expect(await alertsInD1(assetId)).toBe(12);

    // 5 rows a step, one step a tick: the listings are read after every tick.
    for (let more = true, ticks = 0; more; ticks++) {
      more = (await moveHistoryTick(env, { rows: 5, steps: 1 })).more;
      expect(await alertListings(tenant, assetId, jobs, ids, incidentId)).toEqual(before);
      expect(ticks).toBeLessThan(50);
    }
    expect(await alertsInD1(assetId)).toBe(0);
    expect(await alertsInObject(tenant, assetId)).toBe(12);
    // The incident's history carries its alerts now: its detail reads no alert row of D1.
    expect(await countRows("incident_history", "incident_id = ? and alert_metrics is null", incidentId)).toBe(0);
    expect(await alertListings(tenant, assetId, jobs, ids, incidentId)).toEqual(before);

    // A step cut short (its rows copied in, not yet deleted from D1) and run again doubles nothing.
    const [again] = ids;
    await env.DB.prepare(
      `INSERT INTO alerts (id, tenant_id, asset_id, project_id, connection_id, job_id, type, policy_name, attribute, segment,
         priority, description, source_name, source_type, is_notification_enabled, metric, metric_value, metric_time,
         create_time, save_time, details)
       SELECT ?, ?, ?, 0, 0, ?, 'completeness', 'Completeness', 'col_0', '', 'HIGH', 'x', 'orders', 'S3', 1, 'm', '0',
         '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '{}'`,
    )
      .bind(again, tenant, assetId, jobs[0])
      .run();
    await moveAll(5, 2);
    expect(await alertsInObject(tenant, assetId)).toBe(12);
    expect(await alertListings(tenant, assetId, jobs, ids, incidentId)).toEqual(before);

    // The asset's next scan's alerts take ids above every id D1 gave.
    const next = await uploadCsv(tenant, assetId, emailBatch(20, 150));
    expect(await scanJob(tenant, assetId, next)).toMatchObject({ status: "SUCCEEDED" });
    const raised = await call("POST", `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${next}`, {
      as: admin,
    });
    for (const a of raised.body as Array<{ id: number }>) expect(a.id).toBeGreaterThan(Math.max(...ids));
  });

  it("alerts: scans and reads go on while they move, nothing lost or doubled", async () => {
    const { tenant, assetId, jobs } = await legacyAsset(3, 0);
    const { ids, incidentId } = await legacyAlerts(tenant, assetId, jobs, 30);
    const before = await alertListings(tenant, assetId, jobs, ids, incidentId);
    const { reads, done } = readWhileMoving(() => alertListings(tenant, assetId, jobs, ids, incidentId));
    const scanned: string[] = [];
    for (let seq = 10; seq < 13; seq++) {
      const jobId = await uploadCsv(tenant, assetId, emailBatch(seq, seq === 12 ? 150 : 0));
      expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
      scanned.push(jobId);
    }
    await done;
    expect(reads.length).toBeGreaterThan(2);
    for (const r of reads) expect(r).toEqual(before);
    expect(await alertsInD1(assetId)).toBe(0);
    const kept = await alertsInObject(tenant, assetId);
    const raised = [];
    for (const job of scanned) {
      const res = await call("POST", `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${job}`, {
        as: admin,
      });
      raised.push(...(res.body as Array<{ id: number }>));
    }
    expect(kept).toBe(30 + raised.length);
    expect(new Set(raised.map((a) => a.id)).size).toBe(raised.length);
    expect(await alertListings(tenant, assetId, jobs, ids, incidentId)).toEqual(before);
  });

  it("alerts: a read whose object answered before a step's copy and D1 after its delete reads again", async () => {
    const { tenant, assetId, jobs } = await legacyAsset(1, 0);
    const { ids } = await legacyAlerts(tenant, assetId, jobs, 4);
    const monitor: AlertSource = assetMonitor(env, tenant, assetId);
    const db = createDb(env.DB);
    const asset = { tenantId: tenant, id: assetId };
    const before = await readAlerts(db, monitor, asset, { ids });
    expect(before.map((a) => a.id)).toEqual(ids);
    // The object's answer from before the step, then the step (copy in, delete from D1).
    const stale = await monitor.alerts({ ids });
    expect((await assetMonitor(env, tenant, assetId).moveHistoryIn({ asset, limit: 100 })).alerts).toBe(4);
    let answers = 0;
    const racing: AlertSource = {
      alerts: async (query) => {
        answers += 1;
        return answers === 1 ? stale : monitor.alerts(query);
      },
    };
    expect(await readAlerts(db, racing, asset, { ids })).toEqual(before);
    expect(answers).toBe(2);
  });
});
