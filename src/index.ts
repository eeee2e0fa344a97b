import { createApp } from "./app";
import { consumeNotifications, markDeadNotifications } from "./consumers/notifications";
import { consumeScanJobs, failDeadScanJobs } from "./consumers/scan-jobs";
import { consumeScanResults, failDeadScanResults } from "./consumers/scan-results";
import type { NotificationMessage, ScanQueueMessage, ScanResultMessage } from "./contracts/messages";
import { createDb } from "./db";
import { shardDatabase, shardNumbers } from "./db/shards";
import type { Env } from "./env";
import { retryPendingTickets } from "./integrations/tickets";
import { queueKind } from "./jobs/queues";
import { dispatchDueSchedules } from "./jobs/schedules";
import { requeueStrandedDeliveries } from "./notifications/events";
import { pollSparkRuns } from "./pipeline/spark-runs";
import { moveHistoryTick } from "./retention/history-move";
import { runRetention } from "./retention/retention";
import { advanceMoves } from "./tenancy/shard-move";

export { AssetMonitor } from "./monitor/asset-monitor";

/**
 * The Worker's environment with `DB` standing for shard `n`'s database: for the cron jobs that
 * read and write the rows of one database at a time (every tenant of that shard). Those jobs look
 * nothing up in the directory (which only the real `DB` holds).
 */
function onShard(env: Env, n: number): Env {
  return n === 0 ? env : { ...env, DB: shardDatabase(env, n) };
}

/**
 * One shard's share of each minute: due schedules become scan jobs, running Spark runs are polled,
 * pending Jira tickets are retried and stranded notification deliveries queued again. In the first
 * hour of each UTC day, each tick also applies the data_ttl of its slice of tenants. Each tick moves
 * some assets' DQ scores and job markers from D1 into their objects (issue 38) while any are left.
 */
async function shardTick(env: Env, cron: string, now: Date, shard: number): Promise<void> {
  // Each step by itself: one step's failure is logged and retried at the next tick, the others go on.
  const step = async (name: string, work: () => Promise<unknown>) => {
    try {
      const report = await work();
      if (report !== undefined) console.log(JSON.stringify({ cron, shard, [name]: report }));
    } catch (err) {
      console.error(JSON.stringify({ cron, shard, step: name, error: String(err) }));
    }
  };
  const db = createDb(env.DB);
  await step("scheduled_jobs", async () => (await dispatchDueSchedules(env.DB, env.SCAN_JOBS, now)).jobs || undefined);
  await step("spark_runs", async () => {
    await pollSparkRuns(env, db, now);
  });
  await step("tickets", async () => {
    await retryPendingTickets(env, now);
  });
  await step("deliveries", async () => {
    await requeueStrandedDeliveries(env, db, now);
  });
  await step("retention", async () => {
    const retention = await runRetention(env, db, now);
    return retention && Object.keys(retention.deleted).length > 0 ? retention : undefined;
  });
  await step("history_move", async () => {
    const moved = await moveHistoryTick(env);
    return moved.assets > 0 ? moved : undefined;
  });
}

const app = createApp();

export default {
  fetch: app.fetch,

  /** Every minute, each shard's tick (shardTick). */
  async scheduled(controller, env) {
    const now = new Date(controller.scheduledTime);
    // Each shard's rows by themselves (src/db/shards.ts), each step of its tick by itself; a tenant
    // fenced while it moves is left out of every step (src/db/fences.ts).
    for (const shard of shardNumbers(env)) await shardTick(onShard(env, shard), controller.cron, now, shard);
    // Tenants moving between shards (`npm run shards -- move`): each move as far as it can go.
    const moves = await advanceMoves(env);
    if (moves.length > 0) console.log(JSON.stringify({ cron: controller.cron, shard_moves: moves }));
  },

  /**
   * Queue consumers: scan jobs, scan results and notifications, and their dead letters (messages
   * that exhausted their retries), told apart by kind whatever the deployment names them.
   */
  async queue(batch, env) {
    switch (queueKind(batch.queue, env)) {
      case "scan-jobs":
        return consumeScanJobs(batch as MessageBatch<ScanQueueMessage>, env);
      case "scan-jobs-dlq":
        return failDeadScanJobs(batch as MessageBatch<ScanQueueMessage>, env);
      case "scan-results":
        return consumeScanResults(batch as MessageBatch<ScanResultMessage>, env);
      case "scan-results-dlq":
        return failDeadScanResults(batch as MessageBatch<ScanResultMessage>, env);
      case "notifications":
        return consumeNotifications(batch as MessageBatch<NotificationMessage>, env);
      case "notifications-dlq":
        return markDeadNotifications(batch as MessageBatch<NotificationMessage>, env);
      default:
        // A queue wrangler.toml consumes but this code does not: retried, never acknowledged unread.
        throw new Error(`no consumer for queue ${batch.queue}`);
    }
  },
} satisfies ExportedHandler<Env, ScanQueueMessage | ScanResultMessage | NotificationMessage>;
