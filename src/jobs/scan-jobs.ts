import { and, desc, eq, lt } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { QUEUE_BATCH_LIMIT, type ScanJobMessage } from "../contracts/messages";
import type { Db } from "../db";
import type { ScanJobRow } from "../db/schema";
import { scanJobs } from "../db/schema";
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
 * A job of an asset of a tenant; undefined when there is none (or it is another asset's). A plain
 * select: each poll of a job reads it, and drizzle's relational findFirst costs several times the CPU.
 */
export async function getScanJob(
  db: Db,
  tenantId: string,
  assetId: number,
  jobId: string,
): Promise<ScanJobRow | undefined> {
  const [row] = await scanJobQuery(db, tenantId, assetId, jobId);
  return row;
}

/** getScanJob's query (at most one row), for a batch or a condition (exists). */
export function scanJobQuery(db: Db, tenantId: string, assetId: number, jobId: string) {
  return db
    .select()
    .from(scanJobs)
    .where(and(eq(scanJobs.tenantId, tenantId), eq(scanJobs.assetId, assetId), eq(scanJobs.id, jobId)))
    .limit(1);
}

/** One page of an asset's jobs, newest first (`limit + 1` rows). */
export function listScanJobs(db: Db, tenantId: string, assetId: number, limit: number, before?: string) {
  return db.query.scanJobs.findMany({
    where: and(
      eq(scanJobs.tenantId, tenantId),
      eq(scanJobs.assetId, assetId),
      before === undefined ? undefined : lt(scanJobs.createdAt, before),
    ),
    orderBy: [desc(scanJobs.createdAt), desc(scanJobs.id)],
    limit: limit + 1,
  });
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
