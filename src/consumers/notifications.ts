import type { NotificationMessage } from "../contracts/messages";
import { createDb } from "../db";
import { tenantDatabase } from "../db/shards";
import type { Env } from "../env";
import { attemptDelivery, markDead, retryDelaySeconds } from "../notifications/delivery";

/**
 * Consumer of `notifications`: one attempt per message. A transient failure (429, 5xx, timeout,
 * network) is retried by the queue after the delivery's backoff; after the queue's max_retries the
 * message goes to `notifications-dlq`.
 */
export async function consumeNotifications(batch: MessageBatch<NotificationMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const { delivery_id, tenant_id } = message.body;
    try {
      const db = createDb(await tenantDatabase(env, tenant_id));
      const outcome = await attemptDelivery(env, db, delivery_id, tenant_id);
      if (outcome.retry) message.retry({ delaySeconds: outcome.delaySeconds });
      else message.ack();
    } catch (err) {
      // Our own storage failed before the attempt was recorded: try again later.
      console.error(JSON.stringify({ delivery_id, error: String(err) }));
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}

/** Consumer of `notifications-dlq`: a delivery whose retries are exhausted is DEAD in its channel's log. */
export async function markDeadNotifications(batch: MessageBatch<NotificationMessage>, env: Env): Promise<void> {
  // Each tenant's deliveries on the tenant's shard.
  const byTenant = new Map<string, string[]>();
  for (const m of batch.messages)
    byTenant.set(m.body.tenant_id, [...(byTenant.get(m.body.tenant_id) ?? []), m.body.delivery_id]);
  for (const [tenantId, deliveryIds] of byTenant) {
    await markDead(createDb(await tenantDatabase(env, tenantId)), deliveryIds);
  }
  batch.ackAll();
}
