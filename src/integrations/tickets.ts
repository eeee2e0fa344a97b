import { and, asc, eq, exists, isNull, lte, not, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { createDb, type Db } from "../db";
import { unfenced } from "../db/fences";
import { insertWhere } from "../db/json-insert";
import type { IncidentRow, JiraIntegrationRow, TicketRequestRow, TicketTemplateRow } from "../db/schema";
import { incidents, jiraIntegrations, ticketRequests, ticketTemplates } from "../db/schema";
import { type ShardEnv, tenantDatabase } from "../db/shards";
import { type SealedSecret, type SecretBox, secretBox } from "../lib/crypto";
import { ConflictError, InvalidInputError, NotFoundError } from "../lib/errors";
import { randomId } from "../lib/ids";
import { checkOutboundUrl, type OutboundPolicy, OutboundTargetError, outboundPolicy } from "../lib/outbound";
import { deploymentOutboundPolicy } from "../lib/outbound-fetch";
import { excerpt } from "../lib/redact";
import type { JiraProps } from "../settings/tickets";
import { adf, createJiraIssue, JIRA_SUMMARY_MAX, type JiraIssueFields, type JiraOutcome, jiraError } from "./jira";

/** Attempts before a request that keeps failing (429, 5xx, network) is reported FAILED. */
export const MAX_TICKET_ATTEMPTS = 8;
/** Backoff after the n-th failed attempt: 1 min, 2, 4 … capped at 1 hour (or Jira's Retry-After, if longer). */
const BACKOFF_BASE_MS = 60_000;
const BACKOFF_MAX_MS = 3_600_000;
/** Requests retried per cron run, so one run stays well inside its time budget. */
const RETRIES_PER_RUN = 25;

/** The sealed API token opens only in its tenant's integration row. */
const tokenAad = (tenantId: string) => `jira:${tenantId}`;

export interface JiraIntegrationInput {
  base_url: string;
  email: string;
  /** Write-only; may be left out when replacing an integration, to keep the stored token. */
  api_token?: string;
  default_template_id?: number | null;
}

/** The tenant's Jira integration, or a 404. */
export async function getJiraIntegration(db: Db, tenantId: string): Promise<JiraIntegrationRow> {
  const row = await db.query.jiraIntegrations.findFirst({ where: eq(jiraIntegrations.tenantId, tenantId) });
  if (!row) throw new NotFoundError("Jira integration");
  return row;
}

/** The 400 of a template id that is none of the tenant's, at `field`. */
function templateMissing(field: string) {
  return new InvalidInputError([{ field, message: "no ticket template of this tenant has this id" }]);
}

/**
 * Creates or replaces the tenant's integration; the token is sealed, bound to the tenant.
 * `base_url` must be one the outbound policy lets the token go to (https, a public host) —
 * default policy: the deployment's (ALLOW_PRIVATE_TARGETS). One batch: the current row is read
 * first, and the write holds what the checks on it need (a kept token stays with its base_url, a
 * default template is the tenant's), so the answer comes from the state the write saw: 201 when
 * there was no row. `alongside` gives the caller's statements that belong with the write (e.g. its
 * audit row), run just before it, from the conditions under which it will create or replace.
 */
export async function putJiraIntegration(
  db: Db,
  box: SecretBox,
  tenantId: string,
  input: JiraIntegrationInput,
  policy: OutboundPolicy = deploymentOutboundPolicy(),
  alongside: (will: { create: SQL; replace: SQL }) => BatchItem<"sqlite">[] = () => [],
) {
  try {
    checkOutboundUrl(input.base_url, policy);
  } catch (err) {
    if (!(err instanceof OutboundTargetError)) throw err;
    throw new InvalidInputError([{ field: "base_url", message: err.message }]);
  }
  const templateId = input.default_template_id ?? null;
  const templateOk =
    templateId === null
      ? sql`1`
      : exists(
          db
            .select({ id: ticketTemplates.id })
            .from(ticketTemplates)
            .where(and(eq(ticketTemplates.tenantId, tenantId), eq(ticketTemplates.id, templateId))),
        );
  const values = {
    baseUrl: input.base_url,
    email: input.email,
    defaultTemplateId: templateId,
    updatedAt: new Date().toISOString(),
  };
  const current = db.select().from(jiraIntegrations).where(eq(jiraIntegrations.tenantId, tenantId)).limit(1);
  // Without a token, the stored one is kept: only where the row is there, for the same Jira site.
  const write =
    input.api_token === undefined
      ? db
          .update(jiraIntegrations)
          .set(values)
          .where(and(eq(jiraIntegrations.tenantId, tenantId), eq(jiraIntegrations.baseUrl, input.base_url), templateOk))
          .returning()
      : insertWhere(
          db,
          jiraIntegrations,
          { tenantId, ...values, tokenSecret: JSON.stringify(await box.seal(input.api_token, tokenAad(tenantId))) },
          templateOk,
        )
          .onConflictDoUpdate({
            target: jiraIntegrations.tenantId,
            set: { ...values, tokenSecret: sql`excluded.token_secret` },
          })
          .returning();
  const there = exists(
    db.select({ one: sql`1` }).from(jiraIntegrations).where(eq(jiraIntegrations.tenantId, tenantId)),
  );
  const sameSite = exists(
    db
      .select({ one: sql`1` })
      .from(jiraIntegrations)
      .where(and(eq(jiraIntegrations.tenantId, tenantId), eq(jiraIntegrations.baseUrl, input.base_url))),
  );
  const will =
    input.api_token === undefined
      ? { create: sql`0`, replace: and(sameSite, templateOk)! }
      : { create: and(not(there), templateOk)!, replace: and(there, templateOk)! };
  const [[before], ...rest] = await db.batch([current, ...alongside(will), write] as unknown as [
    typeof current,
    ...BatchItem<"sqlite">[],
  ]);
  const [row] = rest[rest.length - 1] as Awaited<typeof write>;
  if (!row) {
    if (input.api_token === undefined && !before) {
      throw new InvalidInputError([{ field: "api_token", message: "is required when the integration is created" }]);
    }
    if (input.api_token === undefined && before && before.baseUrl !== input.base_url) {
      // The stored token goes only to the Jira site it was entered for.
      throw new InvalidInputError([{ field: "api_token", message: "is required when base_url changes" }]);
    }
    throw new InvalidInputError([
      { field: "default_template_id", message: "no ticket template of this tenant has this id" },
    ]);
  }
  return { row, created: !before };
}

/** The statement that removes the tenant's Jira integration where `allowed` holds, for the caller's batch. */
export function deleteJiraIntegrationStatement(db: Db, tenantId: string, allowed?: SQL) {
  return db
    .delete(jiraIntegrations)
    .where(and(eq(jiraIntegrations.tenantId, tenantId), allowed))
    .returning({ t: jiraIntegrations.tenantId });
}

/** The answer of deleteJiraIntegrationStatement's rows: 404 when there was none. */
export function jiraIntegrationDeleted(rows: readonly unknown[]): void {
  if (rows.length === 0) throw new NotFoundError("Jira integration");
}

/** The summary of an incident's issue: severity, policy, attribute and source, within Jira's 255. */
export function ticketSummary(i: IncidentRow): string {
  const on = i.attribute ? ` on ${i.attribute}` : "";
  const text = `[${i.severity}] ${i.policyName}${on} in ${i.sourceName}`;
  return text.length <= JIRA_SUMMARY_MAX ? text : `${text.slice(0, JIRA_SUMMARY_MAX - 1)}…`;
}

/** The fields of the create-issue request: the template's project, type and custom fields, the incident's text. */
export function ticketFields(i: IncidentRow, props: JiraProps): JiraIssueFields {
  const alertsText = i.alertCount === 1 ? "1 alert" : `${i.alertCount} alerts`;
  const description = adf.doc(
    adf.heading(2, `Data quality incident #${i.id}`),
    adf.paragraph(`The ${i.policyName} policy raised ${alertsText} on ${i.sourceName} since ${i.openedAt}.`),
    adf.bullets([
      `Asset: ${i.sourceName} (id ${i.assetId}, project ${i.projectId})`,
      `Connection: ${i.connectionType} (id ${i.connectionId})`,
      `Policy: ${i.policyName} (${i.policy})${i.attribute ? `, attribute ${i.attribute}` : ""}`,
      `Severity: ${i.severity}; impact: ${i.impact}; dimension: ${i.tag}`,
      `State: ${i.state}; opened ${i.openedAt}; last alert ${i.lastAlertAt}`,
    ]),
  );
  // Ours last: a custom field (or a key stored before custom fields had to be customfield_N) never replaces them.
  return {
    ...props.custom_fields,
    project: { id: props.jira_project_id },
    issuetype: { id: props.jira_issue_type_id },
    summary: ticketSummary(i),
    description,
  };
}

/** When a request that failed its `attempts`-th attempt at `now` is next due: backoff, or Jira's Retry-After if later. */
export function nextAttemptAt(attempts: number, retryAfterSeconds: number | null, now: Date): string {
  const backoff = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1), BACKOFF_MAX_MS);
  return new Date(now.getTime() + Math.max(backoff, (retryAfterSeconds ?? 0) * 1000)).toISOString();
}

/** The bindings ticket requests use. */
export interface TicketEnv extends ShardEnv {
  ENCRYPTION_KEYS: string;
  /** "true" lets Jira calls go to private/loopback addresses over http (local development, tests). */
  ALLOW_PRIVATE_TARGETS?: string | undefined;
}

/**
 * Claims the next attempt of a PENDING request (attempts + 1 where attempts is unchanged);
 * undefined when another caller claimed it first or the request is no longer PENDING.
 */
async function claimAttempt(db: Db, request: TicketRequestRow, now: Date): Promise<TicketRequestRow | undefined> {
  const [claimed] = await db
    .update(ticketRequests)
    .set({ attempts: request.attempts + 1, updatedAt: now.toISOString() })
    .where(
      and(
        eq(ticketRequests.id, request.id),
        eq(ticketRequests.status, "PENDING"),
        eq(ticketRequests.attempts, request.attempts),
      ),
    )
    .returning();
  return claimed;
}

/** Records what an attempt came to on its request and returns the row as it now stands. */
async function settleAttempt(db: Db, requestId: string, set: Partial<TicketRequestRow>): Promise<TicketRequestRow> {
  const [row] = await db
    .update(ticketRequests)
    .set({ ...set, updatedAt: new Date().toISOString() })
    .where(eq(ticketRequests.id, requestId))
    .returning();
  return row!;
}

/** What an attempt reads, read again each time: the integration, template or incident may be gone since the request. */
function loadTicketInputs(db: Db, request: TicketRequestRow) {
  const { tenantId } = request;
  return Promise.all([
    db.query.jiraIntegrations.findFirst({ where: eq(jiraIntegrations.tenantId, tenantId) }),
    db.query.ticketTemplates.findFirst({
      where: and(eq(ticketTemplates.tenantId, tenantId), eq(ticketTemplates.id, request.templateId)),
    }),
    db.query.incidents.findFirst({
      where: and(eq(incidents.tenantId, tenantId), eq(incidents.id, request.incidentId)),
    }),
  ]);
}

/** Calls Jira once; a failure before Jira answers (the token does not open, say) is worth retrying, never thrown. */
async function sendToJira(
  ctx: AttemptContext,
  requestId: string,
  integration: JiraIntegrationRow,
  template: TicketTemplateRow,
  incident: IncidentRow,
): Promise<JiraOutcome> {
  let apiToken = "";
  try {
    apiToken = await ctx.box.open<string>(
      JSON.parse(integration.tokenSecret) as SealedSecret,
      tokenAad(integration.tenantId),
    );
    return await createJiraIssue(
      { baseUrl: integration.baseUrl, email: integration.email, apiToken },
      ticketFields(incident, template.props as unknown as JiraProps),
      { policy: ctx.policy, requestId },
    );
  } catch (err) {
    return {
      kind: "retry",
      status: null,
      error: jiraError(
        `Ticket not sent: ${(err as Error).message}`,
        { email: integration.email, apiToken },
        {
          status: null,
          requestId,
        },
      ),
      retryAfterSeconds: null,
    };
  }
}

/** What every attempt of one run shares: the sealing box and where Jira calls may go. */
interface AttemptContext {
  box: SecretBox;
  policy: OutboundPolicy;
}

/** Marks the request CREATED and links the issue to the incident, in one batch, unless the incident has one already. */
async function recordCreatedTicket(
  db: Db,
  request: TicketRequestRow,
  incident: IncidentRow,
  issue: { key: string; url: string },
): Promise<TicketRequestRow> {
  const set = { status: "CREATED" as const, ticketKey: issue.key, error: null, updatedAt: new Date().toISOString() };
  // Ticket fields are not incident state: this module writes them, the AssetMonitor never does.
  const [rows] = await db.batch([
    db.update(ticketRequests).set(set).where(eq(ticketRequests.id, request.id)).returning(),
    db
      .update(incidents)
      .set({ ticketKey: issue.key, ticketUrl: issue.url })
      .where(and(eq(incidents.tenantId, request.tenantId), eq(incidents.id, incident.id), isNull(incidents.ticketKey))),
  ]);
  return rows[0]!;
}

/** Records Jira's answer: created, refused for good, or retried with backoff until the last attempt. */
async function recordOutcome(
  db: Db,
  request: TicketRequestRow,
  incident: IncidentRow,
  outcome: JiraOutcome,
  now: Date,
): Promise<TicketRequestRow> {
  switch (outcome.kind) {
    case "created":
      return recordCreatedTicket(db, request, incident, outcome);
    case "rejected":
      return settleAttempt(db, request.id, { status: "FAILED", error: outcome.error });
    case "retry": {
      if (request.attempts >= MAX_TICKET_ATTEMPTS) {
        // outcome.error is redacted already; the whole message stays within the excerpt's length.
        const error = excerpt(`Gave up after ${request.attempts} attempts: ${outcome.error}`);
        return settleAttempt(db, request.id, { status: "FAILED", error });
      }
      return settleAttempt(db, request.id, {
        error: outcome.error,
        nextAttemptAt: nextAttemptAt(request.attempts, outcome.retryAfterSeconds, now),
      });
    }
  }
}

/**
 * One attempt of a PENDING request. The attempt is claimed first, so the cron and a request
 * never call Jira twice for one attempt; a request that lost the claim is returned as it stands.
 */
async function attempt(db: Db, ctx: AttemptContext, request: TicketRequestRow, now: Date): Promise<TicketRequestRow> {
  const claimed = await claimAttempt(db, request, now);
  if (!claimed)
    return (await db.query.ticketRequests.findFirst({ where: eq(ticketRequests.id, request.id) })) ?? request;

  const [integration, template, incident] = await loadTicketInputs(db, claimed);
  const fail = (error: string) => settleAttempt(db, claimed.id, { status: "FAILED", error });
  if (!integration) return fail("The tenant's Jira integration was removed");
  if (!template) return fail(`Ticket template ${claimed.templateId} no longer exists`);
  if (!incident) return fail(`Incident ${claimed.incidentId} no longer exists`);

  const outcome = await sendToJira(ctx, claimed.id, integration, template, incident);
  return recordOutcome(db, claimed, incident, outcome, now);
}

function attemptContext(env: TicketEnv): AttemptContext {
  return { box: secretBox(env.ENCRYPTION_KEYS), policy: outboundPolicy(env) };
}

export interface TicketRequestInput {
  tenantId: string;
  incidentId: number;
  templateId: number;
  /** Who asked: a user, a key, or "system" for the default template (kept in the log line). */
  actor: string;
}

/**
 * Asks for a Jira issue for an incident: records a ticket request and tries Jira once; a
 * failure worth retrying stays PENDING for `retryPendingTickets`. Idempotent per incident: while
 * a request is PENDING or CREATED, that request is returned instead of a new one. Callable from
 * the AssetMonitor. Throws ConflictError when the tenant has no integration, InvalidInputError
 * when the template is unknown, NotFoundError when the incident is not the tenant's; Jira's own failures never throw.
 * `onDb`: the database to use (a request's, metered), else the tenant's shard.
 */
/**
 * A request's access check and audit row, run in requestTicket's first batch: `read` first (its
 * rows answered by `settle` before anything else), `allowed` in the insert's condition (a refused
 * caller inserts nothing), and `audit(when)` recording the answer where `when` holds (the caller
 * allowed and what the request needs found: the answer is then the request, 201).
 */
export interface TicketRequestCheck {
  read: BatchItem<"sqlite">;
  allowed: SQL | undefined;
  settle: (rows: unknown) => void;
  audit: (when: SQL | undefined) => BatchItem<"sqlite">;
}

export async function requestTicket(
  env: TicketEnv,
  input: TicketRequestInput,
  onDb?: Db,
  checked?: TicketRequestCheck,
): Promise<TicketRequestRow> {
  const db = onDb ?? createDb(await tenantDatabase(env, input.tenantId));
  const { tenantId, incidentId, templateId } = input;
  const id = randomId();
  const nowDate = new Date();
  const now = nowDate.toISOString();
  const integrationOf = eq(jiraIntegrations.tenantId, tenantId);
  const templateOf = and(eq(ticketTemplates.tenantId, tenantId), eq(ticketTemplates.id, templateId));
  const incidentOf = and(eq(incidents.tenantId, tenantId), eq(incidents.id, incidentId));
  const active = and(
    eq(ticketRequests.tenantId, tenantId),
    eq(ticketRequests.incidentId, incidentId),
    sql`${ticketRequests.status} in ('PENDING', 'CREATED')`,
  );
  const needed = and(
    exists(db.select({ one: sql`1` }).from(jiraIntegrations).where(integrationOf)),
    exists(db.select({ one: sql`1` }).from(ticketTemplates).where(templateOf)),
    exists(db.select({ one: sql`1` }).from(incidents).where(incidentOf)),
  );
  // One batch, one transaction: the caller's check (when given), what the request needs, the
  // request inserted where the caller is allowed, all of it exists and none is active (two
  // concurrent asks cannot both insert), its first attempt claimed, as claimAttempt would, before
  // the cron can see it, and the caller's audit row.
  const results = await db.batch([
    checked?.read ?? db.select({ none: sql`0` }).from(sql`(select 0)`).where(sql`0`),
    db.select().from(jiraIntegrations).where(integrationOf).limit(1),
    db.select().from(ticketTemplates).where(templateOf).limit(1),
    db.select().from(incidents).where(incidentOf).limit(1),
    insertWhere(
      db,
      ticketRequests,
      {
        id,
        tenantId,
        incidentId,
        templateId,
        status: "PENDING",
        attempts: 0,
        nextAttemptAt: now,
        createdAt: now,
        updatedAt: now,
      },
      and(checked?.allowed, needed, not(exists(db.select({ one: sql`1` }).from(ticketRequests).where(active)))),
    ),
    db
      .update(ticketRequests)
      .set({ attempts: 1, updatedAt: now })
      .where(and(eq(ticketRequests.id, id), eq(ticketRequests.status, "PENDING"), eq(ticketRequests.attempts, 0)))
      .returning(),
    db.select().from(ticketRequests).where(active).limit(1),
    ...(checked ? [checked.audit(and(checked.allowed, needed))] : []),
  ]);
  checked?.settle(results[0]);
  const [, [integration], [template], [incident], , [claimed], [current]] = results;
  if (!integration) throw new ConflictError("The tenant has no Jira integration; configure it first");
  if (!template) throw templateMissing("template_id");
  if (!incident) throw new NotFoundError("Incident");
  if (!claimed) {
    if (current) return shownTicketRequest(current);
    // The active request ended meanwhile: ask again (the caller's check passed, its audit row is written).
    return requestTicket(env, input, onDb);
  }
  // The first attempt: its inputs are those read with its claim, in the same transaction.
  const outcome = await sendToJira(attemptContext(env), claimed.id, integration, template, incident);
  const result = await recordOutcome(db, claimed, incident, outcome, nowDate);
  console.log(
    JSON.stringify({
      ticket_request: result.id,
      tenant: tenantId,
      incident: incidentId,
      actor: input.actor,
      status: result.status,
    }),
  );
  return shownTicketRequest(result);
}

/**
 * Retries the PENDING requests that are due (backoff, Retry-After), oldest first, a bounded
 * number per call; meant for the minute cron. Returns what became of them.
 */
export async function retryPendingTickets(env: TicketEnv, now: Date) {
  const db = createDb(env.DB);
  const ctx = attemptContext(env);
  // Exactly the due requests, soonest first (ticket_requests_due_idx), however many wait longer.
  const due = await db
    .select()
    .from(ticketRequests)
    .where(
      and(
        eq(ticketRequests.status, "PENDING"),
        lte(ticketRequests.nextAttemptAt, now.toISOString()),
        unfenced(ticketRequests.tenantId),
      ),
    )
    .orderBy(asc(ticketRequests.nextAttemptAt))
    .limit(RETRIES_PER_RUN);
  const counts = { attempted: 0, created: 0, failed: 0, pending: 0 };
  for (const row of due) {
    const result = await attempt(db, ctx, row, now);
    counts.attempted += 1;
    if (result.status === "CREATED") counts.created += 1;
    else if (result.status === "FAILED") counts.failed += 1;
    else counts.pending += 1;
  }
  return counts;
}

/**
 * A ticket request as it may be shown: its error redacted and cut short again, for rows
 * stored before errors were (the excerpt of an excerpt is the same text).
 */
export function shownTicketRequest(row: TicketRequestRow): TicketRequestRow {
  return row.error ? { ...row, error: excerpt(row.error) } : row;
}

/** One page of an incident's ticket requests, oldest first (`limit + 1` rows), errors as shownTicketRequest. */
export async function listTicketRequests(
  db: Db,
  tenantId: string,
  incidentId: number,
  limit: number,
  after?: { createdAt: string; id: string },
) {
  return db
    .select()
    .from(ticketRequests)
    .where(
      and(
        eq(ticketRequests.tenantId, tenantId),
        eq(ticketRequests.incidentId, incidentId),
        after
          ? sql`(${ticketRequests.createdAt}, ${ticketRequests.id}) > (${after.createdAt}, ${after.id})`
          : undefined,
      ),
    )
    .orderBy(asc(ticketRequests.createdAt), asc(ticketRequests.id))
    .limit(limit + 1)
    .then((rows) => rows.map(shownTicketRequest));
}
