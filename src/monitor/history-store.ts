/**
 * The AssetMonitor's own SQLite storage: the asset's metric history, the jobs it applied (with
 * their results, so a replay answers the same), and a little state (last schema, training). Nothing here reads D1.
 */

import type { AssetProfile, SchemaField } from "../scan/profile";
import { escapeName } from "./policies/metrics";
import type { EvaluatedPoint, HistoryPoint, MetricHistory, TrainingState } from "./policies/types";

/** Past points per metric the detectors look at (the longest default window is 30, weekly needs more). */
const HISTORY_PER_METRIC = 120;

export class HistoryStore {
  private readonly sql: SqlStorage;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
  }

  /** Creates the tables on first use; run in the object's constructor, under blockConcurrencyWhile. */
  migrate(): void {
    this.sql.exec(`CREATE TABLE IF NOT EXISTS applied_jobs (
      job_id TEXT PRIMARY KEY, applied_at TEXT NOT NULL, scan_time TEXT NOT NULL, result TEXT NOT NULL)`);
    this.sql.exec(`CREATE TABLE IF NOT EXISTS metric_points (
      metric TEXT NOT NULL, job_id TEXT NOT NULL, time TEXT NOT NULL, value REAL NOT NULL,
      excluded INTEGER NOT NULL, excluded_by TEXT, PRIMARY KEY (metric, job_id))`);
    this.sql.exec("CREATE INDEX IF NOT EXISTS metric_points_job ON metric_points (job_id)");
    this.sql.exec("CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  }

  /** The result recorded for a job already applied, or undefined. */
  appliedResult<T>(jobId: string): T | undefined {
    const row = this.sql
      .exec<{ result: string }>("SELECT result FROM applied_jobs WHERE job_id = ?", jobId)
      .toArray()[0];
    return row ? (JSON.parse(row.result) as T) : undefined;
  }

  /** The newest HISTORY_PER_METRIC points of every metric, oldest first. */
  history(): MetricHistory {
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

  get lastSchema(): SchemaField[] | undefined {
    return this.getState<SchemaField[]>("last_schema");
  }

  /** Policies still learning a metric's baseline, as of the last scan. */
  get training(): TrainingState[] {
    return this.getState<TrainingState[]>("training") ?? [];
  }

  /** Records an applied scan in one transaction: its points, the asset's state, and the job with its result. */
  recordScan(scan: {
    jobId: string;
    scanTime: string;
    appliedAt: string;
    points: EvaluatedPoint[];
    profile: AssetProfile;
    training: TrainingState[];
    result: unknown;
  }): void {
    this.storage.transactionSync(() => {
      for (const p of scan.points) {
        this.sql.exec(
          `INSERT INTO metric_points (metric, job_id, time, value, excluded, excluded_by) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (metric, job_id) DO NOTHING`,
          p.metric,
          scan.jobId,
          scan.scanTime,
          p.value,
          p.excluded ? 1 : 0,
          p.excluded_by ? JSON.stringify(p.excluded_by) : null,
        );
      }
      this.setState("last_schema", scan.profile.schema);
      this.setState("training", scan.training);
      this.sql.exec(
        "INSERT INTO applied_jobs (job_id, applied_at, scan_time, result) VALUES (?, ?, ?, ?)",
        scan.jobId,
        scan.appliedAt,
        scan.scanTime,
        JSON.stringify(scan.result),
      );
    });
  }

  /**
   * Puts back into the baseline the points of these jobs that a policy's alerts kept out of it,
   * for one attribute (or all, for an asset-level incident).
   */
  releasePoints(jobIds: readonly string[], policy: string, attribute: string): void {
    const prefix = `attr:${escapeName(attribute)}:`;
    for (const jobId of jobIds) {
      const points = this.sql
        .exec<{ metric: string; excluded_by: string | null }>(
          "SELECT metric, excluded_by FROM metric_points WHERE job_id = ? AND excluded = 1",
          jobId,
        )
        .toArray();
      for (const p of points) {
        const by = p.excluded_by ? (JSON.parse(p.excluded_by) as string[]) : [];
        const mine = attribute === "" || p.metric.startsWith(prefix) || p.metric === "duplicate_count";
        if (!by.includes(policy) || !mine) continue;
        const rest = by.filter((x) => x !== policy);
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
}
