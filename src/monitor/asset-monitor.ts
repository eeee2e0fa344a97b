import { DurableObject } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { createDb } from "../db";
import { alerts, assetPolicies, dqScores } from "../db/schema";
import type { Env } from "../env";
import { nowIso } from "../lib/time";
import type { AssetProfile, SchemaField } from "../scan/profile";
import { getDqScoreConfig } from "../settings/dq-score";
import { computeDqScore, type DqScore } from "./dq-score";
import { evaluate } from "./policies/evaluate";
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

  /** Applies one scan's profile: policies, alerts, DQ score, history. Idempotent per job. */
  async applyScan(input: ApplyScanInput): Promise<ApplyScanResult> {
    const done = this.sql
      .exec<{ result: string }>("SELECT result FROM applied_jobs WHERE job_id = ?", input.jobId)
      .toArray()[0];
    if (done) return { ...(JSON.parse(done.result) as ApplyScanResult), replay: true };

    const { asset, profile } = input;
    const db = createDb(this.env.DB);
    const [policyRow, dqConfig] = await Promise.all([
      db.query.assetPolicies.findFirst({
        where: and(eq(assetPolicies.tenantId, asset.tenantId), eq(assetPolicies.assetId, asset.id)),
      }),
      getDqScoreConfig(db, asset.tenantId, asset.id),
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

    // D1 first: if the object dies before it records the job, a retry recomputes the same
    // alerts from the same history and the unique keys absorb them.
    const saveTime = nowIso();
    const rows = evaluation.alerts.map((a) => alertRow(input, a, saveTime));
    const statements = [];
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
    if (statements.length > 0) await db.batch(statements as [(typeof statements)[number], ...typeof statements]);

    const result: ApplyScanResult = { jobId: input.jobId, alerts: rows.length, dqScore, replay: false };
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
        JSON.stringify(result),
      );
    });
    return result;
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
