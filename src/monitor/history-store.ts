/**
 * The AssetMonitor's own SQLite storage: the asset's metric history, the jobs it applied (with
 * their results, so a replay answers the same), and a little state (last schema, training,
 * attribute kinds). Nothing here reads D1.
 *
 * Adopting a new level (a change point): a metric's points before the level began get an
 * `offset` (the level minus their median), so the baseline keeps the history's spread around the
 * new level instead of waiting for a window of new points; share metrics (categories, patterns)
 * start their baseline at the change point instead (`change_points`), since a category that did
 * not exist before has no old points to move.
 */

import type { MetricSummary, PrunedHistory, RecordedPoint, TrainingState } from "../contracts/asset-monitor";
import type { DqScore } from "../contracts/dimensions";
import type { SchemaField } from "../contracts/profile";
import type {
  AlertMetric,
  CloseReason,
  IncidentEntry,
  KeptAlert,
  Level,
  NewIncidentEntry,
  ScanJobRow,
} from "../db/schema";
import { LEASE_SIZE } from "../db/shards";
import { median } from "../detection/anomaly";
import type { ClosedCondition } from "../detection/closes";
import { type ChangePoint, KeptHistory } from "../detection/kept-history";
import type { KnownKind } from "../detection/kinds";
import { escapeName } from "../detection/metrics";
import type { EvaluatedPoint, MetricHistory } from "../detection/types";

/** What adopting an incident's level changes in the history; planned before, written after the D1 batch. */
export interface AdoptionPlan {
  policy: string;
  attribute: string;
  /** Points excluded by the policy from this time on are released into the baseline. */
  releaseSince: string;
  /** Scalar metrics: points before `before` move by `shift`. */
  offsets: Array<{ metric: string; shift: number; before: string }>;
  /** Share metrics under `prefix` count only from `since` on. */
  changePoints: Array<{ prefix: string; since: string }>;
}

/** Metric name parts whose metrics are shares of a whole, restarted at a change point rather than moved. */
const SHARE_PARTS = [":value:", ":pattern:"];

/** The points excluded from a time on, as adoptions find them (through the index metric_points_excluded). */
export const EXCLUDED_SINCE = "WHERE excluded = 1 AND time >= ?";

/** Past points per metric the detectors look at (the longest default window is 30, weekly needs more). */
export const HISTORY_PER_METRIC = 120;

/** How many alert ids an asset's object can give over its life (issue 38): 16.7 M. */
export const ALERT_IDS_PER_ASSET = 2 ** 24;
/** Asset ids a shard's id range (LEASE_SIZE) may reach for their alert ids to be formed: 8.4 M. */
const ASSETS_PER_LEASE = 2 ** 23;
/** Id ranges (shard leases, src/tenancy/shards.ts) whose assets' alert ids stay below 2^53. */
const ALERT_LEASES = 2 ** 6;

/**
 * The id below the first alert id an asset's object gives (issue 38). Asset ids are
 * `lease × LEASE_SIZE + n` (tenant shards: each shard allocates from its own range), and the
 * object's ids are `(lease × 2^23 + n) × 2^24 + k`: two assets' ranges never meet, every id is
 * below 2^53 (a JSON-safe integer) for the first 64 ranges and 8.4 M assets in each, and every id
 * D1's alerts table gave (one autoincrement, ~8 M rows in a full 10 GB database, all on shard 0)
 * stays below the first of them, so an alert moved in from D1 keeps its id and sorts before the
 * object's own.
 */
export function alertIdBase(assetId: number): number {
  const lease = Math.floor(assetId / LEASE_SIZE);
  const n = assetId - lease * LEASE_SIZE;
  if (lease >= ALERT_LEASES || n >= ASSETS_PER_LEASE) {
    throw new Error(`asset ${assetId} is past the ids its alerts can take (lease ${lease}, asset ${n})`);
  }
  return (lease * ASSETS_PER_LEASE + n) * ALERT_IDS_PER_ASSET;
}

/** An alert's condition in a scan: its policy, attribute and segment (segmentKey). */
export interface AlertKey {
  type: string;
  attribute: string;
  segment: string;
}

/** The columns of the alerts table, as a KeptAlert names them. */
const ALERT_COLUMNS = `id, job_id AS jobId, type, policy_name AS policyName, attribute, segment, priority, description,
  source_name AS sourceName, source_type AS sourceType, notify, metric, metric_value AS metricValue,
  metric_time AS metricTime, create_time AS createTime, save_time AS saveTime, details`;

type AlertRecord = Omit<KeptAlert, "isNotificationEnabled" | "details"> & { notify: number; details: string };

function keptAlert({ notify, details, ...r }: AlertRecord): KeptAlert {
  return { ...r, isNotificationEnabled: notify === 1, details: JSON.parse(details) as Record<string, unknown> };
}

const ENTRY_COLUMNS = `seq, incident_id AS incidentId, legacy_id AS legacyId, time, from_state AS fromState,
  to_state AS toState, alert_refs AS alertRefs, actor, note, reason, job_id AS jobId, details, alert_metrics AS alertMetrics`;

type EntryRecord = Omit<IncidentEntry, "alertRefs" | "details" | "alertMetrics"> & {
  alertRefs: string;
  details: string | null;
  alertMetrics: string | null;
} & Record<string, SqlStorageValue>;

function incidentEntry({ alertRefs, details, alertMetrics, ...r }: EntryRecord): IncidentEntry {
  return {
    ...r,
    alertRefs: JSON.parse(alertRefs) as number[],
    details: details === null ? null : (JSON.parse(details) as Record<string, unknown>),
    alertMetrics: alertMetrics === null ? null : (JSON.parse(alertMetrics) as AlertMetric[]),
  };
}

/** A DQ score as the store keeps it: the job that scored, when, and its dimensions. */
export interface StoredDqScore extends DqScore {
  jobId: string;
  scoredAt: string;
}

export class HistoryStore {
  private readonly sql: SqlStorage;
  /**
   * history() as storage holds it, kept in step by recordScan while the object stays loaded (see
   * KeptHistory); null until read, when too large to keep, and after any other change to the points
   * or change points (adoption, retention) or a scan it cannot place, which reads it again.
   */
  private kept: KeptHistory | null = null;

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
    // No query reads points by job alone (the key leads with the metric): an index on job_id
    // only cost each point a second insert. Objects made before 2026-11-26 have one.
    this.sql.exec("DROP INDEX IF EXISTS metric_points_job");
    // history() seeks each metric's newest points through it; built once on objects made before.
    this.sql.exec("CREATE INDEX IF NOT EXISTS metric_points_time ON metric_points (metric, time)");
    // An adoption looks for the points excluded since its incident opened: a few among all of the
    // asset's points, and only they are indexed (planAdoption 1.1 ms at 2,000 scans of 540 metrics,
    // where a scan of every point took 37 ms: npm run bench:history).
    this.sql.exec("CREATE INDEX IF NOT EXISTS metric_points_excluded ON metric_points (time) WHERE excluded = 1");
    this.sql.exec("CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const columns = this.sql.exec<{ name: string }>("PRAGMA table_info(metric_points)").toArray();
    if (!columns.some((c) => c.name === "offset")) {
      this.sql.exec("ALTER TABLE metric_points ADD COLUMN offset REAL NOT NULL DEFAULT 0");
    }
    this.sql.exec("CREATE TABLE IF NOT EXISTS change_points (prefix TEXT PRIMARY KEY, since TEXT NOT NULL)");
    // The asset's DQ score per scan (GET …/dq_score/history), kept here rather than in D1 (issue 38).
    this.sql.exec(`CREATE TABLE IF NOT EXISTS dq_scores (
      job_id TEXT PRIMARY KEY, scored_at TEXT NOT NULL, completeness REAL NOT NULL, accuracy REAL NOT NULL,
      consistency REAL NOT NULL, timeliness REAL NOT NULL, overall REAL NOT NULL)`);
    this.sql.exec("CREATE INDEX IF NOT EXISTS dq_scores_time ON dq_scores (scored_at, job_id)");
    // The asset's alerts (scan alerts, alerts by refs, metric history), kept here rather than in D1
    // (issue 38); ids: see alertIdBase. `applied` 0: kept before the scan's D1 batch, and shown
    // once the job is recorded as applied (a batch that failed leaves none to see).
    this.sql.exec(`CREATE TABLE IF NOT EXISTS alerts (
      id INTEGER PRIMARY KEY, job_id TEXT NOT NULL, type TEXT NOT NULL, policy_name TEXT NOT NULL,
      attribute TEXT NOT NULL, segment TEXT NOT NULL, priority TEXT NOT NULL, description TEXT NOT NULL,
      source_name TEXT NOT NULL, source_type TEXT NOT NULL, notify INTEGER NOT NULL, metric TEXT NOT NULL,
      metric_value TEXT NOT NULL, metric_time TEXT NOT NULL, create_time TEXT NOT NULL, save_time TEXT NOT NULL,
      details TEXT NOT NULL, applied INTEGER NOT NULL, UNIQUE (job_id, type, attribute, segment))`);
    this.sql.exec("CREATE INDEX IF NOT EXISTS alerts_save_time ON alerts (save_time)");
    this.sql.exec("CREATE INDEX IF NOT EXISTS alerts_metric ON alerts (metric, id)");
    // The asset's finished scan jobs, each its D1 row as it ended (issue 38): D1 keeps a job only
    // while it runs. `pending` 1: kept before the D1 batch that ends the job, from the row as the
    // caller read it, until that batch says how it ended (a read shows D1's row while it is there).
    this.sql.exec(`CREATE TABLE IF NOT EXISTS scan_jobs (
      id TEXT PRIMARY KEY, created_at TEXT NOT NULL, uploaded INTEGER NOT NULL, record TEXT NOT NULL,
      pending INTEGER NOT NULL)`);
    this.sql.exec("CREATE INDEX IF NOT EXISTS scan_jobs_created ON scan_jobs (created_at, id)");
    // The history of the asset's incidents (issue 38), one row per entry; what D1's
    // incident_history held. `opens`: the key (incidentKey) of an incident the entry's scan opens,
    // while its id is not known (kept before the D1 batch that inserts it; settleIncidentEntries);
    // `applied` 0: kept before the scan's D1 batch, shown once the job is recorded as applied.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS incident_history (
      seq INTEGER PRIMARY KEY, incident_id INTEGER, opens TEXT, legacy_id INTEGER UNIQUE, time TEXT NOT NULL,
      from_state TEXT, to_state TEXT NOT NULL, alert_refs TEXT NOT NULL, actor TEXT NOT NULL, note TEXT,
      reason TEXT, job_id TEXT, details TEXT, alert_metrics TEXT, applied INTEGER NOT NULL,
      UNIQUE (incident_id, job_id))`);
    this.sql.exec("CREATE INDEX IF NOT EXISTS incident_history_pending ON incident_history (job_id) WHERE applied = 0");
    // The answers of closed incidents (detection/closes.ts), one per condition: the latest close.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS closed_conditions (
      policy TEXT NOT NULL, attribute TEXT NOT NULL, segment TEXT NOT NULL, direction INTEGER NOT NULL,
      reason TEXT NOT NULL, incident_id INTEGER NOT NULL, closed_at TEXT NOT NULL, deviation REAL,
      severity TEXT NOT NULL, metric TEXT, observed REAL, band_low REAL, band_high REAL,
      PRIMARY KEY (policy, attribute, segment, direction))`);
  }

  /** After the object's storage was deleted: forgets what it kept in memory and makes the tables anew. */
  reset(): void {
    this.kept = null;
    this.migrate();
  }

  /** The conditions closed with an answering reason (detection/closes.ts), the latest close of each. */
  closes(): ClosedCondition[] {
    return this.sql
      .exec<{
        policy: string;
        attribute: string;
        segment: string;
        direction: number;
        reason: string;
        incident_id: number;
        closed_at: string;
        deviation: number | null;
        severity: string;
        metric: string | null;
        observed: number | null;
        band_low: number | null;
        band_high: number | null;
      }>("SELECT * FROM closed_conditions")
      .toArray()
      .map((r) => ({
        policy: r.policy,
        attribute: r.attribute,
        segment: r.segment,
        direction: r.direction,
        reason: r.reason as CloseReason,
        incidentId: r.incident_id,
        closedAt: r.closed_at,
        deviation: r.deviation,
        severity: r.severity as Level,
        metric: r.metric,
        observed: r.observed,
        band: r.band_low !== null && r.band_high !== null ? { low: r.band_low, high: r.band_high } : null,
      }));
  }

  /** Remembers a close (replacing the condition's earlier one). */
  rememberClose(c: ClosedCondition): void {
    this.sql.exec(
      `INSERT INTO closed_conditions (policy, attribute, segment, direction, reason, incident_id, closed_at, deviation,
         severity, metric, observed, band_low, band_high)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (policy, attribute, segment, direction) DO UPDATE SET reason = excluded.reason,
         incident_id = excluded.incident_id, closed_at = excluded.closed_at, deviation = excluded.deviation,
         severity = excluded.severity, metric = excluded.metric, observed = excluded.observed,
         band_low = excluded.band_low, band_high = excluded.band_high`,
      c.policy,
      c.attribute,
      c.segment,
      c.direction,
      c.reason,
      c.incidentId,
      c.closedAt,
      c.deviation,
      c.severity,
      c.metric,
      c.observed,
      c.band?.low ?? null,
      c.band?.high ?? null,
    );
  }

  /** Forgets the close of an incident reopened by hand: its condition is a problem after all. */
  forgetClose(incidentId: number): void {
    this.sql.exec("DELETE FROM closed_conditions WHERE incident_id = ?", incidentId);
  }

  /**
   * Drops metric points, applied-job records and DQ scores from before `cutoff` (retention), and the
   * closes of incidents closed before it (an answer older than the data it was about is forgotten
   * with it); returns how many points, job records and scores it dropped.
   */
  pruneBefore(cutoff: string, openSince?: string): PrunedHistory {
    this.kept = null;
    const drop = (table: string, column: string) => {
      const [{ n }] = this.sql
        .exec<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${column} < ?`, cutoff)
        .toArray() as [{ n: number }];
      if (n > 0) this.sql.exec(`DELETE FROM ${table} WHERE ${column} < ?`, cutoff);
      return n;
    };
    this.sql.exec("DELETE FROM closed_conditions WHERE closed_at < ?", cutoff);
    // The history of incidents closed before the cutoff (D1's retention deletes the incidents by the
    // same time: their closing entry's).
    const closedBefore = `incident_id IN (SELECT incident_id FROM (SELECT incident_id, to_state, max(time) AS last
      FROM incident_history WHERE applied = 1 AND incident_id IS NOT NULL GROUP BY incident_id)
      WHERE to_state = 'CLOSED' AND last < ?)`;
    const [{ n: entries }] = this.sql
      .exec<{ n: number }>(`SELECT count(*) AS n FROM incident_history WHERE ${closedBefore}`, cutoff)
      .toArray() as [{ n: number }];
    if (entries > 0) this.sql.exec(`DELETE FROM incident_history WHERE ${closedBefore}`, cutoff);
    return {
      incidentHistory: entries,
      points: drop("metric_points", "time"),
      appliedJobs: drop("applied_jobs", "applied_at"),
      dqScores: drop("dq_scores", "scored_at"),
      scanJobs: drop("scan_jobs", "created_at"),
      // An alert at or after the opening of an open incident of the asset stays (what it is about).
      alerts: (() => {
        const before = openSince !== undefined && openSince < cutoff ? openSince : cutoff;
        const [{ n }] = this.sql
          .exec<{ n: number }>("SELECT count(*) AS n FROM alerts WHERE save_time < ?", before)
          .toArray() as [{ n: number }];
        if (n > 0) this.sql.exec("DELETE FROM alerts WHERE save_time < ?", before);
        return n;
      })(),
    };
  }

  /**
   * Keeps a scan's alerts (before its D1 batch, which refers to their ids): an alert of a condition
   * the job already has here keeps its id, a new one takes the next; the job's alerts of other
   * conditions (from an attempt whose D1 batch failed, judged differently) go. Returns them with their ids.
   */
  keepAlerts(assetId: number, jobId: string, alerts: ReadonlyArray<Omit<KeptAlert, "id" | "jobId">>): KeptAlert[] {
    return this.storage.transactionSync(() => {
      const held = new Map(
        this.sql
          .exec<{ id: number; type: string; attribute: string; segment: string }>(
            "SELECT id, type, attribute, segment FROM alerts WHERE job_id = ?",
            jobId,
          )
          .toArray()
          .map((r) => [JSON.stringify([r.type, r.attribute, r.segment]), r.id]),
      );
      const base = alertIdBase(assetId);
      let last = this.getState<number>("last_alert_id") ?? base;
      const kept = alerts.map((a) => {
        const key = JSON.stringify([a.type, a.attribute, a.segment]);
        const id = held.get(key) ?? ++last;
        return { ...a, id, jobId };
      });
      if (last > base + ALERT_IDS_PER_ASSET - 1)
        throw new Error(`asset ${assetId} has used its ${ALERT_IDS_PER_ASSET} alert ids`);
      // The job's earlier attempt goes whole (its conditions' ids are kept above), then the scan's alerts.
      this.sql.exec("DELETE FROM alerts WHERE job_id = ?", jobId);
      this.insertAlerts(kept, false);
      this.setState("last_alert_id", last);
      return kept;
    });
  }

  /** Alerts as they are (the scan's own, or moved in from D1); an alert held already stays as it is. */
  private insertAlerts(alerts: readonly KeptAlert[], applied: boolean): void {
    if (alerts.length === 0) return;
    this.sql.exec(
      `INSERT INTO alerts (id, job_id, type, policy_name, attribute, segment, priority, description, source_name,
         source_type, notify, metric, metric_value, metric_time, create_time, save_time, details, applied)
       SELECT a.value ->> 0, a.value ->> 1, a.value ->> 2, a.value ->> 3, a.value ->> 4, a.value ->> 5, a.value ->> 6,
         a.value ->> 7, a.value ->> 8, a.value ->> 9, a.value ->> 10, a.value ->> 11, a.value ->> 12, a.value ->> 13,
         a.value ->> 14, a.value ->> 15, a.value ->> 16, ?
       FROM json_each(?) a WHERE true ON CONFLICT DO NOTHING`,
      applied ? 1 : 0,
      JSON.stringify(
        alerts.map((a) => [
          a.id,
          a.jobId,
          a.type,
          a.policyName,
          a.attribute,
          a.segment,
          a.priority,
          a.description,
          a.sourceName,
          a.sourceType,
          a.isNotificationEnabled ? 1 : 0,
          a.metric,
          a.metricValue,
          a.metricTime,
          a.createTime,
          a.saveTime,
          JSON.stringify(a.details),
        ]),
      ),
    );
  }

  /** The alerts `where` selects (a condition on the table's columns, with its bound values), by id. */
  private alertsWhere(where: string, ...binds: SqlStorageValue[]): KeptAlert[] {
    return this.sql
      .exec<AlertRecord & Record<string, SqlStorageValue>>(
        `SELECT ${ALERT_COLUMNS} FROM alerts WHERE ${where}`,
        ...binds,
      )
      .toArray()
      .map(keptAlert);
  }

  /** The alerts one job raised, by id (`pending`: also while the job is not recorded as applied). */
  alertsOfJob(jobId: string, pending = false): KeptAlert[] {
    return this.alertsWhere(`job_id = ? ${pending ? "" : "AND applied = 1"} ORDER BY id`, jobId);
  }

  /** The alerts with the given ids (unknown ones are absent), by id. */
  alertsByIds(ids: readonly number[]): KeptAlert[] {
    return this.alertsWhere("id IN (SELECT value FROM json_each(?)) AND applied = 1 ORDER BY id", JSON.stringify(ids));
  }

  /** The alerts on one metric, by id. */
  alertsOfMetric(metric: string): KeptAlert[] {
    return this.alertsWhere("metric = ? AND applied = 1 ORDER BY id", metric);
  }

  /** The alerts saved since `since`, oldest first (metric time, then id). */
  alertsSince(since: string): KeptAlert[] {
    return this.alertsWhere("save_time >= ? AND applied = 1 ORDER BY metric_time, id", since);
  }

  /** The newest alert of a condition (policy, attribute, segment). */
  lastAlertOf(key: AlertKey): KeptAlert | undefined {
    return this.alertsWhere(
      "type = ? AND attribute = ? AND segment = ? AND applied = 1 ORDER BY id DESC LIMIT 1",
      key.type,
      key.attribute,
      key.segment,
    )[0];
  }

  /** One page of the asset's DQ scores, newest first (scored_at, then job id), `limit` rows before `before`. */
  dqScores(limit: number, before?: string): StoredDqScore[] {
    return this.sql
      .exec<StoredDqScore & Record<string, SqlStorageValue>>(
        `SELECT job_id AS jobId, scored_at AS scoredAt, completeness, accuracy, consistency, timeliness, overall
         FROM dq_scores ${before === undefined ? "" : "WHERE scored_at < ?"} ORDER BY scored_at DESC, job_id DESC LIMIT ?`,
        ...(before === undefined ? [] : [before]),
        limit,
      )
      .toArray();
  }

  /**
   * One step of the move of the asset's DQ scores, job records and alerts out of D1 (issue 38): copies
   * them in (rows held already are left as they are, so a step run twice changes nothing) and
   * counts the step; returns the count, which D1's mark of the asset takes once its rows are deleted.
   */
  moveIn(
    scores: readonly StoredDqScore[],
    applied: ReadonlyArray<{ jobId: string; appliedAt: string; result: unknown }>,
    alerts: readonly KeptAlert[] = [],
    jobs: readonly ScanJobRow[] = [],
    entries: readonly IncidentEntry[] = [],
  ) {
    return this.storage.transactionSync(() => {
      this.insertAlerts(alerts, true);
      this.insertEntries(entries, true);
      for (const j of jobs) this.insertJob(j, false);
      for (const s of scores) this.insertDqScore(s);
      for (const a of applied) this.recordApplied(a.jobId, a.appliedAt, a.result);
      return this.countStep();
    });
  }

  /**
   * Keeps a scan's incident history entries before its D1 batch (shown once the job is recorded as
   * applied, see recordScan): the job's entries of an earlier attempt whose batch failed go first.
   * An entry of an incident the scan opens names it by its key (`opens`) until settleIncidentEntries.
   */
  keepIncidentEntries(jobId: string, entries: readonly NewIncidentEntry[]): void {
    this.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM incident_history WHERE job_id = ? AND applied = 0", jobId);
      this.insertEntries(
        entries.map((e) => ({ ...e, jobId })),
        false,
      );
    });
  }

  /** The incidents a job's D1 batch opened, by key: its pending entries that name them take their ids. */
  settleIncidentEntries(jobId: string, opened: ReadonlyArray<{ id: number; key: string }>): void {
    for (const o of opened) {
      this.sql.exec(
        "UPDATE OR IGNORE incident_history SET incident_id = ?, opens = NULL WHERE job_id = ? AND applied = 0 AND opens = ?",
        o.id,
        jobId,
        o.key,
      );
    }
  }

  /** Whether a job has pending entries of incidents it opened whose ids are not known yet. */
  hasUnsettledEntries(jobId: string): boolean {
    return (
      this.sql
        .exec("SELECT 1 FROM incident_history WHERE job_id = ? AND applied = 0 AND opens IS NOT NULL LIMIT 1", jobId)
        .toArray().length > 0
    );
  }

  /** Shows a job's kept entries (a rebuild's, whose job was recorded as applied long before). */
  applyIncidentEntries(jobId: string): void {
    this.sql.exec("UPDATE incident_history SET applied = 1 WHERE job_id = ? AND applied = 0", jobId);
  }

  /** An entry written after its D1 batch (a manual change of state), shown at once. */
  addIncidentEntry(entry: NewIncidentEntry): void {
    this.insertEntries([entry], true);
  }

  private insertEntries(entries: ReadonlyArray<NewIncidentEntry | IncidentEntry>, applied: boolean): void {
    for (const e of entries) {
      this.sql.exec(
        `INSERT OR IGNORE INTO incident_history (incident_id, opens, legacy_id, time, from_state, to_state, alert_refs,
           actor, note, reason, job_id, details, alert_metrics, applied) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        e.incidentId,
        "opens" in e ? (e.opens ?? null) : null,
        "legacyId" in e ? e.legacyId : null,
        e.time,
        e.fromState,
        e.toState,
        JSON.stringify(e.alertRefs),
        e.actor,
        e.note,
        e.reason,
        e.jobId,
        e.details === null ? null : JSON.stringify(e.details),
        e.alertMetrics === null ? null : JSON.stringify(e.alertMetrics),
        applied ? 1 : 0,
      );
    }
  }

  /** An incident's history as kept here, oldest first (time; moved entries before the object's own). */
  incidentHistory(incidentId: number): IncidentEntry[] {
    return this.sql
      .exec<EntryRecord>(
        `SELECT ${ENTRY_COLUMNS} FROM incident_history WHERE incident_id = ? AND applied = 1
         ORDER BY time, legacy_id IS NULL, legacy_id, seq`,
        incidentId,
      )
      .toArray()
      .map(incidentEntry);
  }

  /** The ids of the alerts the entries kept here of the given incidents (the asset's, as D1 has them) refer to. */
  referredAlertIds(incidentIds: readonly number[]): number[] {
    return this.sql
      .exec<{ id: number }>(
        `SELECT DISTINCT r.value AS id FROM incident_history h, json_each(h.alert_refs) r
         WHERE h.applied = 1 AND h.incident_id IN (SELECT value FROM json_each(?))`,
        JSON.stringify(incidentIds),
      )
      .toArray()
      .map((r) => Number(r.id));
  }

  /** Steps of the move out of D1 this object has taken in (see moveIn). */
  get movedSteps(): number {
    return this.getState<number>("moved_steps") ?? 0;
  }

  /**
   * Counts one more step out of D1 (a job that ends leaves D1 after this object keeps it): D1's mark
   * of the asset takes the step in the batch that deletes the row, so a read that finds the mark
   * ahead of this object's count read the object before its copy (see moveIn).
   */
  private countStep(): number {
    const step = this.movedSteps + 1;
    this.setState("moved_steps", step);
    return step;
  }

  /**
   * Keeps a job that ended (its D1 row as the final transition left it, delivered by the caller or
   * by the D1 batch that deleted it): replaces whatever was kept of it. Returns the step to mark.
   */
  keepJob(job: ScanJobRow, count = true): number {
    return this.storage.transactionSync(() => {
      this.insertJob(job, false, true);
      return count ? this.countStep() : this.movedSteps;
    });
  }

  /**
   * Before the D1 batch that ends a job (the scan's own): keeps `job` (the row as the caller read
   * it, with its end) as pending, unless the job is kept already, and counts the step. `created`:
   * whether this call kept it (so drops it if the batch ended nothing).
   */
  beginJobEnd(job: ScanJobRow): { step: number; created: boolean } {
    return this.storage.transactionSync(() => ({
      created: this.insertJob(job, true),
      step: this.countStep(),
    }));
  }

  /** A pending job whose ending batch ended nothing (the job had ended, or the batch failed) goes. */
  dropPendingJob(jobId: string): void {
    this.sql.exec("DELETE FROM scan_jobs WHERE id = ? AND pending = 1", jobId);
  }

  /** Inserts a job's record; `replace`: over what is kept of it. Whether a row was written. */
  private insertJob(job: ScanJobRow, pending: boolean, replace = false): boolean {
    const uploaded = (job.request as { upload?: { key?: unknown } } | null)?.upload?.key != null ? 1 : 0;
    const cursor = this.sql.exec(
      `INSERT INTO scan_jobs (id, created_at, uploaded, record, pending) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO ${replace ? "UPDATE SET created_at = excluded.created_at, uploaded = excluded.uploaded, record = excluded.record, pending = excluded.pending" : "NOTHING"}`,
      job.id,
      job.createdAt,
      uploaded,
      JSON.stringify(job),
      pending ? 1 : 0,
    );
    return cursor.rowsWritten > 0;
  }

  /** One finished job of the asset, or undefined. */
  scanJob(jobId: string): ScanJobRow | undefined {
    const row = this.sql.exec<{ record: string }>("SELECT record FROM scan_jobs WHERE id = ?", jobId).toArray()[0];
    return row ? (JSON.parse(row.record) as ScanJobRow) : undefined;
  }

  /**
   * One page of the asset's finished jobs, newest first (created_at, then id), `limit` of them after
   * the keyset `before` (created before its time, or at it with a lower id; without an id, created
   * before its time); `uploaded`: only jobs that carried an uploaded batch.
   */
  scanJobs(limit: number, before?: { createdAt: string; id?: string | undefined }, uploaded = false): ScanJobRow[] {
    const after =
      before === undefined
        ? { where: "", binds: [] }
        : before.id === undefined
          ? { where: "created_at < ?", binds: [before.createdAt] }
          : {
              where: "(created_at < ? OR (created_at = ? AND id < ?))",
              binds: [before.createdAt, before.createdAt, before.id],
            };
    const where = [after.where, uploaded ? "uploaded = 1" : ""].filter(Boolean);
    return this.sql
      .exec<{ record: string }>(
        `SELECT record FROM scan_jobs ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY created_at DESC, id DESC LIMIT ?`,
        ...after.binds,
        limit,
      )
      .toArray()
      .map((r) => JSON.parse(r.record) as ScanJobRow);
  }

  /** Records a job as applied (with the result a replay answers), unless it is recorded already; its alerts show. */
  recordApplied(jobId: string, appliedAt: string, result: unknown): void {
    this.sql.exec("UPDATE alerts SET applied = 1 WHERE job_id = ? AND applied = 0", jobId);
    this.sql.exec(
      `INSERT INTO applied_jobs (job_id, applied_at, scan_time, result) VALUES (?, ?, ?, ?)
       ON CONFLICT (job_id) DO NOTHING`,
      jobId,
      appliedAt,
      appliedAt,
      JSON.stringify(result),
    );
  }

  /** Whether a job's record is here (applied, or copied in). */
  hasApplied(jobId: string): boolean {
    return this.sql.exec("SELECT 1 FROM applied_jobs WHERE job_id = ?", jobId).toArray().length > 0;
  }

  private insertDqScore(s: StoredDqScore): void {
    this.sql.exec(
      `INSERT INTO dq_scores (job_id, scored_at, completeness, accuracy, consistency, timeliness, overall)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO NOTHING`,
      s.jobId,
      s.scoredAt,
      s.completeness,
      s.accuracy,
      s.consistency,
      s.timeliness,
      s.overall,
    );
  }

  /** The result recorded for a job already applied, or undefined. */
  appliedResult<T>(jobId: string): T | undefined {
    const row = this.sql
      .exec<{ result: string }>("SELECT result FROM applied_jobs WHERE job_id = ?", jobId)
      .toArray()[0];
    return row ? (JSON.parse(row.result) as T) : undefined;
  }

  /**
   * The newest HISTORY_PER_METRIC points of every metric, oldest first, as the baselines see them:
   * moved by their offset, and without share points from before their change point.
   */
  history(): MetricHistory {
    if (this.kept !== null) return this.kept.toHistory();
    const read = this.readHistory();
    if (!read.oversized) this.kept = read;
    return read.toHistory();
  }

  private readHistory(): KeptHistory {
    // Per metric, the time of its HISTORY_PER_METRIC-th newest point (one seek of the index on
    // (metric, time)), then its points from that time on: the read costs about what it returns,
    // however long the asset's history. A window over every point (the query before 2026-11-26)
    // took 2.6 s at 2,000 scans of 540 metrics, this read 0.25 s (npm run bench:history). Points
    // tied with a metric's cut time are all kept.
    const rows = this.sql
      .exec<{ metric: string; job_id: string; time: string; value: number; excluded: number }>(
        `WITH cut AS (
           SELECT m.metric, coalesce((SELECT q.time FROM metric_points q WHERE q.metric = m.metric
             ORDER BY q.time DESC LIMIT 1 OFFSET ? - 1), '') AS since
           FROM (SELECT DISTINCT metric FROM metric_points) m)
         SELECT p.metric, p.job_id, p.time, p.value + p.offset AS value, p.excluded
         FROM cut JOIN metric_points p ON p.metric = cut.metric AND p.time >= cut.since
         ORDER BY p.metric, p.time`,
        HISTORY_PER_METRIC,
      )
      .toArray();
    const changes = this.sql.exec<ChangePoint>("SELECT prefix, since FROM change_points").toArray();
    const history = new KeptHistory(HISTORY_PER_METRIC, changes);
    for (const r of rows) history.addRead(r.metric, r.job_id, r.time, r.value, r.excluded === 1);
    return history;
  }

  /** Adds a recorded scan's points to the kept history, or drops it when they cannot be placed. */
  private keepRecorded(jobId: string, time: string, points: readonly EvaluatedPoint[]): void {
    const kept = this.kept;
    if (kept === null) return;
    for (const p of points) {
      if (!kept.add(p.metric, jobId, time, p.value, p.excluded)) {
        this.kept = null;
        return;
      }
    }
    if (kept.oversized) this.kept = null;
  }

  /**
   * One metric's newest `limit` points, oldest first, as measured, each with the offset an adopted
   * level moved it by (share points from before their change point left out).
   */
  series(metric: string, limit = HISTORY_PER_METRIC): RecordedPoint[] {
    const [{ since }] = this.sql
      .exec<{ since: string }>(
        "SELECT coalesce(max(since), '') AS since FROM change_points WHERE substr(?, 1, length(prefix)) = prefix",
        metric,
      )
      .toArray() as [{ since: string }];
    return this.sql
      .exec<{ job_id: string; time: string; value: number; offset: number; excluded: number }>(
        `SELECT job_id, time, value, offset, excluded FROM (
           SELECT job_id, time, value, offset, excluded FROM metric_points
           WHERE metric = ? AND time >= ? ORDER BY time DESC LIMIT ?)
         ORDER BY time`,
        metric,
        since,
        limit,
      )
      .toArray()
      .map((r) => ({ job_id: r.job_id, time: r.time, value: r.value, offset: r.offset, excluded: r.excluded === 1 }));
  }

  /**
   * The metrics whose name starts with `prefix` (null: the asset-level metrics, no attribute's),
   * each with its point count and newest point.
   */
  metrics(prefix: string | null): MetricSummary[] {
    const where = prefix === null ? "substr(metric, 1, 5) <> 'attr:'" : "substr(metric, 1, ?) = ?";
    return this.sql
      .exec<MetricSummary>(
        `SELECT metric, count(*) AS points, max(time) AS last_time,
                (SELECT value FROM metric_points q WHERE q.metric = p.metric ORDER BY time DESC LIMIT 1) AS last_value
         FROM metric_points p WHERE ${where} GROUP BY metric ORDER BY metric`,
        ...(prefix === null ? [] : [prefix.length, prefix]),
      )
      .toArray();
  }

  get lastSchema(): SchemaField[] | undefined {
    return this.getState<SchemaField[]>("last_schema");
  }

  /** Policies still learning a metric's baseline, as of the last scan. */
  get training(): TrainingState[] {
    return this.getState<TrainingState[]>("training") ?? [];
  }

  /** The attribute kinds as of the last scan. */
  get kinds(): Record<string, KnownKind> {
    return this.getState<Record<string, KnownKind>>("kinds") ?? {};
  }

  /** Records an applied scan in one transaction: its points, the asset's state, and the job with its result. */
  recordScan(scan: {
    jobId: string;
    scanTime: string;
    appliedAt: string;
    points: EvaluatedPoint[];
    /** The schema the next scan is compared with (each attribute's last known type). */
    schema: SchemaField[];
    training: TrainingState[];
    kinds: Record<string, KnownKind>;
    /** The scan's DQ score (scored at its scan time), if the asset scores. */
    dqScore?: DqScore | null;
    result: unknown;
  }): void {
    this.storage.transactionSync(() => {
      // One statement for every point, handed over as one JSON array (json_each): a scan has
      // hundreds of points, and each exec, each bound parameter, is a call into storage. The
      // values are finite numbers (metricPoints keeps no other), so JSON carries them exactly.
      // (The WHERE true: SQLite's upsert after a SELECT needs one, to parse. jsonb_each, which
      // would spare each ->> a parse of its row's text, is not in the runtime's SQLite.)
      if (scan.points.length > 0) {
        this.sql.exec(
          `INSERT INTO metric_points (metric, job_id, time, value, excluded, excluded_by)
           SELECT p.value ->> 0, ?, ?, p.value ->> 1, p.value ->> 2, p.value ->> 3 FROM json_each(?) p WHERE true
           ON CONFLICT (metric, job_id) DO NOTHING`,
          scan.jobId,
          scan.scanTime,
          JSON.stringify(
            scan.points.map((p) => [
              p.metric,
              p.value,
              p.excluded ? 1 : 0,
              p.excluded_by ? JSON.stringify(p.excluded_by) : null,
            ]),
          ),
        );
      }
      this.setState("last_schema", scan.schema);
      this.setState("training", scan.training);
      this.setState("kinds", scan.kinds);
      if (scan.dqScore) this.insertDqScore({ jobId: scan.jobId, scoredAt: scan.scanTime, ...scan.dqScore });
      this.sql.exec("UPDATE alerts SET applied = 1 WHERE job_id = ? AND applied = 0", scan.jobId);
      this.applyIncidentEntries(scan.jobId);
      this.sql.exec(
        "INSERT INTO applied_jobs (job_id, applied_at, scan_time, result) VALUES (?, ?, ?, ?)",
        scan.jobId,
        scan.appliedAt,
        scan.scanTime,
        JSON.stringify(scan.result),
      );
    });
    this.keepRecorded(scan.jobId, scan.scanTime, scan.points);
  }

  /** Whether a metric belongs to an incident of `attribute` ("" = the asset-level metrics). */
  private static owns(metric: string, attribute: string): boolean {
    if (metric === "duplicate_count") return true;
    return attribute === "" ? !metric.startsWith("attr:") : metric.startsWith(`attr:${escapeName(attribute)}:`);
  }

  /**
   * What adopting an incident's level would change: every metric the policy kept out of the
   * baseline for this attribute since the incident opened. A scalar metric moves its older points
   * by (median of its points since `levelSince`) − (median of its last `window` baseline points
   * before the incident); a share metric restarts its baseline at `levelSince`. `pending` are the
   * points of a scan not recorded yet (the one that adopts). Reads only.
   */
  planAdoption(input: {
    policy: string;
    attribute: string;
    openedAt: string;
    levelSince: string;
    window: number;
    pending?: { time: string; points: readonly EvaluatedPoint[] };
  }): AdoptionPlan {
    const { policy, attribute, openedAt, levelSince } = input;
    const rows = this.sql
      .exec<{ metric: string; time: string; value: number; excluded_by: string | null }>(
        `SELECT metric, time, value + offset AS value, excluded_by FROM metric_points ${EXCLUDED_SINCE}`,
        openedAt,
      )
      .toArray()
      .map((r) => ({ ...r, by: r.excluded_by ? (JSON.parse(r.excluded_by) as string[]) : [] }));
    for (const p of input.pending?.points ?? []) {
      if (p.excluded)
        rows.push({
          metric: p.metric,
          time: input.pending!.time,
          value: p.value,
          excluded_by: null,
          by: p.excluded_by ?? [],
        });
    }
    const level = new Map<string, number[]>();
    for (const r of rows) {
      if (!r.by.includes(policy) || !HistoryStore.owns(r.metric, attribute)) continue;
      const values = level.get(r.metric) ?? [];
      if (r.time >= levelSince) values.push(r.value);
      level.set(r.metric, values);
    }
    const plan: AdoptionPlan = { policy, attribute, releaseSince: openedAt, offsets: [], changePoints: [] };
    const prefixes = new Set<string>();
    for (const [metric, values] of level) {
      const part = SHARE_PARTS.find((sp) => metric.includes(sp));
      if (part) {
        prefixes.add(metric.slice(0, metric.indexOf(part) + part.length));
        continue;
      }
      if (values.length === 0) continue;
      const base = this.sql
        .exec<{ value: number }>(
          `SELECT value + offset AS value FROM metric_points WHERE metric = ? AND excluded = 0 AND time < ?
           ORDER BY time DESC LIMIT ?`,
          metric,
          openedAt,
          input.window,
        )
        .toArray()
        .map((r) => r.value);
      if (base.length === 0) continue;
      const shift = median(values) - median(base);
      if (shift !== 0 && Number.isFinite(shift)) plan.offsets.push({ metric, shift, before: levelSince });
    }
    for (const prefix of prefixes) plan.changePoints.push({ prefix, since: levelSince });
    return plan;
  }

  /** Writes an adoption: moves the old points, sets change points, releases the incident's points. */
  applyAdoption(plan: AdoptionPlan): void {
    this.kept = null;
    this.storage.transactionSync(() => {
      for (const o of plan.offsets) {
        this.sql.exec(
          "UPDATE metric_points SET offset = offset + ? WHERE metric = ? AND time < ?",
          o.shift,
          o.metric,
          o.before,
        );
      }
      for (const c of plan.changePoints) {
        this.sql.exec(
          "INSERT INTO change_points (prefix, since) VALUES (?, ?) ON CONFLICT (prefix) DO UPDATE SET since = excluded.since",
          c.prefix,
          c.since,
        );
      }
      const points = this.sql
        .exec<{ metric: string; job_id: string; excluded_by: string | null }>(
          `SELECT metric, job_id, excluded_by FROM metric_points ${EXCLUDED_SINCE}`,
          plan.releaseSince,
        )
        .toArray();
      for (const p of points) {
        const by = p.excluded_by ? (JSON.parse(p.excluded_by) as string[]) : [];
        if (!by.includes(plan.policy) || !HistoryStore.owns(p.metric, plan.attribute)) continue;
        const rest = by.filter((x) => x !== plan.policy);
        this.sql.exec(
          "UPDATE metric_points SET excluded = ?, excluded_by = ? WHERE metric = ? AND job_id = ?",
          rest.length > 0 ? 1 : 0,
          rest.length > 0 ? JSON.stringify(rest) : null,
          p.metric,
          p.job_id,
        );
      }
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
}
