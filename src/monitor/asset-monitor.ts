import { DurableObject } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { createDb, type Db } from "../db";
import { type AlertRow, assetPolicies, type CloseReason, incidents, jiraIntegrations } from "../db/schema";
import { requestTicket } from "../integrations/tickets";
import { nowIso } from "../lib/time";
import type { AssetProfile } from "../scan/profile";
import { getDqScoreConfig } from "../settings/dq-score";
import {
  alertsWithoutIncident,
  countIncidents,
  decisionStatements,
  impactOf,
  isAppliedBefore,
  jobsOfIncident,
  type MonitoredAsset,
  openIncidents,
  resultStatements,
  transitionStatements,
} from "./d1-store";
import { computeDqScore, type DqScore } from "./dq-score";
import { HistoryStore } from "./history-store";
import {
  checkTransition,
  DEFAULT_AUTO_CLOSE_AFTER,
  type IncidentAlert,
  incidentKey,
  planIncidents,
  type TransitionRefusal,
} from "./incident-planner";
import { evaluate } from "./policies/evaluate";
import { type PolicyOverrides, PolicyOverridesSchema } from "./policies/policies";
import type { TrainingState } from "./policies/types";
import { SerialQueue } from "./serial";

export type { MonitoredAsset };

/** The bindings the monitor uses. */
export interface MonitorEnv {
  DB: D1Database;
  ENCRYPTION_KEYS: string;
}

export interface ApplyScanInput {
  asset: MonitoredAsset;
  jobId: string;
  /** When the job was created (upload time): the alerts' create_time. */
  createdAt: string;
  /** When the scan ran: the time of its metrics. */
  scanTime: string;
  profile: AssetProfile;
}

export interface ApplyScanResult {
  jobId: string;
  alerts: number;
  dqScore: DqScore | null;
  /** True when this job had been applied before: nothing was written this time. */
  replay: boolean;
}

export interface IncidentStateChange {
  tenantId: string;
  incidentId: number;
  state: "OPEN" | "CLOSED";
  note?: string;
  reason?: CloseReason;
  actor: string;
}

export type IncidentStateResult = { ok: true } | TransitionRefusal;

/**
 * One per asset (name "<tenant>:<assetId>"): the only writer of the asset's alerts, DQ scores
 * and incidents. It keeps the metric history in its own storage (HistoryStore), decides with
 * pure rules (policies, incident planner) and writes D1 in one batch per change (d1-store).
 * Every call that reads and then writes runs alone, in arrival order (SerialQueue): two scans,
 * or a scan and a manual close, never interleave on stale state.
 */
export class AssetMonitor extends DurableObject<MonitorEnv> {
  private readonly store: HistoryStore;
  private readonly serial = new SerialQueue();

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
  applyScan(input: ApplyScanInput): Promise<ApplyScanResult> {
    return this.serial.run(() => this.apply(input));
  }

  /**
   * Closes or reopens an incident by hand. Closing as EXPECTED or FALSE_POSITIVE gives the
   * points its alerts kept out of the baseline back to it, so the detector learns the new normal.
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

  /** Policies still learning a metric's baseline, as of the last scan. */
  async training(): Promise<TrainingState[]> {
    return this.store.training;
  }

  private async apply(input: ApplyScanInput): Promise<ApplyScanResult> {
    const done = this.store.appliedResult<ApplyScanResult>(input.jobId);
    if (done) return { ...done, replay: true };

    const { asset, profile } = input;
    const db = createDb(this.env.DB);
    const { evaluation, dqScore, decisions } = await this.judge(db, input);
    const opened = decisions.filter((d) => d.kind === "open").map((d) => d.alert);
    const savedAt = nowIso();
    const impact = opened.length > 0 ? await impactOf(this.env.DB, asset.id) : "LOW";
    const freshness = profile.freshness ? { freshness: profile.freshness } : {};
    let replay = false;
    try {
      await db.batch([
        ...resultStatements(db, { ...input, savedAt, alerts: evaluation.alerts, dqScore, ...freshness }),
        ...decisionStatements(db, { asset, jobId: input.jobId, scanTime: input.scanTime, impact }, decisions),
      ]);
    } catch (err) {
      if (!isAppliedBefore(err)) throw err;
      // Written before this object could record it: D1 has it all; record the history below.
      replay = true;
    }

    if (!replay && opened.length > 0) this.ctx.waitUntil(this.openDefaultTickets(db, asset, opened));
    const result: ApplyScanResult = { jobId: input.jobId, alerts: evaluation.alerts.length, dqScore, replay };
    this.store.recordScan({
      jobId: input.jobId,
      scanTime: input.scanTime,
      appliedAt: savedAt,
      points: evaluation.points,
      profile,
      training: evaluation.training,
      result: { ...result, replay: false },
    });
    return result;
  }

  /** Evaluates a scan against the asset's history and settings: its alerts, DQ score and incident decisions. */
  private async judge(db: Db, input: ApplyScanInput) {
    const { asset, profile } = input;
    const [policyRow, dqConfig, open] = await Promise.all([
      db.query.assetPolicies.findFirst({
        where: and(eq(assetPolicies.tenantId, asset.tenantId), eq(assetPolicies.assetId, asset.id)),
      }),
      getDqScoreConfig(db, asset.tenantId, asset.id),
      openIncidents(db, asset),
    ]);
    const overrides = policyRow ? PolicyOverridesSchema.safeParse(policyRow.overrides) : undefined;
    const timestamp = asset.timestampAttribute ? { timestamp_attribute: asset.timestampAttribute } : {};
    const evaluation = evaluate({
      asset: {
        id: asset.id,
        name: asset.name,
        type: asset.type,
        ...(asset.idAttributes ? { id_attributes: asset.idAttributes } : {}),
        ...timestamp,
      },
      job_id: input.jobId,
      scan_time: input.scanTime,
      profile,
      previous_schema: this.store.lastSchema,
      history: this.store.history(),
      ...(overrides?.success ? { overrides: overrides.data as PolicyOverrides } : {}),
    });
    const dqScore = dqConfig.enabled
      ? computeDqScore(profile, evaluation.alerts, dqConfig.weights, { scan_time: input.scanTime, ...timestamp })
      : null;
    const alerts: IncidentAlert[] = evaluation.alerts.map((a) => ({ ...a, attribute: a.attribute ?? "" }));
    const decisions = planIncidents(open, alerts, policyRow?.autoCloseAfter ?? DEFAULT_AUTO_CLOSE_AFTER);
    return { evaluation, dqScore, decisions };
  }

  private async transition(change: IncidentStateChange): Promise<IncidentStateResult> {
    const db = createDb(this.env.DB);
    const incident = await db.query.incidents.findFirst({
      where: and(eq(incidents.tenantId, change.tenantId), eq(incidents.id, change.incidentId)),
    });
    const open =
      incident && change.state === "OPEN"
        ? await openIncidents(db, { tenantId: incident.tenantId, id: incident.assetId })
        : undefined;
    const other = incident ? open?.get(incidentKey(incident.policy, incident.attribute)) : undefined;
    const refusal = checkTransition(incident, change.state, other);
    if (refusal || !incident) return refusal ?? { ok: false, problem: "not_found", message: "Incident not found" };
    await db.batch(
      transitionStatements(db, incident, {
        to: change.state,
        actor: change.actor,
        now: nowIso(),
        ...(change.note !== undefined ? { note: change.note } : {}),
        ...(change.reason !== undefined ? { reason: change.reason } : {}),
      }),
    );
    if (change.state === "CLOSED" && (change.reason === "EXPECTED" || change.reason === "FALSE_POSITIVE")) {
      this.store.releasePoints(await jobsOfIncident(db, incident), incident.policy, incident.attribute);
    }
    return { ok: true };
  }

  private async rebuild(asset: MonitoredAsset, since: string): Promise<{ incidents: number; alerts: number }> {
    const db = createDb(this.env.DB);
    const pending = await alertsWithoutIncident(db, asset, since);
    const before = await countIncidents(db, asset);
    const impact = await impactOf(this.env.DB, asset.id);
    const byJob = new Map<string, AlertRow[]>();
    for (const a of pending) byJob.set(a.jobId, [...(byJob.get(a.jobId) ?? []), a]);
    for (const [jobId, jobAlerts] of byJob) {
      const alerts: IncidentAlert[] = jobAlerts.map((a) => ({
        policy: a.type as IncidentAlert["policy"],
        policy_name: a.policyName,
        attribute: a.attribute,
        priority: a.priority,
        dimension: String(a.details.dimension ?? "") as IncidentAlert["dimension"],
      }));
      // Only the alerts' own incidents: clean scans are not known from alerts alone.
      const open = new Map(
        [...(await openIncidents(db, asset))].filter(([key]) =>
          alerts.some((a) => incidentKey(a.policy, a.attribute) === key),
        ),
      );
      const decisions = planIncidents(open, alerts, Number.POSITIVE_INFINITY);
      const scan = { asset, jobId, scanTime: jobAlerts[0]!.metricTime, impact };
      const [first, ...rest] = decisionStatements(db, scan, decisions);
      if (first) await db.batch([first, ...rest]);
    }
    return { incidents: (await countIncidents(db, asset)) - before, alerts: pending.length };
  }

  /**
   * Opens a ticket with the tenant's default template for each incident this scan opened,
   * when the Jira integration names one. Failures stay PENDING for the minute cron to retry.
   */
  private async openDefaultTickets(db: Db, asset: MonitoredAsset, opened: IncidentAlert[]): Promise<void> {
    try {
      const integration = await db.query.jiraIntegrations.findFirst({
        where: eq(jiraIntegrations.tenantId, asset.tenantId),
        columns: { defaultTemplateId: true },
      });
      const templateId = integration?.defaultTemplateId;
      if (!templateId) return;
      const open = await openIncidents(db, asset);
      for (const a of opened) {
        const incident = open.get(incidentKey(a.policy, a.attribute));
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
