import { createApp } from "./app";
import type { Env } from "./env";
import { retryPendingTickets } from "./integrations/tickets";
import type { ScanQueueMessage } from "./jobs/messages";
import { consumeScanJobs, failDeadScanJobs } from "./jobs/scan-consumer";
import { dispatchDueSchedules } from "./jobs/schedules";

export { AssetMonitor } from "./monitor/asset-monitor";

const app = createApp();

export default {
  fetch: app.fetch,

  /** Every minute: due schedules become scan jobs, and pending Jira tickets are retried. */
  async scheduled(controller, env) {
    const now = new Date(controller.scheduledTime);
    const { jobs } = await dispatchDueSchedules(env.DB, env.SCAN_JOBS, now);
    if (jobs > 0) console.log(JSON.stringify({ cron: controller.cron, scheduled_jobs: jobs }));
    await retryPendingTickets(env, now);
  },

  /** Queue consumers: scan jobs, and their dead letters (jobs that exhausted their retries). */
  async queue(batch, env) {
    switch (batch.queue) {
      case "scan-jobs":
        return consumeScanJobs(batch as MessageBatch<ScanQueueMessage>, env);
      case "scan-jobs-dlq":
        return failDeadScanJobs(batch as MessageBatch<ScanQueueMessage>, env);
      default:
        // A queue wrangler.toml consumes but this code does not: retried, never acknowledged unread.
        throw new Error(`no consumer for queue ${batch.queue}`);
    }
  },
} satisfies ExportedHandler<Env, ScanQueueMessage>;
