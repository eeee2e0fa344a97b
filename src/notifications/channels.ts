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
import { insertWhere, writeWith } from "../db/json-insert";
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
import { inJsonList } from "../lib/sql";
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

/**
 * The additional data a sealed value is bound to: another row's ciphertext does not open here. A
 * value is sealed for a seal id (random, unique among channels: `seal_id`), chosen before the row
 * is written so the row is whole in its one INSERT; one sealed before seal ids (seal_id null) for
 * the row id.
 */
type SealedFor = Pick<ChannelRow, "id" | "sealId">;
const sealedFor = (row: SealedFor) => (row.sealId === null ? `${row.id}` : `seal:${row.sealId}`);
const urlAad = (row: SealedFor) => `notification_channel:${sealedFor(row)}:url`;
const secretAad = (row: SealedFor) => `notification_channel:${sealedFor(row)}:secret`;

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
function projectsFound(ids: number[], found: readonly { id: number }[]): void {
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
  return channelFound(db, await channelQuery(db, tenantId, id));
}

/** getChannel's query (at most one row), for a batch; channelFound answers its rows. */
export function channelQuery(db: Db, tenantId: string, id: number) {
  return db
    .select()
    .from(notificationChannels)
    .where(and(eq(notificationChannels.tenantId, tenantId), eq(notificationChannels.id, id)))
    .limit(1);
}

/** The channel channelQuery read, its URL cut to scheme and host (hostOnly); 404 when none. */
export async function channelFound(db: Db, rows: readonly ChannelRow[]): Promise<ChannelRow> {
  if (!rows[0]) throw new NotFoundError("Notification channel");
  return (await hostOnly(db, [rows[0]]))[0]!;
}

/**
 * The caller's access check, run in the batch that reads the channel: `read` first, its rows
 * answered by `settle` before anything read beside it is.
 */
export interface ChannelCheck {
  read: BatchItem<"sqlite">;
  settle: (rows: unknown) => void;
}

/** A statement that reads nothing, where a batch has no check to run. */
const readsNothing = (db: Db) => db.select({ none: sql`0` }).from(sql`(select 0)`).where(sql`0`);

/**
 * The channel (and the tenant's projects when `withProjects`), read in one batch after `check`,
 * which is settled first: one round trip for the check and the reads.
 */
export async function checkedChannel(
  db: Db,
  tenantId: string,
  id: number,
  check: ChannelCheck | undefined,
  withProjects = false,
): Promise<{ channel: ChannelRow; projects: { id: number }[] }> {
  const [checked, rows, found] = await db.batch([
    check?.read ?? readsNothing(db),
    channelQuery(db, tenantId, id),
    withProjects ? tenantProjects(db, tenantId) : readsNothing(db),
  ]);
  check?.settle(checked);
  return { channel: await channelFound(db, rows as ChannelRow[]), projects: found as { id: number }[] };
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
 * The statements that create a channel, for the caller's batch with its access check (`allowed`
 * holds in the INSERT's condition). A WEBHOOK channel without a secret gets a generated one;
 * `secret` is the only time it is shown (undefined for Slack). The row is written whole in one
 * INSERT, its URL and secret sealed for a new seal id and its id chosen in the INSERT (max + 1);
 * the INSERT writes only if every project named is the tenant's and the tenant has room for one
 * more channel, which `channelCreated` tells apart from the batch's reads. Bad input is thrown
 * before any statement is built; `claim` maps the failure of the batch on the name's unique index
 * to the 409.
 */
export async function createChannelStatements(
  db: Db,
  box: SecretBox,
  policy: OutboundPolicy,
  tenantId: string,
  input: ChannelInput & { url: string },
  actor: string,
  allowed: SQL | undefined,
) {
  const url = checkUrl(input.url, policy);
  if (input.type === "SLACK" && input.secret !== undefined) {
    throw InvalidInputError.field("secret", "a Slack channel has no signing secret");
  }
  checkSecret(input.secret);
  const secret = input.type === "WEBHOOK" ? (input.secret ?? generateSigningSecret()) : undefined;
  const projectIds = input.project_ids ?? [];
  const now = nowIso();
  const found = tenantProjects(db, tenantId);
  const count = db
    .select({ n: sql<number>`count(*)` })
    .from(notificationChannels)
    .where(eq(notificationChannels.tenantId, tenantId));
  const projectsNamed = db
    .select({ n: sql<number>`count(*)` })
    .from(projects)
    .where(and(eq(projects.tenantId, tenantId), inJsonList(projects.id, projectIds)));
  const insert = insertWhere(
    db,
    notificationChannels,
    {
      tenantId,
      ...(await channelColumns(box, input, url, secret)),
      createdBy: actor,
      createdAt: now,
      updatedAt: now,
    },
    and(
      allowed,
      projectIds.length > 0 ? sql`(${projectsNamed}) = ${new Set(projectIds).size}` : undefined,
      sql`(${count}) < ${MAX_CHANNELS_PER_TENANT}`,
    ),
  ).returning();
  const claim = (batch: Promise<unknown[]>) => claimUnique(batch, NAME_TAKEN);
  return { found, insert, claim, secret: input.type === "WEBHOOK" && !input.secret ? secret : undefined };
}

/**
 * The channel createChannelStatements inserted, once the batch has shown the caller's access (its
 * reads `found`, the tenant's projects): none inserted is a project that is not the tenant's (400)
 * or a tenant with no room for one more channel (409).
 */
export function channelCreated(
  input: ChannelInput,
  found: readonly { id: number }[],
  inserted: readonly ChannelRow[],
): ChannelRow {
  if (inserted[0]) return inserted[0];
  projectsFound(input.project_ids ?? [], found);
  throw new ConflictError(`A tenant has at most ${MAX_CHANNELS_PER_TENANT} notification channels`);
}

const NAME_TAKEN = "A notification channel with this name already exists";

/** What a create or a replace writes of a channel's input, its URL and secret sealed for a new seal id. */
async function channelColumns(box: SecretBox, input: ChannelInput, url: string, secret: string | undefined) {
  return {
    name: input.name,
    type: input.type,
    url: urlHost(url),
    ...(await sealSecrets(box, url, secret)),
    events: input.events ?? DEFAULT_EVENTS,
    minSeverity: input.min_severity ?? "LOW",
    projectIds: input.project_ids ?? [],
    enabled: input.enabled ?? true,
  };
}

/** The URL and the signing secret sealed for a new seal id (their additional data), and that id. */
async function sealSecrets(box: SecretBox, url: string, secret: string | undefined) {
  const row = { id: 0, sealId: crypto.randomUUID() };
  return {
    urlSecret: JSON.stringify(await box.seal(url, urlAad(row))),
    signingSecret: secret === undefined ? null : JSON.stringify(await box.seal(secret, secretAad(row))),
    sealId: row.sealId,
  };
}

/**
 * Replaces a channel. Its URL is kept when `url` is left out or sent as read (scheme and host);
 * any other `url` replaces it whole, so a stored path or query never goes to another host. A
 * WEBHOOK keeps its secret when none is sent, unless its host changes (the secret must be sent
 * again, as a connection's credential must) or it was a Slack channel before (one is generated
 * and returned once, as on create). Two round trips: `check` (the caller's access), the channel
 * and the tenant's projects are read in one batch before the stored URL and secret are opened and
 * sealed again for a new seal id (a kept secret is bound to the stored seal id, which only that
 * read gives); the UPDATE, with `after` in its batch, follows.
 */
export async function replaceChannel(
  db: Db,
  box: SecretBox,
  policy: OutboundPolicy,
  tenantId: string,
  id: number,
  input: ChannelInput,
  after: readonly BatchItem<"sqlite">[] = [],
  check?: ChannelCheck,
): Promise<{ row: ChannelRow; secret?: string }> {
  const projectIds = input.project_ids ?? [];
  const { channel: current, projects: found } = await checkedChannel(db, tenantId, id, check, projectIds.length > 0);
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
  projectsFound(projectIds, found);
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
          ...(await channelColumns(box, input, url, secret)),
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
  const url = await box.open<string>(JSON.parse(row.urlSecret) as SealedSecret, urlAad(row));
  if (!row.signingSecret) return { url };
  const secret = await box.open<string>(JSON.parse(row.signingSecret) as SealedSecret, secretAad(row));
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
