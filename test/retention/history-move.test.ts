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
import { lastFreshness } from "../../src/incidents/monitor-store";
import { moveHistoryTick } from "../../src/retention/history-move";
import { dqScoreHistory } from "../../src/settings/dq-score";
import { admin, call } from "../support/api";
import { countRows, csvAsset } from "../support/assets";
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
    let moving = true;
    const reads: Array<Array<{ job_id: string; scored_at: string }>> = [];
    const move = (async () => {
      // One row a step, one step a tick: the move takes many interleavings with the rest.
      try {
        await moveAll(1, 1);
      } finally {
        moving = false;
      }
    })();
    const read = (async () => {
      while (moving) reads.push(await listing(tenant, assetId));
    })();
    const scanned: string[] = [];
    for (let seq = 10; seq < 13; seq++) {
      const jobId = await uploadCsv(tenant, assetId, emailBatch(seq));
      expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
      scanned.push(jobId);
    }
    await Promise.all([move, read]);
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
});
