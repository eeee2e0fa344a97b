import { nextRunIso } from "../lib/cron";
import { nowIso } from "../lib/time";
import type { ScanJobMessage } from "./messages";
import { enqueueScanJobs } from "./scan-jobs";

/** Due schedules handled per statement; several pages fit easily in one cron invocation. */
const PAGE = 500;

interface DueAsset {
  id: number;
  tenant_id: string;
  schedule_cron: string;
  schedule_timezone: string;
  next_run_at: string;
}

interface DueGroup {
  id: number;
  tenant_id: string;
  scheduled_upload: string;
  next_run_at: string;
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
async function insertJobs(
  d1: D1Database,
  jobs: Array<{ id: string; tenant_id: string; asset_id: number; slot: string }>,
): Promise<ScanJobMessage[]> {
  if (jobs.length === 0) return [];
  const { results } = await d1
    .prepare(
      `INSERT INTO scan_jobs (id, tenant_id, asset_id, kind, status, trigger, request, created_at)
       SELECT json_extract(value, '$.id'), json_extract(value, '$.tenant_id'), json_extract(value, '$.asset_id'),
              'SCAN', 'QUEUED', 'schedule', json_object('slot', json_extract(value, '$.slot')), ?2
       FROM json_each(?1) WHERE 1
       ON CONFLICT (id) DO NOTHING
       RETURNING id, tenant_id, asset_id`,
    )
    .bind(JSON.stringify(jobs), nowIso())
    .all<{ id: string; tenant_id: string; asset_id: number }>();
  return results.map((r) => ({ job_id: r.id, tenant_id: r.tenant_id, asset_id: r.asset_id }));
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
  const at = now.toISOString();
  let sent = 0;
  const send = async (messages: ScanJobMessage[]) => {
    await enqueueScanJobs(
      queue,
      messages.map((m) => ({ id: m.job_id, tenantId: m.tenant_id, assetId: m.asset_id })),
    );
    sent += messages.length;
  };

  for (;;) {
    const { results: due } = await d1
      .prepare(
        `SELECT id, tenant_id, schedule_cron, schedule_timezone, next_run_at FROM assets
         WHERE next_run_at IS NOT NULL AND next_run_at <= ?1 AND schedule_enabled = 1
         ORDER BY next_run_at LIMIT ${PAGE}`,
      )
      .bind(at)
      .all<DueAsset>();
    if (due.length === 0) break;
    const claimed = await claim(
      d1,
      "assets",
      due.map((a) => ({ id: a.id, old: a.next_run_at, next: nextSlot(a.schedule_cron, a.schedule_timezone, now) })),
    );
    const jobs = due
      .filter((a) => claimed.has(a.id))
      .map((a) => ({
        id: scheduledJobId(a.id, a.next_run_at),
        tenant_id: a.tenant_id,
        asset_id: a.id,
        slot: a.next_run_at,
      }));
    await send(await insertJobs(d1, jobs));
    if (due.length < PAGE) break;
  }

  for (;;) {
    const { results: due } = await d1
      .prepare(
        `SELECT id, tenant_id, scheduled_upload, next_run_at FROM source_groups
         WHERE next_run_at IS NOT NULL AND next_run_at <= ?1 ORDER BY next_run_at LIMIT ${PAGE}`,
      )
      .bind(at)
      .all<DueGroup>();
    if (due.length === 0) break;
    const claimed = await claim(
      d1,
      "source_groups",
      due.map((g) => ({ id: g.id, old: g.next_run_at, next: nextSlot(g.scheduled_upload, "UTC", now) })),
    );
    const groups = due.filter((g) => claimed.has(g.id));
    if (groups.length > 0) {
      const { results: members } = await d1
        .prepare(
          `SELECT a.id, a.tenant_id, a.source_group_id FROM assets a
           WHERE a.source_group_id IN (SELECT value FROM json_each(?1))`,
        )
        .bind(JSON.stringify(groups.map((g) => g.id)))
        .all<{ id: number; tenant_id: string; source_group_id: number }>();
      const slotOf = new Map(groups.map((g) => [g.id, g.next_run_at]));
      const jobs = members.map((a) => {
        const slot = slotOf.get(a.source_group_id)!;
        return { id: scheduledJobId(a.id, slot), tenant_id: a.tenant_id, asset_id: a.id, slot };
      });
      await send(await insertJobs(d1, jobs));
    }
    if (due.length < PAGE) break;
  }
  return { jobs: sent };
}

/** The first slot strictly after `now`; null when the expression can never fire again. */
function nextSlot(cron: string, timeZone: string, now: Date): string | null {
  try {
    return nextRunIso(cron, timeZone, now);
  } catch {
    return null;
  }
}
