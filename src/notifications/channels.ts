/**
 * A tenant's notification channels: where incident events go (a Standard Webhooks receiver or a
 * Slack incoming webhook), which events, from which projects and from which severity up. The
 * receiver's URL and the signing secret are sealed at rest; the secret leaves only once, in the
 * answer to the request that made it.
 */

import { and, desc, eq, lt, or } from "drizzle-orm";
import type { Db } from "../db";
import {
  type ChannelType,
  type NotificationEvent,
  notificationChannels,
  notificationDeliveries,
  projects,
} from "../db/schema";
import { claimUnique } from "../db/unique";
import type { SealedSecret, SecretBox } from "../lib/crypto";
import { ConflictError, InvalidInputError, NotFoundError } from "../lib/errors";
import { checkOutboundUrl, type OutboundPolicy, OutboundTargetError } from "../lib/outbound";
import { nowIso } from "../lib/time";
import { generateSigningSecret, signingKeyOf } from "./signature";

export type ChannelRow = typeof notificationChannels.$inferSelect;
export type DeliveryRow = typeof notificationDeliveries.$inferSelect;
export type Severity = "LOW" | "MEDIUM" | "HIGH";

/** Events a channel gets when it does not say. */
export const DEFAULT_EVENTS: NotificationEvent[] = ["incident.opened", "incident.escalated"];
/** Channels per tenant: each event is one delivery per channel. */
export const MAX_CHANNELS_PER_TENANT = 50;

export interface ChannelInput {
  name: string;
  type: ChannelType;
  url: string;
  secret?: string | undefined;
  events?: NotificationEvent[] | undefined;
  min_severity?: Severity | undefined;
  project_ids?: number[] | undefined;
  enabled?: boolean | undefined;
}

/** The additional data a sealed value is bound to: another row's ciphertext does not open here. */
const urlAad = (id: number) => `notification_channel:${id}:url`;
const secretAad = (id: number) => `notification_channel:${id}:secret`;

/**
 * The URL as readers see it: a Slack incoming-webhook URL is itself the credential, so its path
 * past the first segment is masked; a webhook's query values are masked (tokens ride there).
 */
export function shownUrl(type: ChannelType, url: string): string {
  const u = new URL(url);
  if (type === "SLACK") {
    const [first] = u.pathname.split("/").filter(Boolean);
    return `${u.origin}/${first ?? ""}/…`;
  }
  for (const key of [...u.searchParams.keys()]) u.searchParams.set(key, "…");
  u.username = "";
  u.password = "";
  return u.toString();
}

/** Checks the receiver's URL against the deployment's outbound policy (https, public host), naming the field. */
function checkUrl(url: string, policy: OutboundPolicy): string {
  try {
    return checkOutboundUrl(url, policy, { credentials: true }).toString();
  } catch (err) {
    if (err instanceof OutboundTargetError)
      throw InvalidInputError.field("url", err.message.replace(/^the endpoint/, "the URL"));
    throw err;
  }
}

async function checkProjects(db: Db, tenantId: string, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  const found = await db.query.projects.findMany({
    where: eq(projects.tenantId, tenantId),
    columns: { id: true },
  });
  const known = new Set(found.map((p) => p.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length > 0)
    throw InvalidInputError.field("project_ids", `no such project in this tenant: ${missing.join(", ")}`);
}

function checkSecret(secret: string | undefined): void {
  if (secret !== undefined && !signingKeyOf(secret)) {
    throw InvalidInputError.field("secret", "must be whsec_ followed by the base64 of 24 to 64 random bytes");
  }
}

export async function listChannels(db: Db, tenantId: string): Promise<ChannelRow[]> {
  return db.query.notificationChannels.findMany({
    where: eq(notificationChannels.tenantId, tenantId),
    orderBy: notificationChannels.id,
  });
}

export async function getChannel(db: Db, tenantId: string, id: number): Promise<ChannelRow> {
  const row = await db.query.notificationChannels.findFirst({
    where: and(eq(notificationChannels.tenantId, tenantId), eq(notificationChannels.id, id)),
  });
  if (!row) throw new NotFoundError("Notification channel");
  return row;
}

/**
 * Creates a channel. A WEBHOOK channel without a secret gets a generated one; `secret` in the
 * result is the only time it is shown (undefined for Slack).
 */
export async function createChannel(
  db: Db,
  box: SecretBox,
  policy: OutboundPolicy,
  tenantId: string,
  input: ChannelInput,
  actor: string,
): Promise<{ row: ChannelRow; secret?: string }> {
  const url = checkUrl(input.url, policy);
  if (input.type === "SLACK" && input.secret !== undefined) {
    throw InvalidInputError.field("secret", "a Slack channel has no signing secret");
  }
  checkSecret(input.secret);
  await checkProjects(db, tenantId, input.project_ids ?? []);
  const existing = await listChannels(db, tenantId);
  if (existing.length >= MAX_CHANNELS_PER_TENANT) {
    throw new ConflictError(`A tenant has at most ${MAX_CHANNELS_PER_TENANT} notification channels`);
  }
  if (existing.some((c) => c.name === input.name)) {
    throw new ConflictError("A notification channel with this name already exists");
  }
  const secret = input.type === "WEBHOOK" ? (input.secret ?? generateSigningSecret()) : undefined;
  const now = nowIso();
  // The id is the sealing's additional data, so the row is made first with placeholders.
  const [created] = await claimUnique(
    db
      .insert(notificationChannels)
      .values({
        tenantId,
        name: input.name,
        type: input.type,
        url: shownUrl(input.type, url),
        urlSecret: "",
        signingSecret: null,
        events: input.events ?? DEFAULT_EVENTS,
        minSeverity: input.min_severity ?? "LOW",
        projectIds: input.project_ids ?? [],
        enabled: input.enabled ?? true,
        createdBy: actor,
        createdAt: now,
        updatedAt: now,
      })
      .returning(),
    "A notification channel with this name already exists",
  );
  const row = created!;
  const sealed = await sealSecrets(box, row.id, url, secret);
  const [updated] = await db
    .update(notificationChannels)
    .set(sealed)
    .where(eq(notificationChannels.id, row.id))
    .returning();
  return { row: updated ?? { ...row, ...sealed }, ...(input.type === "WEBHOOK" && !input.secret ? { secret } : {}) };
}

async function sealSecrets(box: SecretBox, id: number, url: string, secret: string | undefined) {
  return {
    urlSecret: JSON.stringify(await box.seal(url, urlAad(id))),
    signingSecret: secret === undefined ? null : JSON.stringify(await box.seal(secret, secretAad(id))),
  };
}

/**
 * Replaces a channel. A WEBHOOK keeps its secret when none is sent, unless it was a Slack channel
 * before: then one is generated and returned once, as on create.
 */
export async function replaceChannel(
  db: Db,
  box: SecretBox,
  policy: OutboundPolicy,
  tenantId: string,
  id: number,
  input: ChannelInput,
): Promise<{ row: ChannelRow; secret?: string }> {
  const current = await getChannel(db, tenantId, id);
  const url = checkUrl(input.url, policy);
  if (input.type === "SLACK" && input.secret !== undefined) {
    throw InvalidInputError.field("secret", "a Slack channel has no signing secret");
  }
  checkSecret(input.secret);
  await checkProjects(db, tenantId, input.project_ids ?? []);
  let secret: string | undefined;
  let generated = false;
  if (input.type === "WEBHOOK") {
    if (input.secret !== undefined) secret = input.secret;
    else if (current.type === "WEBHOOK" && current.signingSecret) {
      secret = await box.open<string>(JSON.parse(current.signingSecret) as SealedSecret, secretAad(id));
    } else {
      secret = generateSigningSecret();
      generated = true;
    }
  }
  const [row] = await claimUnique(
    db
      .update(notificationChannels)
      .set({
        name: input.name,
        type: input.type,
        url: shownUrl(input.type, url),
        ...(await sealSecrets(box, id, url, secret)),
        events: input.events ?? DEFAULT_EVENTS,
        minSeverity: input.min_severity ?? "LOW",
        projectIds: input.project_ids ?? [],
        enabled: input.enabled ?? true,
        updatedAt: nowIso(),
      })
      .where(and(eq(notificationChannels.tenantId, tenantId), eq(notificationChannels.id, id)))
      .returning(),
    "A notification channel with this name already exists",
  );
  if (!row) throw new NotFoundError("Notification channel");
  return { row, ...(generated ? { secret } : {}) };
}

export async function deleteChannel(db: Db, tenantId: string, id: number): Promise<void> {
  const deleted = await db
    .delete(notificationChannels)
    .where(and(eq(notificationChannels.tenantId, tenantId), eq(notificationChannels.id, id)))
    .returning({ id: notificationChannels.id });
  if (deleted.length === 0) throw new NotFoundError("Notification channel");
}

/** The receiver's full URL and the signing secret, opened for a delivery. */
export async function openChannel(box: SecretBox, row: ChannelRow): Promise<{ url: string; secret?: string }> {
  const url = await box.open<string>(JSON.parse(row.urlSecret) as SealedSecret, urlAad(row.id));
  if (!row.signingSecret) return { url };
  const secret = await box.open<string>(JSON.parse(row.signingSecret) as SealedSecret, secretAad(row.id));
  return { url, secret };
}

/** A channel's deliveries, newest first, `limit + 1` rows after the cursor key (created_at, id). */
export async function listDeliveries(
  db: Db,
  tenantId: string,
  channelId: number,
  limit: number,
  after?: [string, string],
): Promise<DeliveryRow[]> {
  await getChannel(db, tenantId, channelId);
  const page = after
    ? or(
        lt(notificationDeliveries.createdAt, after[0]),
        and(eq(notificationDeliveries.createdAt, after[0]), lt(notificationDeliveries.id, after[1])),
      )
    : undefined;
  return db
    .select()
    .from(notificationDeliveries)
    .where(and(eq(notificationDeliveries.tenantId, tenantId), eq(notificationDeliveries.channelId, channelId), page))
    .orderBy(desc(notificationDeliveries.createdAt), desc(notificationDeliveries.id))
    .limit(limit + 1);
}
