import { and, desc, eq, lt, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { FinishedJobsQuery } from "../contracts/asset-monitor";
import { QUEUE_BATCH_LIMIT, type ScanJobMessage } from "../contracts/messages";
import type { Db } from "../db";
import type { ScanJobRow } from "../db/schema";
import { scanJobs } from "../db/schema";
import { movedStepsQuery } from "../incidents/monitor-store";
import { randomId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { INITIAL_STATUS } from "./lifecycle";

/** What a new scan job is about; it starts QUEUED (INITIAL_STATUS). */
export interface NewScanJob {
  tenantId: string;
  assetId: number;
  kind: ScanJobRow["kind"];
  /** What started it: api, upload, schedule, source_group. */
  trigger: string;
  /** The request describing the scan (location, path, format…). */
  request?: Record<string, unknown>;
  /** Bytes the scan will read, when known up front (uploads). */
  totalBytes?: number;
}

/** Ids of scan jobs: `job_` and 20 base62 characters. */
export function newScanJobId(): string {
  return `job_${randomId(20)}`;
}

/** The row of a new QUEUED scan job, not stored yet. */
export function newScanJobRow(j: NewScanJob, createdAt = nowIso()): ScanJobRow {
  return {
    id: newScanJobId(),
    tenantId: j.tenantId,
    assetId: j.assetId,
    kind: j.kind,
    status: INITIAL_STATUS,
    trigger: j.trigger,
    request: j.request ?? {},
    rowsScanned: 0,
    bytesScanned: 0,
    totalBytes: j.totalBytes ?? null,
    error: null,
    attempts: 0,
    createdAt,
    startedAt: null,
    finishedAt: null,
    engine: "WORKER",
    engineReason: null,
    provider: null,
    providerRunId: null,
    providerRunUrl: null,
    providerState: null,
    callbackSecret: null,
    callbackUsedAt: null,
    callbackDeadline: null,
  };
}

/**
 * Records new QUEUED scan jobs in one batch, with `after` (the caller's statements that belong
 * with them, e.g. an audit row), and returns their rows, in the order given.
 */
export async function createScanJobs(
  db: Db,
  jobs: NewScanJob[],
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<ScanJobRow[]> {
  if (jobs.length === 0) return [];
  const createdAt = nowIso();
  const rows = jobs.map((j) => newScanJobRow(j, createdAt));
  // One row per statement keeps every insert far below D1's 100 bound parameters.
  const [first, ...rest] = rows.map((row) => db.insert(scanJobs).values(row));
  await db.batch([first!, ...rest, ...after]);
  return rows;
}

/** Records one new QUEUED scan job (with `after` in its batch) and returns its row. */
export async function createScanJob(
  db: Db,
  job: NewScanJob,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<ScanJobRow> {
  const [row] = await createScanJobs(db, [job], after);
  return row!;
}

/** Sends jobs to the `scan-jobs` queue, 100 messages per call (the queue's batch limit). */
export async function enqueueScanJobs(
  queue: Queue<ScanJobMessage>,
  jobs: Array<Pick<ScanJobRow, "id" | "tenantId" | "assetId">>,
): Promise<void> {
  for (let i = 0; i < jobs.length; i += QUEUE_BATCH_LIMIT) {
    await queue.sendBatch(
      jobs.slice(i, i + QUEUE_BATCH_LIMIT).map((j) => ({
        body: { job_id: j.id, tenant_id: j.tenantId, asset_id: j.assetId },
        contentType: "json" as const,
      })),
    );
  }
}

/**
 * Where an asset's ended jobs are kept (issue 38): its AssetMonitor. Each answer says the steps out
 * of D1 the object had taken in when it read (HistoryStore.movedSteps).
 */
export interface EndedJobSource {
  scanJob(jobId: string): Promise<{ job: ScanJobRow | undefined; movedSteps: number }>;
  scanJobs(query: FinishedJobsQuery): Promise<{ jobs: ScanJobRow[]; movedSteps: number }>;
}

/** Reads that a job's move raced before one is taken as it is (each race is one job leaving D1). */
const MOVE_RACE_READS = 3;

/**
 * Reads the object and D1 (`statement`, with the asset's mark) in parallel, again when D1's mark
 * counts a step the object had not taken in when it answered: it answered before it kept a job, and
 * D1 after that job's row was deleted (the job would be in neither answer).
 */
async function readBoth<K extends { movedSteps: number }, R>(
  db: Db,
  asset: { tenantId: string; id: number },
  object: () => Promise<K>,
  statement: BatchItem<"sqlite"> & PromiseLike<R>,
): Promise<[K, R]> {
  for (let read = 1; ; read++) {
    const [kept, [rows, marks]] = await Promise.all([object(), db.batch([statement, movedStepsQuery(db, asset)])]);
    if ((marks[0]?.movedSteps ?? 0) <= kept.movedSteps || read >= MOVE_RACE_READS) return [kept, rows as R];
  }
}

/**
 * A job of an asset of a tenant; undefined when there is none (or it is another asset's). D1 has
 * it while it runs (and an ended one its object has not taken in yet: D1's row wins), the asset's
 * object once it ended; both are read in parallel, one round trip.
 */
export async function getScanJob(
  db: Db,
  source: EndedJobSource,
  tenantId: string,
  assetId: number,
  jobId: string,
): Promise<ScanJobRow | undefined> {
  const [kept, rows] = await readBoth(
    db,
    { tenantId, id: assetId },
    () => source.scanJob(jobId),
    scanJobQuery(db, tenantId, assetId, jobId),
  );
  return rows[0] ?? kept.job;
}

/** The job's D1 row (at most one row): a job still running, for a batch or a condition (exists). */
export function scanJobQuery(db: Db, tenantId: string, assetId: number, jobId: string) {
  return db
    .select()
    .from(scanJobs)
    .where(and(eq(scanJobs.tenantId, tenantId), eq(scanJobs.assetId, assetId), eq(scanJobs.id, jobId)))
    .limit(1);
}

/** The asset's jobs in D1 where `condition` holds. */
function jobsOfAsset(db: Db, tenantId: string, assetId: number, condition: SQL | undefined) {
  return db
    .select()
    .from(scanJobs)
    .where(and(eq(scanJobs.tenantId, tenantId), eq(scanJobs.assetId, assetId), condition));
}

/** created_at, then id, descending, as SQLite orders the text (ASCII both). */
function newestFirst(a: ScanJobRow, b: ScanJobRow): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

/** D1's jobs and the object's, by id (D1's row wins), newest first, the first `n`. */
function mergedJobs(d1: readonly ScanJobRow[], kept: readonly ScanJobRow[], n: number): ScanJobRow[] {
  const byId = new Map(kept.map((j) => [j.id, j]));
  for (const j of d1) byId.set(j.id, j);
  return [...byId.values()].sort(newestFirst).slice(0, n);
}

/**
 * Where a page of an asset's jobs starts: after the job created at `createdAt` with id `id` (the
 * list's order, newest first); without `id` (a cursor made before it had one), after every job of
 * `createdAt`.
 */
export interface JobKey {
  createdAt: string;
  id?: string | undefined;
}

/** D1's jobs after `before` in the list's order (created_at, then id, descending). */
function afterJob(before: JobKey | undefined): SQL | undefined {
  if (before === undefined) return undefined;
  if (before.id === undefined) return lt(scanJobs.createdAt, before.createdAt);
  return or(
    lt(scanJobs.createdAt, before.createdAt),
    and(eq(scanJobs.createdAt, before.createdAt), lt(scanJobs.id, before.id)),
  );
}

/**
 * One page of an asset's jobs, newest first (created_at, then id; `limit + 1` rows) after the
 * keyset `before`: D1's (running ones) and the asset's object's (ended ones), read in parallel, one
 * round trip.
 */
export async function listScanJobs(
  db: Db,
  source: EndedJobSource,
  tenantId: string,
  assetId: number,
  limit: number,
  before?: JobKey,
): Promise<ScanJobRow[]> {
  const query = {
    limit: limit + 1,
    ...(before === undefined ? {} : { before: before.createdAt }),
    ...(before?.id === undefined ? {} : { beforeId: before.id }),
  };
  const [kept, rows] = await readBoth(
    db,
    { tenantId, id: assetId },
    () => source.scanJobs(query),
    jobsOfAsset(db, tenantId, assetId, afterJob(before))
      .orderBy(desc(scanJobs.createdAt), desc(scanJobs.id))
      .limit(limit + 1),
  );
  return mergedJobs(rows, kept.jobs, limit + 1);
}

/**
 * The newest job of an asset that carried an uploaded batch (by created_at; between two of one
 * millisecond in D1, the later insert), from D1 and the asset's object in parallel; on a tie
 * between them, D1's (the one still running).
 */
export async function lastUploadJob(
  db: Db,
  source: EndedJobSource,
  tenantId: string,
  assetId: number,
): Promise<ScanJobRow | undefined> {
  const [kept, [row]] = await readBoth(
    db,
    { tenantId, id: assetId },
    () => source.scanJobs({ limit: 1, uploaded: true }),
    jobsOfAsset(db, tenantId, assetId, sql`json_extract(${scanJobs.request}, '$.upload.key') is not null`)
      // rowid breaks ties between uploads of the same millisecond: the later insert is the later batch.
      .orderBy(desc(scanJobs.createdAt), desc(sql`rowid`))
      .limit(1),
  );
  const ended = kept.jobs[0];
  return row && (!ended || row.createdAt >= ended.createdAt) ? row : ended;
}

/** An asset created for a source group, with the id of the ANALYZE job that reads its schema. */
export interface GroupAssetCreated {
  id: string;
  analyze_job_id: string;
}

/** One ANALYZE job per new asset of a group (after the assets are committed), sent to the scan queue. */
export async function queueGroupAnalyses(
  db: Db,
  queue: Queue<ScanJobMessage>,
  tenantId: string,
  groupId: number,
  assetIds: number[],
): Promise<GroupAssetCreated[]> {
  const jobs = await createScanJobs(
    db,
    assetIds.map((assetId) => ({
      tenantId,
      assetId,
      kind: "ANALYZE" as const,
      trigger: "source_group",
      request: { source_group_id: groupId },
    })),
  );
  await enqueueScanJobs(queue, jobs);
  return jobs.map((j) => ({ id: String(j.assetId), analyze_job_id: j.id }));
}
