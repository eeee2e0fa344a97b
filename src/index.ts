import { createApp } from "./app";
import { createDb } from "./db";
import type { Env } from "./env";
import { retryPendingTickets } from "./integrations/tickets";
import type { NotificationMessage, ScanQueueMessage } from "./jobs/messages";
import { consumeNotifications, markDeadDeliveries } from "./jobs/notification-consumer";
import { consumeScanJobs, failDeadScanJobs } from "./jobs/scan-consumer";
import { dispatchDueSchedules } from "./jobs/schedules";
import { requeueStrandedDeliveries } from "./notifications/events";
import { runRetention } from "./retention/retention";

export { AssetMonitor } from "./monitor/asset-monitor";

const app = createApp();

export default {
  fetch: app.fetch,

  /**
   * Every minute: due schedules become scan jobs, pending Jira tickets are retried, and
   * notification deliveries that never reached the queue are queued again.
   */
  async scheduled(controller, env) {
    const now = new Date(controller.scheduledTime);
    const { jobs } = await dispatchDueSchedules(env.DB, env.SCAN_JOBS, now);
    if (jobs > 0) console.log(JSON.stringify({ cron: controller.cron, scheduled_jobs: jobs }));
    await retryPendingTickets(env, now);
    const requeued = await requeueStrandedDeliveries(env, now);
    if (requeued > 0) console.log(JSON.stringify({ cron: controller.cron, requeued_deliveries: requeued }));
  },

  /** Queue consumers: scan jobs and notification deliveries, and the dead letters of each (retries exhausted). */
  async queue(batch, env) {
    switch (batch.queue) {
      case "scan-jobs":
        return consumeScanJobs(batch as MessageBatch<ScanQueueMessage>, env);
      case "scan-jobs-dlq":
        return failDeadScanJobs(batch as MessageBatch<ScanQueueMessage>, env);
      case "notifications":
        return consumeNotifications(batch as MessageBatch<NotificationMessage>, env);
      case "notifications-dlq":
        return markDeadDeliveries(batch as MessageBatch<NotificationMessage>, env);
      default:
        // A queue wrangler.toml consumes but this code does not: retried, never acknowledged unread.
        throw new Error(`no consumer for queue ${batch.queue}`);
    }
  },
} satisfies ExportedHandler<Env, ScanQueueMessage | NotificationMessage>;
