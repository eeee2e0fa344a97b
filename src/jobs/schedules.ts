import type { ScanJobMessage } from "../contracts/messages";
import { unfencedSql } from "../db/fences";
import { nextRunIso } from "../lib/cron";
import { nowIso } from "../lib/time";
import { INITIAL_STATUS } from "./lifecycle";
import { enqueueScanJobs } from "./scan-jobs";

/** Due schedules handled per statement; several pages fit easily in one cron invocation. */
const PAGE = 500;

/** What every due row carries: whose it is and the slot it is due for. */
interface DueRow {
  id: number;
  tenant_id: string;
  next_run_at: string;
}

interface DueAsset extends DueRow {
  schedule_cron: string;
  schedule_timezone: string;
}

interface DueGroup extends DueRow {
  scheduled_upload: string;
}

/** The scan job of one asset for one slot, before it is inserted. */
interface SlotJob {
  id: string;
  tenant_id: string;
  asset_id: number;
  slot: string;
}

/** What differs between the owners of schedules (assets, source groups); the dispatch loop is shared. */
interface ScheduleOwner<Row extends DueRow> {
  table: "assets" | "source_groups";
  /** One page of due rows, soonest first; ?1 is `now`. */
  dueSql: string;
  /** The cron expression and time zone that give a row its next slot. */
  schedule(row: Row): [cron: string, timeZone: string];
  /** The jobs of the rows whose slots this invocation claimed. */
  jobsOf(d1: D1Database, claimed: Row[]): Promise<SlotJob[]>;
}

/** The job of an asset's schedule slot: the same slot always yields the same id. */
export function scheduledJobId(assetId: number, slot: string): string {
  return `job_sched_${assetId}_${Math.floor(Date.parse(slot) / 60_000)}`;
}

/**
 * Claims due slots with one guarded UPDATE per page: a slot is claimed only if next_run_at
 * still holds the value read, so overlapping invocations never claim it twice. Returns the
 * claimed ids.
 */
async function claim(
  d1: D1Database,
  table: "assets" | "source_groups",
  slots: Array<{ id: number; old: string; next: string | null }>,
): Promise<Set<number>> {
  const { results } = await d1
    .prepare(
      `WITH due(id, old, next) AS (
         SELECT json_extract(value, '$.id'), json_extract(value, '$.old'), json_extract(value, '$.next')
         FROM json_each(?1))
       UPDATE ${table} SET next_run_at = (SELECT next FROM due WHERE due.id = ${table}.id)
       WHERE id IN (SELECT id FROM due)
         AND next_run_at = (SELECT old FROM due WHERE due.id = ${table}.id)
       RETURNING id`,
    )
    .bind(JSON.stringify(slots))
    .all<{ id: number }>();
  return new Set(results.map((r) => r.id));
}

/** Inserts the slots' jobs in one statement; a job that exists already (same slot) is skipped. */
async function insertJobs(d1: D1Database, jobs: SlotJob[]): Promise<ScanJobMessage[]> {
  if (jobs.length === 0) return [];
  const { results } = await d1
    .prepare(
      `INSERT INTO scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, created_at)
       SELECT json_extract(value, '$.id'), json_extract(value, '$.tenant_id'), json_extract(value, '$.asset_id'),
              'SCAN', ?3, 'schedule', json_object('slot', json_extract(value, '$.slot')), ?2
       FROM json_each(?1) WHERE 1
       ON CONFLICT (id) DO NOTHING
       RETURNING id, tenant_id, asset_id`,
    )
    .bind(JSON.stringify(jobs), nowIso(), INITIAL_STATUS)
    .all<{ id: string; tenant_id: string; asset_id: number }>();
  return results.map((r) => ({ job_id: r.id, tenant_id: r.tenant_id, asset_id: r.asset_id }));
}

/** A slot's job, with the id that makes inserting it twice a no-op. */
function slotJob(assetId: number, tenantId: string, slot: string): SlotJob {
  return { id: scheduledJobId(assetId, slot), tenant_id: tenantId, asset_id: assetId, slot };
}

/** Assets scan on their own schedule, in their own time zone: one job per claimed asset. */
const ASSET_SCHEDULES: ScheduleOwner<DueAsset> = {
  table: "assets",
  dueSql: `SELECT id, tenant_id, schedule_cron, schedule_timezone, next_run_at FROM assets
    WHERE next_run_at IS NOT NULL AND next_run_at <= ?1 AND schedule_enabled = 1 AND ${unfencedSql("assets.tenant_id")}
    ORDER BY next_run_at LIMIT ${PAGE}`,
  schedule: (a) => [a.schedule_cron, a.schedule_timezone],
  jobsOf: async (_d1, claimed) => claimed.map((a) => slotJob(a.id, a.tenant_id, a.next_run_at)),
};

/** Source groups schedule in UTC and scan every member asset for the group's slot. */
const GROUP_SCHEDULES: ScheduleOwner<DueGroup> = {
  table: "source_groups",
  dueSql: `SELECT id, tenant_id, scheduled_upload, next_run_at FROM source_groups
    WHERE next_run_at IS NOT NULL AND next_run_at <= ?1 AND ${unfencedSql("source_groups.tenant_id")}
    ORDER BY next_run_at LIMIT ${PAGE}`,
  schedule: (g) => [g.scheduled_upload, "UTC"],
  jobsOf: groupMemberJobs,
};

/** One job per member asset of the claimed groups, for its group's slot; no query when none was claimed. */
async function groupMemberJobs(d1: D1Database, groups: DueGroup[]): Promise<SlotJob[]> {
  if (groups.length === 0) return [];
  const { results: members } = await d1
    .prepare(
      `SELECT a.id, a.tenant_id, a.source_group_id FROM assets a
       WHERE a.source_group_id IN (SELECT value FROM json_each(?1))`,
    )
    .bind(JSON.stringify(groups.map((g) => g.id)))
    .all<{ id: number; tenant_id: string; source_group_id: number }>();
  const slotOf = new Map(groups.map((g) => [g.id, g.next_run_at]));
  return members.map((a) => slotJob(a.id, a.tenant_id, slotOf.get(a.source_group_id)!));
}

/** Sends inserted jobs to the scan-jobs queue; returns how many were sent. */
async function sendToScanQueue(queue: Queue<ScanJobMessage>, messages: ScanJobMessage[]): Promise<number> {
  await enqueueScanJobs(
    queue,
    messages.map((m) => ({ id: m.job_id, tenantId: m.tenant_id, assetId: m.asset_id })),
  );
  return messages.length;
}

/**
 * Dispatches one owner's due schedules page by page: read, claim, insert the claimed slots'
 * jobs, send them. Returns how many jobs it sent.
 */
async function dispatchDue<Row extends DueRow>(
  d1: D1Database,
  queue: Queue<ScanJobMessage>,
  owner: ScheduleOwner<Row>,
  now: Date,
): Promise<number> {
  const at = now.toISOString();
  let sent = 0;
  for (;;) {
    const { results: due } = await d1.prepare(owner.dueSql).bind(at).all<Row>();
    if (due.length === 0) break;
    const claimed = await claim(
      d1,
      owner.table,
      due.map((r) => ({ id: r.id, old: r.next_run_at, next: nextSlot(...owner.schedule(r), now) })),
    );
    const jobs = await owner.jobsOf(
      d1,
      due.filter((r) => claimed.has(r.id)),
    );
    sent += await sendToScanQueue(queue, await insertJobs(d1, jobs));
    if (due.length < PAGE) break;
  }
  return sent;
}

/**
 * The cron dispatcher: every asset and source group whose schedule is due at `now` gets one
 * scan job for its due slot, sent to the scan-jobs queue. A slot missed while the dispatcher
 * did not run is caught up once (not once per missed minute); next_run_at then moves to the
 * first slot after `now`.
 */
export async function dispatchDueSchedules(
  d1: D1Database,
  queue: Queue<ScanJobMessage>,
  now: Date,
): Promise<{ jobs: number }> {
  const assetJobs = await dispatchDue(d1, queue, ASSET_SCHEDULES, now);
  const groupJobs = await dispatchDue(d1, queue, GROUP_SCHEDULES, now);
  return { jobs: assetJobs + groupJobs };
}

/** The first slot strictly after `now`; null when the expression can never fire again. */
function nextSlot(cron: string, timeZone: string, now: Date): string | null {
  try {
    return nextRunIso(cron, timeZone, now);
  } catch {
    return null;
  }
}
