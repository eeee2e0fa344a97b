import { DurableObject } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import type {
  ApplyScanInput,
  ApplyScanJsonInput,
  ApplyScanResult,
  ApplyScanWireInput,
  AssetMonitorRpc,
  FinishedJobsQuery,
  IncidentStateChange,
  IncidentStateResult,
  KeptIncidentHistory,
  MetricSummary,
  MonitoredAsset,
  MovedHistory,
  PrunedHistory,
  RecordedPoint,
  TrainingState,
} from "../contracts/asset-monitor";
import type { NotificationMessage } from "../contracts/messages";
import type { AssetProfile } from "../contracts/profile";
import { segmentOf } from "../contracts/segments";
import { createDb, type Db } from "../db";
import {
  type AttributeKind,
  assetPolicies,
  incidents,
  jiraIntegrations,
  type KeptAlert,
  type ScanJobRow,
} from "../db/schema";
import { type ShardEnv, tenantDatabase } from "../db/shards";
import { rememberedSchema, seenSchema } from "../detection/checks/schema";
import { ANSWERING_REASONS, answerCloses, closedCondition, releaseAnswered } from "../detection/closes";
import { computeDqScore } from "../detection/dq-score";
import { evaluate } from "../detection/evaluate";
import {
  alertsOf,
  checkTransition,
  DEFAULT_ADAPT_AFTER,
  DEFAULT_AUTO_CLOSE_AFTER,
  type IncidentAlert,
  type IncidentDecision,
  incidentKey,
  incidentKeyOf,
  planIncidents,
} from "../detection/incident-planner";
import { resolveKinds } from "../detection/kinds";
import { notifies, type PolicyOverrides, PolicyOverridesSchema } from "../detection/policies";
import type { EvaluatedPoint, PolicyAlert } from "../detection/types";
import type { AlertQuery } from "../incidents/alerts";
import {
  alertsByKey,
  attributesStatement,
  byIncidentKey,
  countIncidents,
  decisionEntries,
  decisionStatements,
  entryOfRow,
  impactLevel,
  impactOf,
  impactQuery,
  keptAlertsOf,
  lastJobQuery,
  legacyHistoryQueries,
  legacyLastAlertOf,
  movedOutStatements,
  movedStepStatement,
  openedIds,
  openedIncidentsQuery,
  openIncidents,
  openIncidentsQuery,
  referredAlertIds,
  resultStatements,
  transitionEntry,
  transitionStatements,
} from "../incidents/monitor-store";
import { requestTicket } from "../integrations/tickets";
import {
  endedJobsQuery,
  isActive,
  keptJobDeleteStatement,
  leavesD1,
  movedJobsDeleteStatement,
  succeedInBatchStatement,
} from "../jobs/lifecycle";
import { nowIso } from "../lib/time";
import type { ChannelRow } from "../notifications/channels";
import { enabledChannelsQuery, type IncidentEvent, publishIncidentEvents } from "../notifications/events";
import { decodeProfile } from "../scan/profile-wire";
import { dqScoreConfigOf, dqScoreConfigQuery } from "../settings/dq-score";
import { type AdoptionPlan, HistoryStore, type StoredDqScore } from "./history-store";
import { SerialQueue } from "./serial";

/** Rows of each kind one step of a rebuild's move of the asset's D1 history takes (as the move's cron). */
const REBUILD_MOVE_ROWS = 500;

/** Past points of a metric its adopted level is measured against (the anomaly policies' default window). */
const ADOPTION_WINDOW = 30;

/** The bindings the monitor uses. */
export interface MonitorEnv extends ShardEnv {
  ENCRYPTION_KEYS: string;
  NOTIFICATIONS: Queue<NotificationMessage>;
  PUBLIC_BASE_URL?: string;
}

/**
 * One per asset (name "<tenant>:<assetId>"): the only writer of the asset's alerts, DQ scores
 * and incidents. It keeps the metric history in its own storage (HistoryStore), decides with
 * pure rules (policies, incident planner) and writes D1 in one batch per change (incidents/monitor-store.ts).
 * Every call that reads and then writes runs alone, in arrival order (SerialQueue): two scans,
 * or a scan and a manual close, never interleave on stale state.
 */
export class AssetMonitor extends DurableObject<MonitorEnv> implements AssetMonitorRpc {
  private readonly store: HistoryStore;
  private readonly serial = new SerialQueue();

  /** The database of the tenant's rows (its shard, src/db/shards.ts). */
  private async dbOf(tenantId: string) {
    return createDb(await tenantDatabase(this.env, tenantId));
  }

  constructor(ctx: DurableObjectState, env: MonitorEnv) {
    super(ctx, env);
    this.store = new HistoryStore(ctx.storage);
    ctx.blockConcurrencyWhile(async () => this.store.migrate());
  }

  /**
   * Applies one scan's profile: policies, alerts, DQ score, incidents, metric history.
   * Idempotent per job: the D1 writes go in one batch that starts with the job's marker row,
   * so a replay (even after a crash between D1 and this object's storage) writes nothing twice.
   */
  applyScan(input: ApplyScanInput | ApplyScanJsonInput | ApplyScanWireInput): Promise<ApplyScanResult> {
    return this.serial.run(() => {
      if ("profileWire" in input) {
        const { profileWire, ...rest } = input;
        return this.apply({ ...rest, profile: decodeProfile(profileWire) });
      }
      if (!("profileJson" in input)) return this.apply(input);
      const { profileJson, ...rest } = input;
      return this.apply({ ...rest, profile: JSON.parse(profileJson) as AssetProfile });
    });
  }

  /**
   * Closes or reopens an incident by hand. Closing as EXPECTED or FALSE_POSITIVE adopts the level
   * the incident reported at once (see HistoryStore.planAdoption): the detector learns the new normal.
   */
  setIncidentState(change: IncidentStateChange): Promise<IncidentStateResult> {
    return this.serial.run(() => this.transition(change));
  }

  /**
   * Folds the asset's alerts since `since` that no incident refers to yet into incidents, job
   * by job in time order, with the live rules (no auto-close: clean scans are not in the
   * alerts). Running it again finds every alert referred to and changes nothing.
   */
  rebuildIncidents(input: { asset: MonitoredAsset; since: string }): Promise<{ incidents: number; alerts: number }> {
    return this.serial.run(() => this.rebuild(input.asset, input.since));
  }

  /**
   * Retention: forgets the metric history, applied jobs, DQ scores and alerts from before `cutoff`
   * (the tenant's data_ttl); alerts from `openSince` on (the opening of the asset's oldest open
   * incident) stay.
   */
  pruneHistory(cutoff: string, openSince?: string): Promise<PrunedHistory> {
    return this.serial.run(async () => this.store.pruneBefore(cutoff, openSince));
  }

  /**
   * The asset's alerts of one job, with the given ids (an incident's alert_refs) or on one metric,
   * by id, and the steps of the move out of D1 this object had taken in (read-only).
   */
  async alerts(query: AlertQuery): Promise<{ alerts: KeptAlert[]; movedSteps: number; hasJob?: boolean }> {
    if ("jobId" in query) {
      const hasJob = this.store.scanJob(query.jobId) !== undefined;
      return { alerts: this.store.alertsOfJob(query.jobId), movedSteps: this.store.movedSteps, hasJob };
    }
    const alerts = "metric" in query ? this.store.alertsOfMetric(query.metric) : this.store.alertsByIds(query.ids);
    return { alerts, movedSteps: this.store.movedSteps };
  }

  /**
   * A job of the asset that ended (issue 38): kept here (its row as the end left it, replacing a
   * pending one), then its D1 row deleted, with the step counted on the asset's mark, in one batch.
   * Idempotent by job id; runs alone, like a scan.
   */
  keepJob(job: ScanJobRow): Promise<void> {
    return this.serial.run(async () => {
      const step = this.store.keepJob(job);
      const db = await this.dbOf(job.tenantId);
      await db.batch([
        keptJobDeleteStatement(db, job),
        movedStepStatement(db, { tenantId: job.tenantId, id: job.assetId }, step),
      ]);
    });
  }

  /** One ended job of the asset, and the steps out of D1 this object had taken in (read-only). */
  async scanJob(jobId: string): Promise<{ job: ScanJobRow | undefined; movedSteps: number }> {
    return { job: this.store.scanJob(jobId), movedSteps: this.store.movedSteps };
  }

  /** A page of the asset's ended jobs, newest first, and the steps out of D1 taken in (read-only). */
  async scanJobs(query: FinishedJobsQuery): Promise<{ jobs: ScanJobRow[]; movedSteps: number }> {
    return {
      jobs: this.store.scanJobs(
        query.limit,
        query.before === undefined ? undefined : { createdAt: query.before, id: query.beforeId },
        query.uploaded ?? false,
      ),
      movedSteps: this.store.movedSteps,
    };
  }

  /**
   * The asset is deleted: its history (metric points, alerts, DQ scores, applied and ended jobs, state) goes
   * with it, after whatever call was running.
   */
  forget(): Promise<void> {
    return this.serial.run(async () => {
      await this.ctx.storage.deleteAll();
      this.store.reset();
    });
  }

  /** Policies still learning a metric's baseline, as of the last scan. */
  async training(): Promise<TrainingState[]> {
    return this.store.training;
  }

  /** One page of the asset's DQ scores, newest first, before `before` (scored_at) if given (read-only). */
  async dqScores(limit: number, before?: string): Promise<{ scores: StoredDqScore[]; movedSteps: number }> {
    return { scores: this.store.dqScores(limit, before), movedSteps: this.store.movedSteps };
  }

  /** One metric's recent points, oldest first, as measured, with their offsets (read-only). */
  async metricSeries(metric: string): Promise<RecordedPoint[]> {
    return this.store.series(metric);
  }

  /** The metrics whose name starts with `prefix` (null: asset-level ones), with their newest value (read-only). */
  async metricCatalog(prefix: string | null): Promise<MetricSummary[]> {
    return this.store.metrics(prefix);
  }

  private async apply(input: ApplyScanInput): Promise<ApplyScanResult> {
    const done = this.store.appliedResult<ApplyScanResult>(input.jobId);
    if (done) return { ...done, replay: true };

    const { asset, profile } = input;
    const db = await this.dbOf(asset.tenantId);
    const {
      evaluation,
      dqScore,
      decisions,
      kinds,
      notifyOf,
      impact: newImpact,
      ticketTemplateId,
      channels,
      lastJobId,
    } = await this.judge(db, input);
    const opened = decisions.filter((d) => d.kind === "open").map((d) => d.alert);
    const alerts = alertsOf(decisions);
    const adoptions = this.planAdoptions(decisions, input, evaluation.points);
    const savedAt = nowIso();
    const impact = opened.length > 0 ? newImpact : "LOW";
    const freshness = profile.freshness ? { freshness: profile.freshness } : {};
    const scan = {
      asset,
      jobId: input.jobId,
      scanTime: input.scanTime,
      impact,
      adoptions: new Map([...adoptions].map(([id, a]) => [id, a.details])),
    };
    // D1 has the job already (its batch committed, and this object could not record it): record
    // the history below, write nothing twice.
    const replay = lastJobId === input.jobId;
    // The scan's alerts are kept here before the D1 batch that refers to their ids (and found here
    // again by a replay whose batch had committed).
    let kept: KeptAlert[];
    let jobEnded = false;
    if (!replay) {
      this.recordUnrecorded(lastJobId);
      kept = this.store.keepAlerts(
        asset.id,
        input.jobId,
        keptAlertsOf({ ...input, savedAt, alerts, ...freshness, notifies: notifyOf }),
      );
      // The job ends in this batch (issue 38): kept here first, as pending, from the caller's row;
      // the batch deletes its D1 row and returns it, which replaces the pending one.
      const given = input.job;
      const job = given && given.id === input.jobId && isActive(given.status) && leavesD1(given) ? given : undefined;
      const ended = (row: ScanJobRow): ScanJobRow => ({
        ...row,
        status: "SUCCEEDED",
        error: null,
        finishedAt: savedAt,
      });
      const begun = job ? this.store.beginJobEnd(ended(job)) : undefined;
      // The history entries of the decisions are kept here before the batch, as the alerts (shown
      // once the job is recorded as applied; found again by a replay whose batch had committed).
      const judged = { ...scan, alerts: alertsByKey(kept) };
      this.store.keepIncidentEntries(input.jobId, decisionEntries(judged, decisions));
      const results = await db
        .batch([
          ...resultStatements(db, {
            asset,
            jobId: input.jobId,
            savedAt,
            ...freshness,
            alerted: kept.length > 0,
            ...(begun ? { movedSteps: begun.step } : {}),
          }),
          attributesStatement(db, asset, profile, kinds, input.scanTime),
          ...decisionStatements(db, judged, decisions),
          // The incidents it opened, whose entries take their ids.
          ...(opened.length > 0 ? [openedIncidentsQuery(db, asset, input.scanTime)] : []),
          ...(job ? [succeedInBatchStatement(db, job)] : []),
        ])
        .catch((err: unknown) => {
          if (job && begun?.created) this.store.dropPendingJob(job.id);
          throw err;
        });
      if (opened.length > 0) {
        const rows = results.at(job ? -2 : -1) as Awaited<ReturnType<typeof openedIncidentsQuery>>;
        this.store.settleIncidentEntries(input.jobId, openedIds(rows));
      }
      if (job) {
        const [row] = results.at(-1) as ScanJobRow[];
        if (row) this.store.keepJob(ended(row), false);
        else if (begun?.created) this.store.dropPendingJob(job.id);
        jobEnded = row !== undefined;
      }
    } else {
      kept = this.store.alertsOfJob(input.jobId, true);
      // Its batch committed, its entries were kept before it: those of the incidents it opened take their ids.
      if (this.store.hasUnsettledEntries(input.jobId)) {
        this.store.settleIncidentEntries(input.jobId, openedIds(await openedIncidentsQuery(db, asset, input.scanTime)));
      }
    }

    if (!replay && opened.length > 0 && ticketTemplateId) {
      this.ctx.waitUntil(this.openDefaultTickets(db, asset, opened, ticketTemplateId));
    }
    if (!replay) this.ctx.waitUntil(this.notify(db, asset, input.jobId, decisions, notifyOf, channels, kept));
    const result: ApplyScanResult = { jobId: input.jobId, alerts: kept.length, dqScore, replay };
    this.store.recordScan({
      jobId: input.jobId,
      scanTime: input.scanTime,
      appliedAt: savedAt,
      points: evaluation.points,
      schema: rememberedSchema(this.store.lastSchema, seenSchema(profile)),
      training: evaluation.training,
      kinds,
      dqScore,
      result: { ...result, replay: false },
    });
    for (const { plan } of adoptions.values()) this.store.applyAdoption(plan);
    for (const d of decisions) {
      if (d.kind !== "adopt") continue;
      this.store.rememberClose(closedCondition(d.incident, d.alert, "NEW_NORMAL", input.scanTime));
    }
    return { ...result, jobEnded };
  }

  /**
   * For each incident this scan adopts as the new normal: how its history moves, and what its
   * closing entry says (the band before, and the band the moved history draws after).
   */
  private planAdoptions(
    decisions: IncidentDecision<PolicyAlert & { attribute: string }>[],
    input: ApplyScanInput,
    points: EvaluatedPoint[],
  ) {
    const out = new Map<number, { plan: AdoptionPlan; details: Record<string, unknown> }>();
    for (const d of decisions) {
      if (d.kind !== "adopt") continue;
      const plan = this.store.planAdoption({
        policy: d.alert.policy,
        attribute: d.alert.attribute,
        openedAt: d.incident.openedAt,
        levelSince: d.incident.lastAlertAt,
        window: ADOPTION_WINDOW,
        pending: { time: input.scanTime, points },
      });
      const before = d.alert.expected;
      const shift = plan.offsets.find((o) => o.metric === d.alert.metric)?.shift;
      const after =
        before !== undefined && typeof before === "object" && shift !== undefined
          ? { low: before.low + shift, high: before.high + shift }
          : `the level of the last ${d.levelScans} scans`;
      out.set(d.incident.id, { plan, details: { band_before: before ?? null, band_after: after } });
    }
    return out;
  }

  /** Evaluates a scan against the asset's history and settings: its alerts, DQ score and incident decisions. */
  private async judge(db: Db, input: ApplyScanInput) {
    const { asset, profile } = input;
    const ids = asset.idAttributes ? { id_attributes: asset.idAttributes } : {};
    // One D1 round trip for everything the scan is judged against (the lineage: a new incident's
    // impact; the Jira integration's default template: a ticket for each incident it opens; the
    // notification channels: who hears of its incidents).
    // Selects, not findFirst: drizzle's D1 batch fails to map a findFirst that finds nothing.
    const [policyRows, dqRows, openRows, lineage, jira, channels, mark] = await db.batch([
      db
        .select()
        .from(assetPolicies)
        .where(and(eq(assetPolicies.tenantId, asset.tenantId), eq(assetPolicies.assetId, asset.id)))
        .limit(1),
      dqScoreConfigQuery(db, asset.tenantId, asset.id),
      openIncidentsQuery(db, asset),
      impactQuery(db, asset.id),
      db
        .select({ defaultTemplateId: jiraIntegrations.defaultTemplateId })
        .from(jiraIntegrations)
        .where(eq(jiraIntegrations.tenantId, asset.tenantId))
        .limit(1),
      enabledChannelsQuery(db, asset.tenantId),
      lastJobQuery(db, asset),
    ]);
    const policyRow = policyRows[0];
    const dqConfig = dqScoreConfigOf(dqRows[0]);
    const open = byIncidentKey(openRows);
    const overrides = policyRow ? PolicyOverridesSchema.safeParse(policyRow.overrides) : undefined;
    const timestamp = asset.timestampAttribute ? { timestamp_attribute: asset.timestampAttribute } : {};
    const kinds = resolveKinds(
      profile.attributes,
      { ...ids, ...timestamp },
      this.store.kinds,
      (policyRow?.attributeKinds ?? {}) as Record<string, AttributeKind>,
    );
    const evaluated = evaluate({
      asset: { id: asset.id, name: asset.name, type: asset.type, ...ids, ...timestamp },
      kinds: Object.fromEntries(Object.entries(kinds).map(([name, k]) => [name, k.kind])),
      job_id: input.jobId,
      scan_time: input.scanTime,
      profile,
      previous_schema: this.store.lastSchema,
      history: this.store.history(),
      ...(overrides?.success ? { overrides: overrides.data as PolicyOverrides } : {}),
      ...(asset.skipInvestigator ? { investigate: false } : {}),
    });
    // Findings a close already answered are no alerts, and their points join the baseline.
    const { alerts: kept, answered } = answerCloses(evaluated.alerts, this.store.closes());
    const evaluation = { ...evaluated, alerts: kept, points: releaseAnswered(evaluated.points, answered) };
    const dqScore = dqConfig.enabled
      ? computeDqScore(profile, evaluation.alerts, dqConfig.weights, { scan_time: input.scanTime, ...timestamp })
      : null;
    const findings = evaluation.alerts.map((a) => ({ ...a, attribute: a.attribute ?? "" }));
    const decisions = planIncidents(open, findings, {
      autoCloseAfter: policyRow?.autoCloseAfter ?? DEFAULT_AUTO_CLOSE_AFTER,
      adaptAfter: policyRow?.adaptAfter ?? DEFAULT_ADAPT_AFTER,
    });
    const notifyOf = (policy: string) =>
      notifies(overrides?.success ? (overrides.data as PolicyOverrides) : {}, policyRow?.notify, policy);
    const ticketTemplateId = jira[0]?.defaultTemplateId ?? undefined;
    return {
      evaluation,
      dqScore,
      decisions,
      kinds,
      notifyOf,
      impact: impactLevel(lineage),
      ticketTemplateId,
      channels,
      lastJobId: mark[0]?.lastJobId ?? undefined,
    };
  }

  /**
   * A job whose D1 batch committed while this object failed to record it, and which another job
   * overtook before its replay: records it as applied (its points and score are lost), so that its
   * replay writes nothing twice to D1.
   */
  private recordUnrecorded(lastJobId: string | undefined): void {
    if (lastJobId === undefined || this.store.hasApplied(lastJobId)) return;
    const result: ApplyScanResult = { jobId: lastJobId, alerts: 0, dqScore: null, replay: false };
    this.store.recordApplied(lastJobId, nowIso(), result);
  }

  /**
   * One step of the move of the asset's DQ scores, job markers and alerts from D1 into this object
   * (issue 38): at most `limit` of each, newest first, copied in and then deleted from D1.
   * Idempotent and resumable (a step cut short leaves rows in both places, which reads count once,
   * and the next step copies them again, changing nothing); runs alone, like a scan. `more`: rows
   * may be left.
   */
  moveHistoryIn(input: { asset: Pick<MonitoredAsset, "tenantId" | "id">; limit: number }): Promise<MovedHistory> {
    return this.serial.run(async () => this.moveStep(await this.dbOf(input.asset.tenantId), input.asset, input.limit));
  }

  private async moveStep(db: Db, asset: Pick<MonitoredAsset, "tenantId" | "id">, limit: number): Promise<MovedHistory> {
    {
      const [scores, markers, legacyAlerts, legacyEntries, jobs] = await db.batch([
        ...legacyHistoryQueries(db, asset, limit),
        endedJobsQuery(db, asset, limit),
      ]);
      if (
        scores.length === 0 &&
        markers.length === 0 &&
        legacyAlerts.length === 0 &&
        legacyEntries.length === 0 &&
        jobs.length === 0
      ) {
        return { dqScores: 0, appliedJobs: 0, alerts: 0, scanJobs: 0, incidentHistory: 0, more: false };
      }
      // The incidents' entries move once the asset's alerts have: an entry from before the alerts
      // carried their detail (alert_metrics null) takes it in the step that moves its alerts.
      const entries = legacyAlerts.length === 0 ? legacyEntries.map(entryOfRow) : [];
      // A marker this object has no record of (the rare job whose record was lost): recorded as
      // applied, so that a replay of it writes nothing twice.
      const applied = markers.map((m) => ({
        jobId: m.jobId,
        appliedAt: m.appliedAt,
        result: { jobId: m.jobId, alerts: 0, dqScore: null, replay: false } satisfies ApplyScanResult,
      }));
      const alerts = legacyAlerts.map(({ tenantId: _t, assetId: _a, projectId: _p, connectionId: _c, ...a }) => a);
      const step = this.store.moveIn(scores, applied, alerts, jobs, entries);
      const moved = {
        scoreJobs: scores.map((s) => s.jobId),
        markers,
        alerts,
        entries: entries.map((e) => e.legacyId!),
      };
      const [first, ...rest] = movedOutStatements(db, asset, moved, step);
      await db.batch([
        first,
        ...rest,
        ...(jobs.length > 0
          ? [
              movedJobsDeleteStatement(
                db,
                asset,
                jobs.map((j) => j.id),
              ),
            ]
          : []),
      ]);
      return {
        dqScores: scores.length,
        appliedJobs: markers.length,
        alerts: alerts.length,
        scanJobs: jobs.length,
        incidentHistory: entries.length,
        more:
          scores.length === limit ||
          markers.length === limit ||
          alerts.length === limit ||
          jobs.length === limit ||
          legacyEntries.length > entries.length ||
          entries.length === limit,
      };
    }
  }

  /**
   * The scan's incident events to the tenant's notification channels: one per incident opened,
   * escalated or closed (NEW_NORMAL, auto-close), never for a confirming scan. Muted policies send
   * nothing. Runs after the scan's results are written, and never fails the scan.
   */
  private async notify(
    db: Db,
    asset: MonitoredAsset,
    jobId: string,
    decisions: IncidentDecision<PolicyAlert & { attribute: string }>[],
    notifyOf: (policy: string) => boolean,
    channels: ChannelRow[],
    alerts: readonly KeptAlert[],
  ): Promise<void> {
    const wanted = decisions.filter((d) =>
      d.kind === "open" || d.kind === "escalate"
        ? notifyOf(d.alert.policy)
        : (d.kind === "adopt" || d.kind === "auto_close") && notifyOf(d.incident.policy),
    );
    if (wanted.length === 0) return;
    const target = { tenantId: asset.tenantId, id: asset.id, name: asset.name };
    // The opened incidents' ids are read only when the tenant has a channel to tell.
    await publishIncidentEvents(this.env, db, target, () => this.incidentEvents(db, asset, jobId, wanted), channels, {
      jobId,
      alerts,
    });
  }

  /**
   * The incident events of the decisions a channel wants (notify() has filtered them by policy);
   * opened incidents' ids are read back from D1.
   */
  private async incidentEvents(
    db: Db,
    asset: MonitoredAsset,
    jobId: string,
    decisions: IncidentDecision<PolicyAlert & { attribute: string }>[],
  ): Promise<IncidentEvent[]> {
    const events: IncidentEvent[] = [];
    const open = decisions.some((d) => d.kind === "open") ? await openIncidents(db, asset) : new Map();
    for (const d of decisions) {
      if (d.kind === "open") {
        const incident = open.get(incidentKeyOf(d.alert));
        if (incident) {
          events.push({
            type: "incident.opened",
            incidentId: incident.id,
            jobId,
            key: `incident:${incident.id}:opened`,
          });
        }
      } else if (d.kind === "escalate") {
        const key = `incident:${d.incident.id}:escalated:${jobId}`;
        events.push({ type: "incident.escalated", incidentId: d.incident.id, jobId, key });
      } else if (d.kind === "adopt" || d.kind === "auto_close") {
        const key = `incident:${d.incident.id}:closed:${jobId}`;
        events.push({ type: "incident.closed", incidentId: d.incident.id, jobId, closedBy: "system", key });
      }
    }
    return events;
  }

  private async transition(change: IncidentStateChange): Promise<IncidentStateResult> {
    const db = await this.dbOf(change.tenantId);
    const incident = await db.query.incidents.findFirst({
      where: and(eq(incidents.tenantId, change.tenantId), eq(incidents.id, change.incidentId)),
    });
    const open =
      incident && change.state === "OPEN"
        ? await openIncidents(db, { tenantId: incident.tenantId, id: incident.assetId })
        : undefined;
    const other = incident ? open?.get(incidentKey(incident.policy, incident.attribute, incident.segment)) : undefined;
    const refusal = checkTransition(incident, change.state, other);
    if (refusal || !incident) return refusal ?? { ok: false, problem: "not_found", message: "Incident not found" };
    const made = {
      to: change.state,
      actor: change.actor,
      now: nowIso(),
      ...(change.note !== undefined ? { note: change.note } : {}),
      ...(change.reason !== undefined ? { reason: change.reason } : {}),
    };
    await db.batch(transitionStatements(db, incident, made));
    this.store.addIncidentEntry(transitionEntry(incident, made));
    this.ctx.waitUntil(this.notifyTransition(db, incident, change));
    if (change.state === "OPEN") this.store.forgetClose(incident.id);
    if (change.state === "CLOSED" && change.reason && ANSWERING_REASONS.includes(change.reason)) {
      const plan = this.store.planAdoption({
        policy: incident.policy,
        attribute: incident.attribute,
        openedAt: incident.openedAt,
        levelSince: incident.lastAlertAt,
        window: ADOPTION_WINDOW,
      });
      // EXPECTED: the level is the new normal, the history moves to it. FALSE_POSITIVE and
      // NO_ACTION_NEEDED: what was observed is normal, its points join the baseline as measured.
      this.store.applyAdoption(change.reason === "EXPECTED" ? plan : { ...plan, offsets: [], changePoints: [] });
      const last =
        this.store.lastAlertOf({ type: incident.policy, attribute: incident.attribute, segment: incident.segment }) ??
        (await legacyLastAlertOf(db, incident));
      this.store.rememberClose(
        closedCondition(
          incident,
          {
            deviation: incident.deviation,
            metric: last?.metric,
            observed: last?.details.observed,
            expected: last?.details.expected,
          },
          change.reason,
          nowIso(),
        ),
      );
    }
    // The history as it is now, for the caller's answer (the detail) without another call here.
    return { ok: true, history: this.keptHistory(incident.id) };
  }

  /** An incident's history entries kept here, oldest first, and the steps out of D1 taken in (read-only). */
  async incidentHistory(incidentId: number): Promise<KeptIncidentHistory> {
    return this.keptHistory(incidentId);
  }

  private keptHistory(incidentId: number): KeptIncidentHistory {
    return { entries: this.store.incidentHistory(incidentId), movedSteps: this.store.movedSteps };
  }

  /**
   * A manual change's event: incident.closed for a close, incident.opened for a reopen; nothing
   * when the incident's policy is muted on the asset.
   */
  private async notifyTransition(
    db: Db,
    incident: { id: number; tenantId: string; assetId: number; policy: string; sourceName: string },
    change: IncidentStateChange,
  ) {
    const row = await db.query.assetPolicies.findFirst({
      where: and(eq(assetPolicies.tenantId, incident.tenantId), eq(assetPolicies.assetId, incident.assetId)),
    });
    const overrides = row ? PolicyOverridesSchema.safeParse(row.overrides) : undefined;
    if (!notifies(overrides?.success ? (overrides.data as PolicyOverrides) : {}, row?.notify, incident.policy)) return;
    const closed = change.state === "CLOSED";
    const event: IncidentEvent = closed
      ? {
          type: "incident.closed",
          incidentId: incident.id,
          closedBy: change.actor,
          key: `incident:${incident.id}:closed:${nowIso()}`,
        }
      : { type: "incident.opened", incidentId: incident.id, key: `incident:${incident.id}:reopened:${nowIso()}` };
    await publishIncidentEvents(
      this.env,
      db,
      { tenantId: incident.tenantId, id: incident.assetId, name: incident.sourceName },
      [event],
    );
  }

  private async rebuild(asset: MonitoredAsset, since: string): Promise<{ incidents: number; alerts: number }> {
    const db = await this.dbOf(asset.tenantId);
    // The asset's alerts still in D1 (issue 38's move has not reached it) come in first.
    for (let more = true; more; ) more = (await this.moveStep(db, asset, REBUILD_MOVE_ROWS)).more;
    const legacy = await referredAlertIds(db, asset);
    const referred = new Set([...legacy.referred, ...this.store.referredAlertIds(legacy.incidentIds)]);
    const pending = this.store.alertsSince(since).filter((a) => !referred.has(a.id));
    const before = await countIncidents(db, asset);
    const impact = await impactOf(db, asset.id);
    const byJob = new Map<string, KeptAlert[]>();
    for (const a of pending) byJob.set(a.jobId, [...(byJob.get(a.jobId) ?? []), a]);
    for (const [jobId, jobAlerts] of byJob) {
      const alerts: IncidentAlert[] = jobAlerts.map((a) => ({
        policy: a.type as IncidentAlert["policy"],
        policy_name: a.policyName,
        attribute: a.attribute,
        ...(a.segment ? { segment: segmentOf(a.segment) } : {}),
        priority: a.priority,
        dimension: String(a.details.dimension ?? "") as IncidentAlert["dimension"],
      }));
      // Only the alerts' own incidents: clean scans are not known from alerts alone.
      const open = new Map(
        [...(await openIncidents(db, asset))].filter(([key]) => alerts.some((a) => incidentKeyOf(a) === key)),
      );
      const decisions = planIncidents(open, alerts, {
        autoCloseAfter: Number.POSITIVE_INFINITY,
        adaptAfter: Number.POSITIVE_INFINITY,
        alreadyAlerts: true,
      });
      const scan = { asset, jobId, scanTime: jobAlerts[0]!.metricTime, impact, alerts: alertsByKey(jobAlerts) };
      const [first, ...rest] = decisionStatements(db, scan, decisions);
      if (!first) continue;
      this.store.keepIncidentEntries(jobId, decisionEntries(scan, decisions));
      const opens = decisions.some((d) => d.kind === "open");
      const results = await db.batch([
        first,
        ...rest,
        ...(opens ? [openedIncidentsQuery(db, asset, scan.scanTime)] : []),
      ]);
      if (opens) {
        this.store.settleIncidentEntries(
          jobId,
          openedIds(results.at(-1) as Awaited<ReturnType<typeof openedIncidentsQuery>>),
        );
      }
      this.store.applyIncidentEntries(jobId);
    }
    return { incidents: (await countIncidents(db, asset)) - before, alerts: pending.length };
  }

  /**
   * Opens a ticket with the tenant's default template (the Jira integration's, read with the scan's
   * judgement) for each incident this scan opened. Failures stay PENDING for the minute cron to retry.
   */
  private async openDefaultTickets(
    db: Db,
    asset: MonitoredAsset,
    opened: IncidentAlert[],
    templateId: number,
  ): Promise<void> {
    try {
      const open = await openIncidents(db, asset);
      for (const a of opened) {
        const incident = open.get(incidentKeyOf(a));
        if (!incident) continue;
        await requestTicket(this.env, {
          tenantId: asset.tenantId,
          incidentId: incident.id,
          templateId,
          actor: "system",
        });
      }
    } catch (err) {
      console.error(JSON.stringify({ asset_id: asset.id, default_ticket_error: String(err) }));
    }
  }
}
