import { DurableObject } from "cloudflare:workers";
import { and, eq, gte, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { createDb, type Db } from "../db";
import {
  alerts,
  assetPolicies,
  type CloseReason,
  dqScores,
  incidentHistory,
  incidents,
  jiraIntegrations,
  monitorAppliedJobs,
} from "../db/schema";
import type { Env } from "../env";
import { requestTicket } from "../integrations/tickets";
import { nowIso } from "../lib/time";
import type { AssetProfile, SchemaField } from "../scan/profile";
import { getDqScoreConfig } from "../settings/dq-score";
import { computeDqScore, type DqScore } from "./dq-score";
import {
  aggregationStatements,
  DEFAULT_AUTO_CLOSE_AFTER,
  type IncidentAsset,
  impactOf,
  incidentKey,
  openIncidents,
  type ScanAlert,
} from "./incidents";
import { evaluate } from "./policies/evaluate";
import { escapeName } from "./policies/metrics";
import { type PolicyOverrides, PolicyOverridesSchema } from "./policies/policies";
import type { HistoryPoint, MetricHistory, PolicyAlert } from "./policies/types";

/** Past points per metric the detectors look at (the longest default window is 30, weekly needs more). */
const HISTORY_PER_METRIC = 120;
/** Alert rows per INSERT: 20 columns each stays under D1's 100 bound parameters. */
const ALERTS_PER_STATEMENT = 4;

/** The asset as the monitor needs it; the caller read it from D1 with the job. */
export interface MonitoredAsset {
  tenantId: string;
  id: number;
  name: string;
  type: string;
  projectId: number;
  connectionId: number;
  idAttributes?: string[];
  timestampAttribute?: string;
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

export type { IncidentAsset };

export interface ApplyScanResult {
  jobId: string;
  alerts: number;
  dqScore: DqScore | null;
  /** True when this job had been applied before: nothing was written this time. */
  replay: boolean;
}

/**
 * One per asset (name "<tenant>:<assetId>"): applies scan results serially. It keeps the
 * asset's metric history in its own SQLite storage, evaluates the policies against it, and is
 * the only writer of the asset's alerts and DQ scores in D1. A job applied twice writes nothing
 * new: the job is remembered, and alert and score rows are unique per job.
 */
export class AssetMonitor extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(`CREATE TABLE IF NOT EXISTS applied_jobs (
        job_id TEXT PRIMARY KEY, applied_at TEXT NOT NULL, scan_time TEXT NOT NULL, result TEXT NOT NULL)`);
      this.sql.exec(`CREATE TABLE IF NOT EXISTS metric_points (
        metric TEXT NOT NULL, job_id TEXT NOT NULL, time TEXT NOT NULL, value REAL NOT NULL,
        excluded INTEGER NOT NULL, excluded_by TEXT, PRIMARY KEY (metric, job_id))`);
      this.sql.exec("CREATE INDEX IF NOT EXISTS metric_points_job ON metric_points (job_id)");
      this.sql.exec("CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    });
  }

  private getState<T>(key: string): T | undefined {
    const row = this.sql.exec<{ value: string }>("SELECT value FROM state WHERE key = ?", key).toArray()[0];
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  private setState(key: string, value: unknown): void {
    this.sql.exec(
      "INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      key,
      JSON.stringify(value),
    );
  }

  private history(): MetricHistory {
    const rows = this.sql
      .exec<{ metric: string; job_id: string; time: string; value: number; excluded: number }>(
        `SELECT metric, job_id, time, value, excluded FROM (
           SELECT *, ROW_NUMBER() OVER (PARTITION BY metric ORDER BY time DESC) AS rn FROM metric_points)
         WHERE rn <= ? ORDER BY metric, time`,
        HISTORY_PER_METRIC,
      )
      .toArray();
    const history: MetricHistory = {};
    for (const r of rows) {
      const point: HistoryPoint = { job_id: r.job_id, time: r.time, value: r.value, excluded: r.excluded === 1 };
      const points = history[r.metric];
      if (points) points.push(point);
      else history[r.metric] = [point];
    }
    return history;
  }

  /** The freshness (max timestamp) of the last applied scan: where a delta_only scan starts. */
  async lastFreshness(): Promise<string | undefined> {
    return this.getState<string>("last_freshness");
  }

  /**
   * Applies one scan's profile: policies, alerts, DQ score, incidents, metric history.
   * Idempotent per job: the D1 writes go in one batch that starts with the job's marker row,
   * so a replay (even after a crash between D1 and this object's storage) writes nothing twice.
   */
  async applyScan(input: ApplyScanInput): Promise<ApplyScanResult> {
    const done = this.sql
      .exec<{ result: string }>("SELECT result FROM applied_jobs WHERE job_id = ?", input.jobId)
      .toArray()[0];
    if (done) return { ...(JSON.parse(done.result) as ApplyScanResult), replay: true };

    const { asset, profile } = input;
    const db = createDb(this.env.DB);
    const [policyRow, dqConfig, open] = await Promise.all([
      db.query.assetPolicies.findFirst({
        where: and(eq(assetPolicies.tenantId, asset.tenantId), eq(assetPolicies.assetId, asset.id)),
      }),
      getDqScoreConfig(db, asset.tenantId, asset.id),
      openIncidents(db, asset),
    ]);
    const overrides = policyRow ? PolicyOverridesSchema.safeParse(policyRow.overrides) : undefined;
    const evaluation = evaluate({
      asset: {
        id: asset.id,
        name: asset.name,
        type: asset.type,
        ...(asset.idAttributes ? { id_attributes: asset.idAttributes } : {}),
        ...(asset.timestampAttribute ? { timestamp_attribute: asset.timestampAttribute } : {}),
      },
      job_id: input.jobId,
      scan_time: input.scanTime,
      profile,
      previous_schema: this.getState<SchemaField[]>("last_schema"),
      history: this.history(),
      ...(overrides?.success ? { overrides: overrides.data as PolicyOverrides } : {}),
    });

    const saveTime = nowIso();
    const rows = evaluation.alerts.map((a) => alertRow(input, a, saveTime));
    const statements: BatchItem<"sqlite">[] = [
      db.insert(monitorAppliedJobs).values({
        jobId: input.jobId,
        tenantId: asset.tenantId,
        assetId: asset.id,
        appliedAt: saveTime,
      }),
    ];
    for (let i = 0; i < rows.length; i += ALERTS_PER_STATEMENT) {
      statements.push(
        db
          .insert(alerts)
          .values(rows.slice(i, i + ALERTS_PER_STATEMENT))
          .onConflictDoNothing(),
      );
    }
    let dqScore: DqScore | null = null;
    if (dqConfig.enabled) {
      dqScore = computeDqScore(profile, evaluation.alerts, dqConfig.weights, {
        scan_time: input.scanTime,
        ...(asset.timestampAttribute ? { timestamp_attribute: asset.timestampAttribute } : {}),
      });
      statements.push(
        db
          .insert(dqScores)
          .values({
            jobId: input.jobId,
            tenantId: asset.tenantId,
            assetId: asset.id,
            scoredAt: input.scanTime,
            ...dqScore,
          })
          .onConflictDoNothing(),
      );
    }
    const scanAlerts: ScanAlert[] = evaluation.alerts.map((a) => ({
      policy: a.policy,
      policyName: a.policy_name,
      attribute: a.attribute ?? "",
      priority: a.priority,
      dimension: a.dimension,
    }));
    const opensNew = scanAlerts.some((a) => !open.has(incidentKey(a.policy, a.attribute)));
    statements.push(
      ...aggregationStatements(db, {
        asset,
        jobId: input.jobId,
        scanTime: input.scanTime,
        alerts: scanAlerts,
        open,
        impact: opensNew ? await impactOf(this.env.DB, asset.id) : "LOW",
        autoCloseAfter: policyRow?.autoCloseAfter ?? DEFAULT_AUTO_CLOSE_AFTER,
      }),
    );

    let replay = false;
    try {
      await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
    } catch (err) {
      if (!/UNIQUE constraint failed: monitor_applied_jobs/.test(String(err))) throw err;
      // Written before this object could record it: D1 has it all; record the history below.
      replay = true;
    }

    if (!replay && opensNew) this.ctx.waitUntil(this.openDefaultTickets(db, asset, scanAlerts, open));
    const result: ApplyScanResult = { jobId: input.jobId, alerts: rows.length, dqScore, replay };
    this.ctx.storage.transactionSync(() => {
      for (const p of evaluation.points) {
        this.sql.exec(
          `INSERT INTO metric_points (metric, job_id, time, value, excluded, excluded_by) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (metric, job_id) DO NOTHING`,
          p.metric,
          input.jobId,
          input.scanTime,
          p.value,
          p.excluded ? 1 : 0,
          p.excluded_by ? JSON.stringify(p.excluded_by) : null,
        );
      }
      this.setState("last_schema", profile.schema);
      if (profile.freshness) this.setState("last_freshness", profile.freshness);
      this.setState("training", evaluation.training);
      this.sql.exec(
        "INSERT INTO applied_jobs (job_id, applied_at, scan_time, result) VALUES (?, ?, ?, ?)",
        input.jobId,
        saveTime,
        input.scanTime,
        JSON.stringify({ ...result, replay: false }),
      );
    });
    return result;
  }

  /**
   * Opens a ticket with the tenant's default template for each incident this scan opened,
   * when the Jira integration names one. Failures stay PENDING for the minute cron to retry.
   */
  private async openDefaultTickets(
    db: Db,
    asset: MonitoredAsset,
    scanAlerts: ScanAlert[],
    wasOpen: Map<string, unknown>,
  ): Promise<void> {
    try {
      const integration = await db.query.jiraIntegrations.findFirst({
        where: eq(jiraIntegrations.tenantId, asset.tenantId),
        columns: { defaultTemplateId: true },
      });
      const templateId = integration?.defaultTemplateId;
      if (!templateId) return;
      const open = await openIncidents(db, asset);
      for (const a of scanAlerts) {
        const key = incidentKey(a.policy, a.attribute);
        const incident = open.get(key);
        if (!incident || wasOpen.has(key)) continue;
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

  /**
   * Closes or reopens an incident by hand. Closing as EXPECTED or FALSE_POSITIVE gives the
   * points its alerts kept out of the baseline back to it, so the detector learns the new normal.
   */
  async setIncidentState(input: {
    tenantId: string;
    incidentId: number;
    state: "OPEN" | "CLOSED";
    note?: string;
    reason?: CloseReason;
    actor: string;
  }): Promise<{ ok: true } | { ok: false; status: 404 | 409; message: string }> {
    const db = createDb(this.env.DB);
    const incident = await db.query.incidents.findFirst({
      where: and(eq(incidents.tenantId, input.tenantId), eq(incidents.id, input.incidentId)),
    });
    if (!incident) return { ok: false, status: 404, message: "Incident not found" };
    if (incident.state === input.state) {
      return { ok: false, status: 409, message: `The incident is already ${input.state}` };
    }
    const now = nowIso();
    const history = {
      tenantId: incident.tenantId,
      incidentId: incident.id,
      time: now,
      fromState: incident.state,
      toState: input.state,
      alertRefs: [],
      actor: input.actor,
      note: input.note ?? null,
      reason: input.reason ?? null,
    };
    if (input.state === "OPEN") {
      const other = await db.query.incidents.findFirst({
        where: and(
          eq(incidents.tenantId, incident.tenantId),
          eq(incidents.assetId, incident.assetId),
          eq(incidents.policy, incident.policy),
          eq(incidents.attribute, incident.attribute),
          eq(incidents.state, "OPEN"),
        ),
        columns: { id: true },
      });
      if (other) return { ok: false, status: 409, message: `Incident ${other.id} is open for the same problem` };
    }
    await db.batch([
      db
        .update(incidents)
        .set(
          input.state === "CLOSED"
            ? { state: "CLOSED", closedAt: now, closeReason: input.reason ?? "NO_ACTION_NEEDED", updatedAt: now }
            : { state: "OPEN", closedAt: null, closeReason: null, cleanScans: 0, updatedAt: now },
        )
        .where(eq(incidents.id, incident.id)),
      db
        .update(incidents)
        .set({ firstResponseAt: now })
        .where(and(eq(incidents.id, incident.id), isNull(incidents.firstResponseAt))),
      db.insert(incidentHistory).values(history),
    ]);
    if (input.state === "CLOSED" && (input.reason === "EXPECTED" || input.reason === "FALSE_POSITIVE")) {
      await this.releasePoints(db, incident);
    }
    return { ok: true };
  }

  /** Puts the points an incident's alerts kept out of the baseline back into it. */
  private async releasePoints(db: Db, incident: typeof incidents.$inferSelect): Promise<void> {
    const jobs = await db
      .selectDistinct({ jobId: alerts.jobId })
      .from(alerts)
      .where(
        and(
          eq(alerts.tenantId, incident.tenantId),
          eq(alerts.assetId, incident.assetId),
          eq(alerts.type, incident.policy),
          eq(alerts.attribute, incident.attribute),
          gte(alerts.saveTime, incident.openedAt),
        ),
      );
    const prefix = `attr:${escapeName(incident.attribute)}:`;
    for (const { jobId } of jobs) {
      const points = this.sql
        .exec<{ metric: string; excluded_by: string | null }>(
          "SELECT metric, excluded_by FROM metric_points WHERE job_id = ? AND excluded = 1",
          jobId,
        )
        .toArray();
      for (const p of points) {
        const by = p.excluded_by ? (JSON.parse(p.excluded_by) as string[]) : [];
        const mine = incident.attribute === "" || p.metric.startsWith(prefix) || p.metric === "duplicate_count";
        if (!by.includes(incident.policy) || !mine) continue;
        const rest = by.filter((x) => x !== incident.policy);
        this.sql.exec(
          "UPDATE metric_points SET excluded = ?, excluded_by = ? WHERE metric = ? AND job_id = ?",
          rest.length > 0 ? 1 : 0,
          rest.length > 0 ? JSON.stringify(rest) : null,
          p.metric,
          jobId,
        );
      }
    }
  }

  /**
   * Folds the asset's alerts since `since` that no incident refers to yet into incidents, job
   * by job in time order, with the live rules (no auto-close: clean scans are not in the
   * alerts). Running it again finds every alert referred to and changes nothing.
   */
  async rebuildIncidents(input: {
    asset: IncidentAsset;
    since: string;
  }): Promise<{ incidents: number; alerts: number }> {
    const { asset } = input;
    const db = createDb(this.env.DB);
    const pending = await db
      .select()
      .from(alerts)
      .where(
        and(
          eq(alerts.tenantId, asset.tenantId),
          eq(alerts.assetId, asset.id),
          gte(alerts.saveTime, input.since),
          // Only this asset's incidents can refer to its alerts: keeps the check per asset, not per tenant.
          sql`NOT EXISTS (SELECT 1 FROM incidents i JOIN incident_history h ON h.incident_id = i.id, json_each(h.alert_refs) r
                WHERE i.tenant_id = ${asset.tenantId} AND i.asset_id = ${asset.id} AND r.value = ${alerts.id})`,
        ),
      )
      .orderBy(alerts.metricTime, alerts.id);
    const before = await db.$count(
      incidents,
      and(eq(incidents.tenantId, asset.tenantId), eq(incidents.assetId, asset.id)),
    );
    const byJob = new Map<string, typeof pending>();
    for (const a of pending) {
      const list = byJob.get(a.jobId);
      if (list) list.push(a);
      else byJob.set(a.jobId, [a]);
    }
    for (const [jobId, jobAlerts] of byJob) {
      const open = await openIncidents(db, asset);
      const statements = aggregationStatements(db, {
        asset,
        jobId,
        scanTime: jobAlerts[0]!.metricTime,
        alerts: jobAlerts.map((a) => ({
          policy: a.type,
          policyName: a.policyName,
          attribute: a.attribute,
          priority: a.priority,
          dimension: String(a.details.dimension ?? ""),
        })),
        // Only the alerts' own incidents: clean scans are not known from alerts alone.
        open: new Map(
          [...open].filter(([, i]) => jobAlerts.some((a) => a.type === i.policy && a.attribute === i.attribute)),
        ),
        impact: await impactOf(this.env.DB, asset.id),
        autoCloseAfter: Number.POSITIVE_INFINITY,
      });
      if (statements.length > 0) await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
    }
    const after = await db.$count(
      incidents,
      and(eq(incidents.tenantId, asset.tenantId), eq(incidents.assetId, asset.id)),
    );
    return { incidents: after - before, alerts: pending.length };
  }

  /** Policies still learning a metric's baseline, as of the last scan. */
  async training(): Promise<unknown[]> {
    return this.getState<unknown[]>("training") ?? [];
  }
}

function alertRow(input: ApplyScanInput, a: PolicyAlert, saveTime: string): typeof alerts.$inferInsert {
  const { asset } = input;
  return {
    tenantId: asset.tenantId,
    assetId: asset.id,
    projectId: asset.projectId,
    connectionId: asset.connectionId,
    jobId: input.jobId,
    type: a.policy,
    policyName: a.policy_name,
    attribute: a.attribute ?? "",
    priority: a.priority,
    description: a.description,
    sourceName: asset.name,
    sourceType: asset.type,
    isNotificationEnabled: true,
    metric: a.metric,
    metricValue: a.metric_value,
    metricTime: input.scanTime,
    createTime: input.createdAt,
    saveTime,
    details: {
      observed: a.observed,
      ...(a.expected !== undefined ? { expected: a.expected } : {}),
      ...(a.strategy ? { strategy: a.strategy } : {}),
      ...(a.training_window ? { training_window: a.training_window } : {}),
      ...(a.training_size !== undefined ? { training_size: a.training_size } : {}),
      dimension: a.dimension,
    },
  };
}
