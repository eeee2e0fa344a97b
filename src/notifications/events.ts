/**
 * Incident events and failed scans become deliveries: one per event and matching channel (its
 * events, min_severity and project_ids), written to the delivery log and handed to the
 * notifications queue. An event is keyed (e.g. "incident:42:opened"), so publishing it again
 * (a replayed scan) adds nothing. Publishing never fails the caller: a scan is never held up or
 * failed by a notification, and a delivery the queue did not get is sent again by the cron.
 */

import { and, eq, inArray, lt } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { NotificationMessage } from "../contracts/messages";
import type { Db } from "../db";
import { unfenced } from "../db/fences";
import { writeWith } from "../db/json-insert";
import {
  assetPolicies,
  assets,
  type IncidentRow,
  incidents,
  type KeptAlert,
  type Level,
  type NotificationEvent,
  notificationChannels,
  notificationDeliveries,
  type ScanJobRow,
} from "../db/schema";
import type { SecretBox } from "../lib/crypto";
import { randomId } from "../lib/ids";
import type { OutboundPolicy } from "../lib/outbound";
import { nowIso } from "../lib/time";
import { type ChannelCheck, type ChannelRow, checkedChannel } from "./channels";
import { type SendResult, sendToChannel } from "./delivery";
import { channelTestPayload, incidentPayload, scanFailedPayload, type WebhookPayload } from "./payloads";

export interface PublishEnv {
  NOTIFICATIONS: Queue<NotificationMessage>;
  /** The service's public origin, for links in messages. */
  PUBLIC_BASE_URL?: string;
}

const DEFAULT_BASE_URL = "http://localhost:8787";
const RANK: Record<Level, number> = { LOW: 1, MEDIUM: 2, HIGH: 3 };
/** Queues take at most 100 messages per sendBatch. */
const SEND_BATCH = 100;

/** One incident event of a scan or a manual change. */
export interface IncidentEvent {
  type: Exclude<NotificationEvent, "scan.failed">;
  incidentId: number;
  /** The scan that caused it (its alerts of the incident go along); none for a manual change. */
  jobId?: string;
  /** Who closed the incident (incident.closed). */
  closedBy?: string;
  /** What makes the event unique, e.g. the job or the time of the change. */
  key: string;
}

/** A new delivery id: the Standard Webhooks message id, the same on every attempt. */
const newDeliveryId = () => `msg_${randomId(24)}`;

function wants(channel: ChannelRow, event: NotificationEvent, projectId: number, severity: Level | null): boolean {
  if (!channel.enabled || !channel.events.includes(event)) return false;
  if (channel.projectIds.length > 0 && !channel.projectIds.includes(projectId)) return false;
  return severity === null || RANK[severity] >= RANK[channel.minSeverity];
}

/**
 * The tenant's enabled channels, as a query (awaited alone, or carried by a batch: every scan asks
 * and most tenants have none, so the AssetMonitor reads them with the scan's other settings).
 */
export function enabledChannelsQuery(db: Db, tenantId: string) {
  return db
    .select()
    .from(notificationChannels)
    .where(and(eq(notificationChannels.tenantId, tenantId), eq(notificationChannels.enabled, true)));
}

interface NewDelivery {
  channel: ChannelRow;
  eventKey: string;
  payload: WebhookPayload;
}

/** Writes the deliveries not written before (by channel and event key) and queues them. */
async function deliver(env: PublishEnv, db: Db, tenantId: string, wanted: NewDelivery[]): Promise<number> {
  if (wanted.length === 0) return 0;
  const now = nowIso();
  const inserts = wanted.map((w) =>
    db
      .insert(notificationDeliveries)
      .values({
        id: newDeliveryId(),
        tenantId,
        channelId: w.channel.id,
        eventKey: w.eventKey,
        event: w.payload.type,
        payload: w.payload as unknown as Record<string, unknown>,
        status: "PENDING",
        attempts: 0,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: notificationDeliveries.id }),
  );
  const [first, ...rest] = inserts;
  const written = (await db.batch([first!, ...rest])).flat();
  await enqueue(
    env,
    tenantId,
    written.map((r) => r.id),
  );
  return written.length;
}

async function enqueue(env: PublishEnv, tenantId: string, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += SEND_BATCH) {
    await env.NOTIFICATIONS.sendBatch(
      ids
        .slice(i, i + SEND_BATCH)
        .map((id) => ({ body: { delivery_id: id, tenant_id: tenantId }, contentType: "json" as const })),
    );
  }
}

/** Logs and swallows a publishing failure: the event is lost to notifications, never the scan. */
function logged(what: string, context: Record<string, unknown>) {
  return (err: unknown) => {
    console.error(JSON.stringify({ event: "notification_publish_failed", what, ...context, error: String(err) }));
    return 0;
  };
}

/** The alerts a scan raised (kept in its asset's object, issue 38): what its events carry. */
export interface ScanAlerts {
  jobId: string;
  alerts: readonly KeptAlert[];
}

/**
 * Publishes incident events of one asset: each to the channels that want it, with the incident
 * as it is now, its asset, and the alerts the event's scan raised for it (`scan`: the monitor
 * hands them over; an event of another job carries none). `events` may be a function, called only
 * when the tenant has an enabled channel (finding the events may cost a read). `channels`: the
 * tenant's enabled channels when the caller read them already (enabledChannelsQuery).
 */
export function publishIncidentEvents(
  env: PublishEnv,
  db: Db,
  asset: { tenantId: string; id: number; name: string },
  events: IncidentEvent[] | (() => Promise<IncidentEvent[]>),
  channels?: ChannelRow[],
  scan?: ScanAlerts,
): Promise<number> {
  return publishIncidents(env, db, asset, events, channels, scan).catch(
    logged("incident events", { asset_id: asset.id }),
  );
}

async function publishIncidents(
  env: PublishEnv,
  db: Db,
  asset: { tenantId: string; id: number; name: string },
  eventsOrFind: IncidentEvent[] | (() => Promise<IncidentEvent[]>),
  known: ChannelRow[] | undefined,
  scan: ScanAlerts | undefined,
): Promise<number> {
  if (Array.isArray(eventsOrFind) && eventsOrFind.length === 0) return 0;
  const channels = known ?? (await enabledChannelsQuery(db, asset.tenantId));
  if (channels.length === 0) return 0;
  const events = Array.isArray(eventsOrFind) ? eventsOrFind : await eventsOrFind();
  if (events.length === 0) return 0;
  const ids = [...new Set(events.map((e) => e.incidentId))];
  const rows = await db.query.incidents.findMany({
    where: and(eq(incidents.tenantId, asset.tenantId), inArray(incidents.id, ids)),
  });
  const byId = new Map<number, IncidentRow>(rows.map((r) => [r.id, r]));
  const jobAlerts = (scan?.alerts ?? []).map((a) => ({ ...a, assetId: asset.id }));
  const at = nowIso();
  const baseUrl = env.PUBLIC_BASE_URL || DEFAULT_BASE_URL;
  const wanted: NewDelivery[] = [];
  for (const event of events) {
    const incident = byId.get(event.incidentId);
    if (!incident) continue;
    const targets = channels.filter((c) => wants(c, event.type, incident.projectId, incident.severity));
    if (targets.length === 0) continue;
    const eventAlerts = jobAlerts.filter(
      (a) =>
        event.jobId !== undefined &&
        a.jobId === event.jobId &&
        a.type === incident.policy &&
        a.attribute === incident.attribute,
    );
    if (
      event.type !== "incident.closed" &&
      eventAlerts.length > 0 &&
      eventAlerts.every((a) => !a.isNotificationEnabled)
    ) {
      continue;
    }
    const payload = incidentPayload(event.type, {
      baseUrl,
      at,
      incident,
      alerts: eventAlerts,
      assetName: asset.name,
      ...(event.closedBy !== undefined ? { closedBy: event.closedBy } : {}),
    });
    for (const channel of targets) wanted.push({ channel, eventKey: event.key, payload });
  }
  return deliver(env, db, asset.tenantId, wanted);
}

/**
 * Publishes scan.failed for a job that ended FAILED (its row as the end left it: the job has left
 * D1 for its asset's object), unless its asset's notifications are muted.
 */
export function publishScanFailed(env: PublishEnv, db: Db, job: ScanJobRow): Promise<number> {
  return publishFailed(env, db, job).catch(logged("scan.failed", { job_id: job.id }));
}

async function publishFailed(env: PublishEnv, db: Db, job: ScanJobRow): Promise<number> {
  const channels = await enabledChannelsQuery(db, job.tenantId);
  if (channels.length === 0) return 0;
  const [asset, settings] = await Promise.all([
    db.query.assets.findFirst({
      where: and(eq(assets.tenantId, job.tenantId), eq(assets.id, job.assetId)),
      columns: { id: true, name: true, projectId: true },
    }),
    db.query.assetPolicies.findFirst({
      where: and(eq(assetPolicies.tenantId, job.tenantId), eq(assetPolicies.assetId, job.assetId)),
      columns: { notify: true },
    }),
  ]);
  if (!asset || settings?.notify === false) return 0;
  const targets = channels.filter((c) => wants(c, "scan.failed", asset.projectId, null));
  const payload = scanFailedPayload({
    baseUrl: env.PUBLIC_BASE_URL || DEFAULT_BASE_URL,
    at: nowIso(),
    tenantId: job.tenantId,
    asset: { id: asset.id, name: asset.name, project_id: asset.projectId },
    job: {
      id: job.id,
      kind: job.kind,
      error: job.error,
      createdAt: job.createdAt,
      finishedAt: job.finishedAt,
    },
  });
  return deliver(
    env,
    db,
    job.tenantId,
    targets.map((channel) => ({ channel, eventKey: `job:${job.id}:failed`, payload })),
  );
}

/**
 * Queues again the deliveries that were written but never reached the queue (no attempt after
 * `graceMinutes`): the cron's safety net for a send that failed after the log row was written.
 */
export async function requeueStrandedDeliveries(
  env: PublishEnv,
  db: Db,
  now: Date,
  graceMinutes = 10,
): Promise<number> {
  const before = new Date(now.getTime() - graceMinutes * 60_000).toISOString();
  const stranded = await db
    .select({ id: notificationDeliveries.id, tenantId: notificationDeliveries.tenantId })
    .from(notificationDeliveries)
    .where(
      and(
        eq(notificationDeliveries.status, "PENDING"),
        eq(notificationDeliveries.attempts, 0),
        lt(notificationDeliveries.updatedAt, before),
        unfenced(notificationDeliveries.tenantId),
      ),
    )
    .limit(500);
  const stamp = now.toISOString();
  for (const row of stranded) {
    await db
      .update(notificationDeliveries)
      .set({ updatedAt: stamp })
      .where(and(eq(notificationDeliveries.id, row.id), eq(notificationDeliveries.status, "PENDING")));
    await enqueue(env, row.tenantId, [row.id]);
  }
  return stranded.length;
}

/**
 * Sends a test event to a channel now, once, and records it in the channel's log (with `after`,
 * the caller's statements that belong with it, in the same batch): the answer is the receiver's.
 * Two round trips, the floor: `check` (the caller's access) and the channel are read in one batch
 * before the receiver is called (its URL and secret are sealed in that row), the delivery (what
 * the receiver answered) written after.
 */
export async function testChannel(
  db: Db,
  box: SecretBox,
  policy: OutboundPolicy,
  tenantId: string,
  channelId: number,
  after: readonly BatchItem<"sqlite">[] = [],
  check?: ChannelCheck,
): Promise<SendResult & { webhookId: string }> {
  const { channel } = await checkedChannel(db, tenantId, channelId, check);
  const webhookId = newDeliveryId();
  const at = nowIso();
  const payload = channelTestPayload({ id: channel.id, name: channel.name }, at);
  const result = await sendToChannel(box, policy, channel, webhookId, payload);
  const delivery = db.insert(notificationDeliveries).values({
    id: webhookId,
    tenantId,
    channelId,
    eventKey: `test:${webhookId}`,
    event: payload.type,
    payload: payload as unknown as Record<string, unknown>,
    status: result.delivered ? "DELIVERED" : "FAILED",
    attempts: 1,
    lastStatusCode: result.statusCode,
    lastError: result.error,
    createdAt: at,
    updatedAt: nowIso(),
  });
  await writeWith(db, delivery, after);
  return { ...result, webhookId };
}
