import { and, asc, desc, eq, type SQL, sql } from "drizzle-orm";
import type { KeptIncidentHistory } from "../contracts/asset-monitor";
import type { Db } from "../db";
import { batchPrepared, builtNow, preparedEach, type QueryBuild, type ReadQuery } from "../db/prepared";
import type { AlertMetric, IncidentEntry, IncidentHistoryRow, IncidentRow } from "../db/schema";
import { alerts, incidentHistory, incidents, LEVELS, type Level } from "../db/schema";
import { InvalidInputError, NotFoundError } from "../lib/errors";
import { type Binder, inlineValues } from "../lib/sql";
import { MOVE_RACE_READS } from "./alerts";
import { type IncidentFilters, incidentWhere, resolveRange, type TimeRange } from "./filters";
import { entryOfRow, movedStepsQuery } from "./monitor-store";
import {
  addTagTotals,
  type DayCounts,
  dayCountsBuilds,
  openByTagFromRollupQuery,
  secondsBetween,
  type TagTotals,
  tagRollupAnswers,
  tagTotalsBuilds,
} from "./rollups";

/** Most alerts shown in an incident's detail (the newest); the history still lists every ref. */
export const DETAIL_METRICS_LIMIT = 1000;
/** Longest distribution, in days: a bigger range is a 400 rather than a huge zero-filled array. */
export const MAX_DISTRIBUTION_DAYS = 731;
const DAY_MS = 86_400_000;

/** The query of one page of incidents, newest first (opened_at, then id, descending), `limit + 1` rows; undefined when nothing can match. */
export function listIncidentsQuery(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  limit: number,
  after?: { openedAt: string; id: number },
) {
  const where = incidentWhere(tenantId, readable, filters);
  if (!where) return undefined;
  // A row-value comparison keeps the walk on incidents_tenant_opened_idx (tenant_id, opened_at, id).
  const page = after ? sql`(${incidents.openedAt}, ${incidents.id}) < (${after.openedAt}, ${after.id})` : undefined;
  return db
    .select()
    .from(incidents)
    .where(and(where, page))
    .orderBy(desc(incidents.openedAt), desc(incidents.id))
    .limit(limit + 1);
}

/** One page of incidents (see listIncidentsQuery). */
export async function listIncidents(...args: Parameters<typeof listIncidentsQuery>): Promise<IncidentRow[]> {
  return (await listIncidentsQuery(...args)) ?? [];
}

/** An incident of the tenant, or a 404. Access to its project is checked by the caller. */
export async function getIncident(db: Db, tenantId: string, id: number): Promise<IncidentRow> {
  const row = await db.query.incidents.findFirst({
    where: and(eq(incidents.tenantId, tenantId), eq(incidents.id, id)),
  });
  if (!row) throw new NotFoundError("Incident");
  return row;
}

/** Where an incident's history entries are kept (issue 38): its asset's AssetMonitor. */
export interface IncidentHistorySource {
  incidentHistory(incidentId: number): Promise<KeptIncidentHistory>;
}

/**
 * An incident with its history and its alerts' metrics, oldest first (the newest DETAIL_METRICS_LIMIT):
 * the entries its asset's object keeps, read beside one D1 batch with the entries from before
 * issue 38 the history's move has not reached (and the metrics of those whose alerts are still in
 * D1, by the ids the same batch's history names: a move step fills entries and deletes their alerts
 * in one batch of its own, so the two reads never straddle it). An entry in both places counts once.
 */
export async function incidentDetail(db: Db, source: IncidentHistorySource, row: IncidentRow): Promise<IncidentDetail> {
  for (let read = 1; ; read++) {
    const [kept, [legacy, metrics, marks]] = await Promise.all([
      source.incidentHistory(row.id),
      db.batch([
        historyQuery(db, row.tenantId, row.id),
        metricsQuery(db, row, legacyRefs(row.tenantId, row.id)),
        movedStepsQuery(db, { tenantId: row.tenantId, id: row.assetId }),
      ]),
    ]);
    const history = mergedHistory(kept, legacy, marks, read >= MOVE_RACE_READS);
    if (history) return { incident: row, metrics: detailMetrics(history, metrics), history };
  }
}

/** The alert ids of an incident's history entries that do not carry their alerts (alert_metrics null). */
function legacyRefs(tenantId: string, incidentId: number): SQL {
  return sql`select j.value from incident_history h, json_each(h.alert_refs) j where h.tenant_id = ${tenantId} and h.incident_id = ${incidentId} and h.alert_metrics is null`;
}

export interface IncidentDetail {
  incident: IncidentRow;
  metrics: AlertMetric[];
  history: IncidentEntry[];
}

/**
 * The entries the object keeps and those still in D1 (`legacy`), oldest first (time; at the same
 * time, entries from D1 by their id before the object's own, as D1's ids would have ordered them);
 * an entry in both counts once. undefined when a step of the move raced the read (the object
 * answered before its copy, D1 after its delete: `marks` ahead of the object), unless `settled`.
 */
function mergedHistory(
  kept: KeptIncidentHistory,
  legacy: readonly IncidentHistoryRow[],
  marks: ReadonlyArray<{ movedSteps: number }>,
  settled = false,
): IncidentEntry[] | undefined {
  if (!settled && (marks[0]?.movedSteps ?? 0) > kept.movedSteps) return undefined;
  if (legacy.length === 0) return kept.entries;
  const held = new Set(kept.entries.map((e) => e.legacyId));
  const order = (e: IncidentEntry) => (e.legacyId === null ? [1, e.seq] : [0, e.legacyId]);
  return [...legacy.filter((r) => !held.has(r.id)).map(entryOfRow), ...kept.entries].sort((a, b) => {
    if (a.time !== b.time) return a.time < b.time ? -1 : 1;
    const [ra, na] = order(a);
    const [rb, nb] = order(b);
    return ra! - rb! || na! - nb!;
  });
}

/**
 * The metrics of an incident's detail, oldest first: the newest DETAIL_METRICS_LIMIT of the alerts
 * its history entries carry (alert_metrics) and of `legacy`, the alerts D1 still holds for entries
 * from before issue 38; an alert in both counts once.
 */
function detailMetrics(history: readonly IncidentEntry[], legacy: readonly AlertMetric[]): AlertMetric[] {
  const byId = new Map<number, AlertMetric>(legacy.map((m) => [m.id, m]));
  for (const h of history) for (const m of h.alertMetrics ?? []) byId.set(m.id, m);
  return [...byId.values()]
    .sort((a, b) => (a.metricTime !== b.metricTime ? (a.metricTime < b.metricTime ? 1 : -1) : b.id - a.id))
    .slice(0, DETAIL_METRICS_LIMIT)
    .reverse();
}

/** An incident's history, oldest first. */
function historyQuery(db: Db, tenantId: string, incidentId: number) {
  return db
    .select()
    .from(incidentHistory)
    .where(and(eq(incidentHistory.tenantId, tenantId), eq(incidentHistory.incidentId, incidentId)))
    .orderBy(asc(incidentHistory.time), asc(incidentHistory.id));
}

/** The metrics of an incident's detail: the newest DETAIL_METRICS_LIMIT of its asset's alerts with the ids `ids` selects. */
function metricsQuery(db: Db, row: { tenantId: string; assetId: number }, ids: SQL) {
  return db
    .select({
      id: alerts.id,
      jobId: alerts.jobId,
      metric: alerts.metric,
      metricValue: alerts.metricValue,
      metricTime: alerts.metricTime,
      priority: alerts.priority,
      details: alerts.details,
    })
    .from(alerts)
    .where(and(eq(alerts.tenantId, row.tenantId), eq(alerts.assetId, row.assetId), sql`${alerts.id} in (${ids})`))
    .orderBy(desc(alerts.metricTime), desc(alerts.id))
    .limit(DETAIL_METRICS_LIMIT);
}

/**
 * incidentDetail's D1 part as the statements of one batch (after `read`, with which it runs), for
 * an incident of the asset `assetId`: the incident, its entries still in D1, and their metrics,
 * whose query reads the alert ids from those entries (json_each of each one's alert_refs), so
 * nothing waits on them, and the asset's mark. incidentDetailOf assembles their rows with the
 * entries the object keeps.
 */
export function incidentDetailStatements(db: Db, tenantId: string, incidentId: number, assetId: number) {
  return [
    db
      .select()
      .from(incidents)
      .where(and(eq(incidents.tenantId, tenantId), eq(incidents.id, incidentId)))
      .limit(1),
    historyQuery(db, tenantId, incidentId),
    metricsQuery(db, { tenantId, assetId }, legacyRefs(tenantId, incidentId)),
    movedStepsQuery(db, { tenantId, id: assetId }),
  ] as const;
}

/**
 * The detail incidentDetailStatements read with the entries the object keeps (404 when the
 * incident is gone), as incidentDetail answers it; undefined when a step of the move raced the
 * reads (read again with incidentDetail).
 */
export function incidentDetailOf(
  [[incident], legacy, metrics, marks]: [
    IncidentRow[],
    IncidentHistoryRow[],
    Awaited<ReturnType<typeof metricsQuery>>,
    Array<{ movedSteps: number }>,
  ],
  kept: KeptIncidentHistory,
): IncidentDetail | undefined {
  if (!incident) throw new NotFoundError("Incident");
  const history = mergedHistory(kept, legacy, marks);
  return history && { incident, metrics: detailMetrics(history, metrics), history };
}

/** Mean seconds as whole hours (half up), or null when there was nothing to average. */
const roundHours = (s: number | null | undefined) => (s === null || s === undefined ? null : Math.round(s / 3600));

/**
 * The four queries of the summary (one batch): totals and means of the incidents opened in
 * `range`, the previous range's MTTR, the closed ones per tag, and what is open now per tag
 * (whenever it opened). undefined when nothing can match.
 */
export function summaryQueries(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  range: TimeRange,
) {
  const where = incidentWhere(tenantId, readable, filters, range);
  const previousWhere = incidentWhere(tenantId, readable, filters, previousRange(range));
  const open = openByTagQuery(db, tenantId, readable, filters);
  if (!where || !previousWhere || !open) return undefined;
  const resolveSeconds = secondsBetween(incidents.openedAt, incidents.closedAt);
  return [
    db
      .select({
        total: sql<number>`count(*)`,
        closed: sql<number>`coalesce(sum(${incidents.state} = 'CLOSED'), 0)`,
        mttr: sql<number | null>`avg(case when ${incidents.state} = 'CLOSED' then ${resolveSeconds} end)`,
        mtfr: sql<number | null>`avg(${secondsBetween(incidents.openedAt, incidents.firstResponseAt)})`,
      })
      .from(incidents)
      .where(where),
    db
      .select({ mttr: sql<number | null>`avg(${resolveSeconds})` })
      .from(incidents)
      .where(and(previousWhere, eq(incidents.state, "CLOSED"))),
    db
      .select({ tag: incidents.tag, n: sql<number>`count(*)` })
      .from(incidents)
      .where(and(where, eq(incidents.state, "CLOSED")))
      .groupBy(incidents.tag),
    open,
  ] as const;
}

/** A summary with nothing counted yet. */
function emptySummary(range: TimeRange) {
  return {
    from_time: range.from,
    to_time: range.to,
    total: 0,
    open: 0,
    closed: 0,
    resolved: 0,
    mean_time_to_resolve: 0,
    previous_mean_time_to_resolve: 0,
    mean_time_to_first_response: null as number | null,
    open_by_tag: {} as Record<string, number>,
    closed_by_tag: {} as Record<string, number>,
  };
}

/** What is open now per tag, whenever it opened (the summary's open and open_by_tag). */
function openByTagQuery(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  bind: Binder = inlineValues,
) {
  const anyTime = incidentWhere(tenantId, readable, filters, {}, bind);
  if (!anyTime) return undefined;
  return db
    .select(OPEN_BY_TAG)
    .from(incidents)
    .where(and(anyTime, eq(incidents.state, "OPEN")))
    .groupBy(incidents.tag);
}

/** The columns of openByTagQuery, built once (as rollups.ts's TagTotals columns). */
const OPEN_BY_TAG = { tag: incidents.tag, n: sql<number>`count(*)` };

/** The range before `range`, as long as it: the previous MTTR's. */
function previousRange(range: TimeRange): TimeRange {
  const span = Date.parse(range.to) - Date.parse(range.from);
  return { from: new Date(Date.parse(range.from) - span).toISOString(), to: range.from };
}

/**
 * The queries of incidentSummary (one batch): what is open per tag, and the counts and sums per
 * tag of the range and of the previous range, each in parts (rollups.ts), each written against a
 * Binder. undefined when nothing can match.
 */
function summaryBuilds(tenantId: string, readable: number[] | undefined, filters: IncidentFilters, range: TimeRange) {
  const open: QueryBuild<ReadQuery> = tagRollupAnswers(readable, filters)
    ? { kind: "incidents.openByTag.rollup", build: (db, bind) => openByTagFromRollupQuery(db, tenantId, bind) }
    : { kind: "incidents.openByTag", build: (db, bind) => openByTagQuery(db, tenantId, readable, filters, bind) };
  return {
    open,
    current: tagTotalsBuilds(tenantId, readable, filters, range),
    previous: tagTotalsBuilds(tenantId, readable, filters, previousRange(range)),
  };
}

/** The queries of incidentSummary, built now (bench/incidents runs them on a SQLite file). */
export function summaryRollupQueries(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  range: TimeRange,
) {
  const { open, current, previous } = summaryBuilds(tenantId, readable, filters, range);
  const [openQuery] = builtNow(db, [open]);
  if (!openQuery) return undefined;
  return { open: openQuery, current: builtNow(db, current), previous: builtNow(db, previous) };
}

/**
 * The summary: `total`, `closed` (and `resolved`, the closed ones the mean is over), the MTTR and
 * first-response means and `closed_by_tag` count the incidents opened in the range (default: the
 * last 30 days) that match the filters; `open` and `open_by_tag` count what is open now, whenever
 * it opened. The means are whole hours, 0 when nothing was resolved (`resolved: 0` says so).
 * Whole days come from the daily rollups, the edge days and text searches from incidents
 * (rollups.ts): the same numbers as incidentSummaryFromIncidents, in one batch.
 */
export async function incidentSummary(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  now: Date,
) {
  const range = resolveRange(filters, now);
  const summary = emptySummary(range);
  // Prepared once per isolate and shape of the filters (src/db/prepared.ts): the SQL text of these
  // 3 to 7 statements is not built again on every request.
  const builds = summaryBuilds(tenantId, readable, filters, range);
  const [open] = preparedEach(db, [builds.open]);
  if (!open) return summary;
  const current = preparedEach(db, builds.current);
  const previous = preparedEach(db, builds.previous);
  const [openTags, ...parts] = await batchPrepared(db, [open, ...current, ...previous]);
  const tags = addTagTotals(parts.slice(0, current.length) as TagTotals[][]);
  const prior = addTagTotals(parts.slice(current.length) as TagTotals[][]);
  let resolved = 0;
  let resolveSeconds = 0;
  let responded = 0;
  let responseSeconds = 0;
  for (const t of tags) {
    summary.total += t.total;
    summary.closed += t.closed;
    resolved += t.resolved;
    resolveSeconds += t.resolveSeconds;
    responded += t.responded;
    responseSeconds += t.responseSeconds;
    if (t.closed > 0) summary.closed_by_tag[t.tag] = t.closed;
  }
  const mean = (sum: number, n: number) => (n > 0 ? sum / n : null);
  const priorResolved = prior.reduce((n, t) => n + t.resolved, 0);
  const priorSeconds = prior.reduce((n, t) => n + t.resolveSeconds, 0);
  summary.resolved = summary.closed;
  summary.mean_time_to_resolve = roundHours(mean(resolveSeconds, resolved)) ?? 0;
  summary.previous_mean_time_to_resolve = roundHours(mean(priorSeconds, priorResolved)) ?? 0;
  summary.mean_time_to_first_response = roundHours(mean(responseSeconds, responded));
  for (const { tag, n } of openTags as Array<{ tag: string; n: number }>) {
    summary.open_by_tag[tag] = n;
    summary.open += n;
  }
  return summary;
}

/**
 * incidentSummary computed from the incidents table alone (one query over the range, SQLite's
 * means): the reference the rollups are checked against in the tests and the benchmark's before.
 */
export async function incidentSummaryFromIncidents(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  now: Date,
) {
  const range = resolveRange(filters, now);
  const queries = summaryQueries(db, tenantId, readable, filters, range);
  const summary = emptySummary(range);
  if (!queries) return summary;
  const [totals, prior, closedTags, openTags] = await db.batch(queries);
  const t = totals[0]!;
  summary.total = t.total;
  summary.closed = t.closed;
  summary.resolved = t.closed;
  summary.mean_time_to_resolve = roundHours(t.mttr) ?? 0;
  summary.previous_mean_time_to_resolve = roundHours(prior[0]?.mttr) ?? 0;
  summary.mean_time_to_first_response = roundHours(t.mtfr);
  for (const { tag, n } of closedTags) summary.closed_by_tag[tag] = n;
  for (const { tag, n } of openTags) {
    summary.open_by_tag[tag] = n;
    summary.open += n;
  }
  return summary;
}

/** Incidents opened in `range` per UTC day, severity and impact; undefined when nothing can match. */
export function distributionQuery(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  range: TimeRange,
) {
  const where = incidentWhere(tenantId, readable, filters, range);
  if (!where) return undefined;
  const day = sql<string>`substr(${incidents.openedAt}, 1, 10)`;
  return db
    .select({ day, severity: incidents.severity, impact: incidents.impact, n: sql<number>`count(*)` })
    .from(incidents)
    .where(where)
    .groupBy(day, incidents.severity, incidents.impact);
}

type LevelCounts = Record<Level, number>;
const zeroLevels = (): LevelCounts => ({ LOW: 0, MEDIUM: 0, HIGH: 0 });

/**
 * Incidents opened per UTC day of the range (default: the last 30 days), by severity and by
 * impact; every day of the range is present, with zeros when nothing opened. Whole days come
 * from the daily rollups, the edge days and text searches from incidents (rollups.ts).
 */
export async function incidentDistribution(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  now: Date,
) {
  const range = resolveRange(filters, now);
  const days = distributionDays(range);
  const queries = preparedEach(db, dayCountsBuilds(tenantId, readable, filters, range));
  const parts = queries.length > 0 ? await batchPrepared(db, queries) : [];
  for (const r of parts.flat() as DayCounts[]) {
    const entry = days.get(r.day);
    if (!entry) continue;
    entry.total += r.total;
    entry.by_severity.LOW += r.severityLow;
    entry.by_severity.MEDIUM += r.severityMedium;
    entry.by_severity.HIGH += r.severityHigh;
    entry.by_impact.LOW += r.impactLow;
    entry.by_impact.MEDIUM += r.impactMedium;
    entry.by_impact.HIGH += r.impactHigh;
  }
  return distributionAnswer(range, days);
}

/**
 * incidentDistribution computed from the incidents table alone (one query over the range): the
 * reference the rollups are checked against in the tests and the benchmark's before.
 */
export async function incidentDistributionFromIncidents(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  now: Date,
) {
  const range = resolveRange(filters, now);
  const days = distributionDays(range);
  const query = distributionQuery(db, tenantId, readable, filters, range);
  return distributionOf(range, days, query ? await query : []);
}

interface DayCount {
  day: string;
  severity: Level;
  impact: Level;
  n: number;
}

/** Every day of the range with zeros (a 400 past MAX_DISTRIBUTION_DAYS). */
function distributionDays(range: TimeRange) {
  const firstDay = Math.floor(Date.parse(range.from) / DAY_MS);
  // The range is half-open: a `to` at midnight does not bring in its day.
  const lastDay = Math.floor((Date.parse(range.to) - 1) / DAY_MS);
  if (lastDay - firstDay + 1 > MAX_DISTRIBUTION_DAYS) {
    throw new InvalidInputError([
      { field: "from_time", message: `the range may span at most ${MAX_DISTRIBUTION_DAYS} days` },
    ]);
  }
  const days = new Map<string, { date: string; total: number; by_severity: LevelCounts; by_impact: LevelCounts }>();
  for (let d = firstDay; d <= lastDay; d++) {
    const date = new Date(d * DAY_MS).toISOString().slice(0, 10);
    days.set(date, { date, total: 0, by_severity: zeroLevels(), by_impact: zeroLevels() });
  }
  return days;
}

/** The distribution's answer: the days with the counts of `rows` (any number per day) added. */
function distributionOf(range: TimeRange, days: ReturnType<typeof distributionDays>, rows: DayCount[]) {
  for (const r of rows) {
    const entry = days.get(r.day);
    if (!entry) continue;
    entry.total += r.n;
    entry.by_severity[r.severity] += r.n;
    entry.by_impact[r.impact] += r.n;
  }
  return distributionAnswer(range, days);
}

function distributionAnswer(range: TimeRange, days: ReturnType<typeof distributionDays>) {
  return { from_time: range.from, to_time: range.to, levels: [...LEVELS], days: [...days.values()] };
}
