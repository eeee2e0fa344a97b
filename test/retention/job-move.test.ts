/**
 * Issue 38 for scan jobs: an ended job leaves D1 for its asset's Durable Object, and the jobs that
 * ended before (D1 rows) move in with the history move. Listings (paged or whole) are the same
 * before, during and after; scans and reads go on while it moves; a crash between the object's
 * keeping and the D1 delete shows the job once; a read that raced a job's leaving reads again.
 */

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { createDb } from "../../src/db";
import type { ScanJobRow } from "../../src/db/schema";
import { type EndedJobSource, getScanJob } from "../../src/jobs/scan-jobs";
import { moveHistoryTick } from "../../src/retention/history-move";
import { admin, call } from "../support/api";
import { countRows, csvAsset } from "../support/assets";
import { emailBatch, scanJob, uploadCsv } from "../support/scans";

const scansPath = (tenant: string, assetId: number) => `/api/backend/${tenant}/configuration/assets/${assetId}/scans`;

type JobView = { job_id: string; status: string; created_at: string };

/** The whole listing, page by page (`limit` a page) through the Link headers, or in one answer. */
async function listing(tenant: string, assetId: number, limit?: number): Promise<JobView[]> {
  let path: string | undefined = `${scansPath(tenant, assetId)}${limit ? `?limit=${limit}` : ""}`;
  const out: JobView[] = [];
  while (path) {
    const res: { status: number; body: JobView[]; headers: Headers } = await call("GET", path, { as: admin });
    expect(res.status).toBe(200);
    out.push(...res.body);
    const link: string | null = res.headers.get("link");
    path = link ? link.slice(1, link.indexOf(">")) : undefined;
  }
  return out;
}

const jobsInD1 = (assetId: number) => countRows("scan_jobs", "asset_id = ?", assetId);
const jobsInObject = (tenant: string, assetId: number) =>
  runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) => {
    return (state.storage.sql.exec("SELECT count(*) AS n FROM scan_jobs").toArray()[0] as { n: number }).n;
  });

/** A D1 row of a job, as the scan_jobs table takes it. */
function insertJob(row: ScanJobRow) {
  return env.DB.prepare(
    `INSERT INTO scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, rows_scanned, bytes_scanned,
       total_bytes, error, attempts, created_at, started_at, finished_at, engine, engine_reason)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).bind(
    row.id,
    row.tenantId,
    row.assetId,
    row.kind,
    row.status,
    row.trigger,
    JSON.stringify(row.request),
    row.rowsScanned,
    row.bytesScanned,
    row.totalBytes,
    row.error,
    row.attempts,
    row.createdAt,
    row.startedAt,
    row.finishedAt,
    row.engine,
    row.engineReason,
  );
}

/**
 * An asset laid out as before issue 38: `scans` scans run, their ended jobs taken back from the
 * object into D1, plus `extra` older ended jobs and one job still QUEUED. (Their times differ; jobs
 * of one millisecond are paged by (created_at, id): test/routes/scans-paging.test.ts.)
 */
async function legacyAsset(scans: number, extra: number) {
  const { tenant, asset } = await csvAsset();
  const assetId = asset.id as number;
  for (let seq = 1; seq <= scans; seq++) {
    expect(await scanJob(tenant, assetId, await uploadCsv(tenant, assetId, emailBatch(seq)))).toMatchObject({
      status: "SUCCEEDED",
    });
  }
  expect(await jobsInD1(assetId)).toBe(0);
  const scanned = await runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) => {
    const rows = state.storage.sql
      .exec<{ record: string }>("SELECT record FROM scan_jobs")
      .toArray()
      .map((r) => JSON.parse(r.record) as ScanJobRow);
    state.storage.sql.exec("DELETE FROM scan_jobs");
    return rows;
  });
  expect(scanned).toHaveLength(scans);
  const statuses = ["SUCCEEDED", "FAILED", "CANCELLED"] as const;
  const older: ScanJobRow[] = Array.from({ length: extra }, (_, i) => ({
    ...scanned[0]!,
    id: `job_legacy_${assetId}_${String(i).padStart(3, "0")}`,
    status: statuses[i % 3]!,
    error: i % 3 === 1 ? "the source refused" : null,
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString(),
  }));
  const queued: ScanJobRow = {
    ...scanned[0]!,
    id: `job_queued_${assetId}`,
    status: "QUEUED",
    startedAt: null,
    finishedAt: null,
    createdAt: new Date(Date.UTC(2026, 0, 2)).toISOString(),
  };
  await env.DB.batch([...scanned, ...older, queued].map(insertJob));
  return { tenant, assetId, jobs: [...scanned, ...older].map((j) => j.id), queued: queued.id };
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

describe("scan jobs leave D1 once ended (issue 38)", { timeout: 120_000 }, () => {
  it("the move takes the ended jobs in: the same listing before and after, paged or whole; again changes nothing", async () => {
    const { tenant, assetId, jobs, queued } = await legacyAsset(2, 9);
    const before = await listing(tenant, assetId);
    expect(before.map((j) => j.job_id).sort()).toEqual([...jobs, queued].sort());
    expect(await listing(tenant, assetId, 4)).toEqual(before);
    expect(await jobsInD1(assetId)).toBe(12);

    expect(await moveAll(4, 1)).toBeGreaterThan(1);
    // Only the queued job is left in D1.
    expect(await jobsInD1(assetId)).toBe(1);
    expect(await jobsInObject(tenant, assetId)).toBe(11);
    expect(await listing(tenant, assetId)).toEqual(before);
    expect(await listing(tenant, assetId, 4)).toEqual(before);
    for (const j of before) {
      const res = await call("GET", `${scansPath(tenant, assetId)}/${j.job_id}`, { as: admin });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(j);
    }

    // A step cut short leaves a row in both places: read once, moved again, nothing doubled.
    const kept = (await runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) => {
      const [row] = state.storage.sql.exec<{ record: string }>("SELECT record FROM scan_jobs LIMIT 1").toArray();
      return JSON.parse(row!.record) as ScanJobRow;
    })) as ScanJobRow;
    await insertJob(kept).run();
    expect(await listing(tenant, assetId)).toEqual(before);
    await moveAll(4, 1);
    expect(await jobsInD1(assetId)).toBe(1);
    expect(await jobsInObject(tenant, assetId)).toBe(11);
    expect(await listing(tenant, assetId)).toEqual(before);
  });

  it("scans and reads go on while it moves: no job lost or doubled, the listing always whole", async () => {
    const { tenant, assetId, jobs, queued } = await legacyAsset(1, 12);
    const before = await listing(tenant, assetId);
    let moving = true;
    const reads: JobView[][] = [];
    const move = (async () => {
      try {
        await moveAll(1, 1);
      } finally {
        moving = false;
      }
    })();
    const reading = (async () => {
      while (moving) reads.push(await listing(tenant, assetId, 5));
    })();
    const scanned: string[] = [];
    for (let seq = 10; seq < 13; seq++) {
      const jobId = await uploadCsv(tenant, assetId, emailBatch(seq));
      expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
      scanned.push(jobId);
    }
    await Promise.all([move, reading]);
    expect(reads.length).toBeGreaterThan(2);
    const old = new Set([...jobs, queued]);
    for (const r of reads) {
      const ids = r.map((j) => j.job_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(r.filter((j) => old.has(j.job_id))).toEqual(before);
    }
    const after = await listing(tenant, assetId);
    expect(after.map((j) => j.job_id).sort()).toEqual([...old, ...scanned].sort());
    expect(after.filter((j) => old.has(j.job_id))).toEqual(before);
    expect(await jobsInD1(assetId)).toBe(1);
  });

  it("a scan's job ends in the object alone; a crash between its keeping and the D1 delete shows it once", async () => {
    const { tenant, asset } = await csvAsset();
    const assetId = asset.id as number;
    const jobId = await uploadCsv(tenant, assetId, emailBatch(1));
    const ended = await scanJob(tenant, assetId, jobId);
    expect(ended).toMatchObject({ status: "SUCCEEDED" });
    expect(await jobsInD1(assetId)).toBe(0);
    expect(await jobsInObject(tenant, assetId)).toBe(1);

    // The object kept the job, and the D1 row was not deleted (the batch lost): D1's row wins,
    // the listing has it once, and the next move takes the row out.
    const record = (await (assetMonitor(env, tenant, assetId) as EndedJobSource).scanJob(jobId)).job as ScanJobRow;
    await insertJob(record).run();
    const [listed] = await listing(tenant, assetId);
    expect(await listing(tenant, assetId)).toEqual([listed]);
    expect(listed).toEqual(ended);
    await moveAll(10, 5);
    expect(await jobsInD1(assetId)).toBe(0);
    expect(await listing(tenant, assetId)).toEqual([ended]);

    // A job kept as pending (a batch that failed after the object's write) while D1 has it running:
    // D1's row is what a read shows, once.
    const running: ScanJobRow = { ...record, id: `job_running_${assetId}`, status: "RUNNING", finishedAt: null };
    await insertJob(running).run();
    await runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) => {
      state.storage.sql.exec(
        "INSERT INTO scan_jobs (id, created_at, uploaded, record, pending) VALUES (?, ?, 1, ?, 1)",
        running.id,
        running.createdAt,
        JSON.stringify({ ...running, status: "SUCCEEDED" }),
      );
    });
    const res = await call("GET", `${scansPath(tenant, assetId)}/${running.id}`, { as: admin });
    expect(res.body).toMatchObject({ job_id: running.id, status: "RUNNING" });
    expect((await listing(tenant, assetId)).filter((j) => j.job_id === running.id)).toHaveLength(1);
  });

  it("a read whose object answered before a job was kept, and D1 after its row left, reads again", async () => {
    const { tenant, asset } = await csvAsset();
    const assetId = asset.id as number;
    const monitor = assetMonitor(env, tenant, assetId);
    const db = createDb(env.DB);
    const stale = await (monitor as EndedJobSource).scanJob("job_not_yet");
    const jobId = await uploadCsv(tenant, assetId, emailBatch(1));
    await scanJob(tenant, assetId, jobId);
    const staleAnswer = { ...stale, job: undefined };
    let answers = 0;
    const source: EndedJobSource = {
      scanJob: async (id) => {
        answers += 1;
        return answers === 1 ? staleAnswer : (monitor as EndedJobSource).scanJob(id);
      },
      scanJobs: (query) => (monitor as EndedJobSource).scanJobs(query),
    };
    expect(await getScanJob(db, source, tenant, assetId, jobId)).toMatchObject({ id: jobId, status: "SUCCEEDED" });
    expect(answers).toBe(2);
  });
});
