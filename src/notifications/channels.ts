/**
 * A tenant's notification channels: where incident events go (a Standard Webhooks receiver or a
 * Slack incoming webhook), which events, from which projects and from which severity up. The
 * receiver's URL is a credential (a Slack incoming-webhook URL, a token in a path or query lets
 * whoever holds it post into the channel): it is sealed at rest like the signing secret, and only
 * its scheme and host are kept in clear, which is all any read shows. The signing secret leaves
 * only once, in the answer to the request that made it.
 */

import { and, desc, eq, lt, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../db";
import { writeWith } from "../db/json-insert";
import {
  type ChannelType,
  type NotificationEvent,
  notificationChannels,
  notificationDeliveries,
  projects,
} from "../db/schema";
import { claimUnique, conflictOf, insertWithNextId } from "../db/unique";
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
  /** Replace: left out, or sent as read (scheme and host), the stored URL is kept. */
  url?: string | undefined;
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
 * What a channel shows of its URL, and keeps in clear: the scheme and host (with a port). The
 * path, query and user info may hold the credential, and are only in the sealed URL.
 */
export function urlHost(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
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

/** The ids of the tenant's projects (for projectsFound). */
const tenantProjects = (db: Db, tenantId: string) =>
  db.select({ id: projects.id }).from(projects).where(eq(projects.tenantId, tenantId));

/** A 400 naming the ids of `ids` that are no project of the tenant (`found`: its projects). */
function projectsFound(ids: number[], found: { id: number }[]): void {
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
  const rows = await db.query.notificationChannels.findMany({
    where: eq(notificationChannels.tenantId, tenantId),
    orderBy: notificationChannels.id,
  });
  return hostOnly(db, rows);
}

export async function getChannel(db: Db, tenantId: string, id: number): Promise<ChannelRow> {
  const row = await db.query.notificationChannels.findFirst({
    where: and(eq(notificationChannels.tenantId, tenantId), eq(notificationChannels.id, id)),
  });
  if (!row) throw new NotFoundError("Notification channel");
  return (await hostOnly(db, [row]))[0]!;
}

/**
 * The rows with only the scheme and host of their URL in clear. Migration 0012 cut every stored
 * URL down so; a row written meanwhile by a Worker of the version before (an upgrade rolls out
 * after the migration) still holds its path, and is cut down at rest when it is first read.
 */
async function hostOnly(db: Db, rows: ChannelRow[]): Promise<ChannelRow[]> {
  const stale = rows.filter((r) => urlHost(r.url) !== r.url);
  for (const row of stale) {
    await db
      .update(notificationChannels)
      .set({ url: urlHost(row.url) })
      .where(and(eq(notificationChannels.tenantId, row.tenantId), eq(notificationChannels.id, row.id)));
  }
  return stale.length === 0 ? rows : rows.map((r) => ({ ...r, url: urlHost(r.url) }));
}

/**
 * Creates a channel. A WEBHOOK channel without a secret gets a generated one; `secret` in the
 * result is the only time it is shown (undefined for Slack). The row is written whole in one
 * INSERT, its URL and secret already sealed for its id (insertWithNextId), with `after` (the
 * caller's statements that belong with it) in its batch. Two round trips: what the checks need and
 * the next id are read in one batch, since the secrets are sealed for the id before the INSERT.
 */
export async function createChannel(
  db: Db,
  box: SecretBox,
  policy: OutboundPolicy,
  tenantId: string,
  input: ChannelInput & { url: string },
  actor: string,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<{ row: ChannelRow; secret?: string }> {
  const url = checkUrl(input.url, policy);
  if (input.type === "SLACK" && input.secret !== undefined) {
    throw InvalidInputError.field("secret", "a Slack channel has no signing secret");
  }
  checkSecret(input.secret);
  const nextIdQuery = db
    .select({ id: sql<number>`coalesce(max(${notificationChannels.id}), 0) + 1` })
    .from(notificationChannels);
  const [found, existing, [firstId]] = await db.batch([
    tenantProjects(db, tenantId),
    db
      .select({ name: notificationChannels.name })
      .from(notificationChannels)
      .where(eq(notificationChannels.tenantId, tenantId)),
    nextIdQuery,
  ]);
  projectsFound(input.project_ids ?? [], found);
  if (existing.length >= MAX_CHANNELS_PER_TENANT) {
    throw new ConflictError(`A tenant has at most ${MAX_CHANNELS_PER_TENANT} notification channels`);
  }
  if (existing.some((c) => c.name === input.name)) throw new ConflictError(NAME_TAKEN);
  const secret = input.type === "WEBHOOK" ? (input.secret ?? generateSigningSecret()) : undefined;
  const now = nowIso();
  // The first try takes the id read with the checks; a clash reads it again.
  let proposed: number | undefined = firstId!.id;
  const nextId = async () => {
    const id = proposed ?? (await nextIdQuery)[0]!.id;
    proposed = undefined;
    return id;
  };
  try {
    const row = await insertWithNextId("notification_channels", nextId, async (id) => {
      const insert = db
        .insert(notificationChannels)
        .values({
          id,
          tenantId,
          ...(await channelColumns(box, id, input, url, secret)),
          createdBy: actor,
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      const [created] = await writeWith(db, insert, after);
      return created!;
    });
    return { row, ...(input.type === "WEBHOOK" && !input.secret ? { secret } : {}) };
  } catch (err) {
    throw conflictOf(err, NAME_TAKEN) ?? err;
  }
}

const NAME_TAKEN = "A notification channel with this name already exists";

/** What a create or a replace writes of a channel's input, its URL and secret sealed for the row `id`. */
async function channelColumns(
  box: SecretBox,
  id: number,
  input: ChannelInput,
  url: string,
  secret: string | undefined,
) {
  return {
    name: input.name,
    type: input.type,
    url: urlHost(url),
    ...(await sealSecrets(box, id, url, secret)),
    events: input.events ?? DEFAULT_EVENTS,
    minSeverity: input.min_severity ?? "LOW",
    projectIds: input.project_ids ?? [],
    enabled: input.enabled ?? true,
  };
}

/** The URL and the signing secret sealed for the row `id` (its additional data). */
async function sealSecrets(box: SecretBox, id: number, url: string, secret: string | undefined) {
  return {
    urlSecret: JSON.stringify(await box.seal(url, urlAad(id))),
    signingSecret: secret === undefined ? null : JSON.stringify(await box.seal(secret, secretAad(id))),
  };
}

/**
 * Replaces a channel. Its URL is kept when `url` is left out or sent as read (scheme and host);
 * any other `url` replaces it whole, so a stored path or query never goes to another host. A
 * WEBHOOK keeps its secret when none is sent, unless its host changes (the secret must be sent
 * again, as a connection's credential must) or it was a Slack channel before (one is generated
 * and returned once, as on create). Two round trips: the channel (with the tenant's projects,
 * side by side) is read before its secrets are opened and sealed again; the UPDATE, with `after`
 * in its batch, follows.
 */
export async function replaceChannel(
  db: Db,
  box: SecretBox,
  policy: OutboundPolicy,
  tenantId: string,
  id: number,
  input: ChannelInput,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<{ row: ChannelRow; secret?: string }> {
  const projectIds = input.project_ids ?? [];
  const found = projectIds.length > 0 ? tenantProjects(db, tenantId).then((rows) => rows) : Promise.resolve([]);
  found.catch(() => {});
  const current = await getChannel(db, tenantId, id);
  let stored: { url: string; secret?: string } | undefined;
  const opened = async () => {
    try {
      stored ??= await openChannel(box, current);
      return stored;
    } catch {
      throw InvalidInputError.field("url", "the stored URL and secret can no longer be opened: send them again");
    }
  };
  const keepUrl = input.url === undefined || input.url === current.url;
  const url = keepUrl ? (await opened()).url : checkUrl(input.url!, policy);
  if (input.type === "SLACK" && input.secret !== undefined) {
    throw InvalidInputError.field("secret", "a Slack channel has no signing secret");
  }
  checkSecret(input.secret);
  projectsFound(projectIds, await found);
  let secret: string | undefined;
  let generated = false;
  if (input.type === "WEBHOOK") {
    if (input.secret !== undefined) secret = input.secret;
    else if (current.type === "WEBHOOK" && current.signingSecret) {
      if (urlHost(url) !== current.url) {
        throw InvalidInputError.field(
          "secret",
          `must be sent again when the URL's host changes (from ${current.url}): a stored secret never follows a channel to another host`,
        );
      }
      secret = (await opened()).secret;
    } else {
      secret = generateSigningSecret();
      generated = true;
    }
  }
  const [row] = await claimUnique(
    writeWith(
      db,
      db
        .update(notificationChannels)
        .set({
          ...(await channelColumns(box, id, input, url, secret)),
          updatedAt: nowIso(),
        })
        .where(and(eq(notificationChannels.tenantId, tenantId), eq(notificationChannels.id, id)))
        .returning(),
      after,
    ),
    NAME_TAKEN,
  );
  if (!row) throw new NotFoundError("Notification channel");
  return { row, ...(generated ? { secret } : {}) };
}

/** The statement that deletes a tenant's channel where `allowed` holds, for the caller's batch. */
export function deleteChannelStatement(db: Db, tenantId: string, id: number, allowed?: SQL) {
  return db
    .delete(notificationChannels)
    .where(and(eq(notificationChannels.tenantId, tenantId), eq(notificationChannels.id, id), allowed))
    .returning({ id: notificationChannels.id });
}

/** The answer of deleteChannelStatement's rows: 404 when there was no such channel. */
export function channelDeleted(rows: readonly unknown[]): void {
  if (rows.length === 0) throw new NotFoundError("Notification channel");
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
