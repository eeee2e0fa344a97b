/**
 * The incidents summary and distribution from the daily rollups (incident_rollups,
 * incident_day_rollups and incident_tag_rollups, kept by triggers on incidents: see
 * src/db/schema/incidents.ts).
 *
 * A range [from, to) is cut in three parts: the whole UTC days strictly inside it come from a
 * rollup; the incidents of its first and last (partial) days come from the incidents table, by
 * opened_at, as before. Each part yields counts and sums (never means), so the parts add up to
 * exactly what one query over the range gives. A read the rollups cannot answer (text_to_search,
 * which matches names) goes whole to the incidents table.
 */

import { type AnyColumn, and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db";
import { builtNow, type ReadQuery } from "../db/prepared";
import { incidentDayRollups, incidentRollups, incidents, incidentTagRollups } from "../db/schema";
import { type Binder, inlineValues } from "../lib/sql";
import { type IncidentFilters, incidentWhere, projectScope, type TimeRange } from "./filters";

const DAY_MS = 86_400_000;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}T/;

/** Where a range's incidents are read: whole days [firstDay, endDay) from a rollup, the rest from incidents. */
export interface RangeParts {
  /** YYYY-MM-DD bounds of the whole days read from a rollup (endDay excluded); absent when there are none. */
  days?: { firstDay: string; endDay: string };
  /** Sub-ranges of opened_at read from the incidents table. */
  raw: TimeRange[];
}

/**
 * Cuts [from, to) at its first and last UTC day: an incident opened on a day strictly between
 * them is inside the range whatever its time, so the rollup's day answers it; the edge days are
 * compared by opened_at. Day strings compare like the timestamps they begin (ISO 8601).
 */
export function rangeParts(range: TimeRange, rollup = true): RangeParts {
  if (!rollup || !ISO_DAY.test(range.from) || !ISO_DAY.test(range.to)) return { raw: [range] };
  const fromDay = range.from.slice(0, 10);
  const toDay = range.to.slice(0, 10);
  const firstDay = new Date(Date.parse(`${fromDay}T00:00:00.000Z`) + DAY_MS).toISOString().slice(0, 10);
  if (firstDay >= toDay) return { raw: [range] };
  return {
    days: { firstDay, endDay: toDay },
    raw: [
      { from: range.from, to: firstDay },
      { from: toDay, to: range.to },
    ],
  };
}

/** Whether the rollups can answer these filters (every filter but text_to_search, asset_ids and states). */
export function rollupAnswers(f: IncidentFilters): boolean {
  return !f.text_to_search && !f.asset_ids && !f.states;
}

/**
 * Whether the per-(day, tag) rollup answers these filters: none narrows by a key (project,
 * connection, type, policy; a caller who sees only some projects counts as one) or by a level.
 */
export function tagRollupAnswers(readable: number[] | undefined, f: IncidentFilters): boolean {
  return (
    rollupAnswers(f) &&
    projectScope(readable, f) === undefined &&
    !f.connection_ids &&
    !f.connection_types &&
    !f.alert_policy_ids &&
    !f.severities &&
    !f.impacts
  );
}

/**
 * The rollup a read sums and its WHERE: the per-(day, tag) one when nothing but the range narrows
 * it, the per-(day, tag, severity, impact) one when only levels do, else the per-key one (named to
 * `bind` as a variant: the key of a prepared query).
 */
function rollupSource(
  tenantId: string,
  readable: number[] | undefined,
  f: IncidentFilters,
  days: RangeParts["days"],
  bind: Binder = inlineValues,
) {
  const projectIds = projectScope(readable, f);
  if (projectIds?.length === 0 || !days) return undefined;
  const keyed = projectIds || f.connection_ids || f.connection_types || f.alert_policy_ids;
  const inDays = (t: typeof incidentTagRollups | typeof incidentRollups | typeof incidentDayRollups) => [
    eq(t.tenantId, bind.value("tenant", tenantId)),
    gte(t.day, bind.value("firstDay", days.firstDay)),
    lt(t.day, bind.value("endDay", days.endDay)),
  ];
  if (tagRollupAnswers(readable, f)) {
    bind.variant("tag");
    const t = incidentTagRollups;
    return { t, where: and(...inDays(t)) as SQL, levels: false as const };
  }
  bind.variant(keyed ? "keyed" : "day");
  const t = keyed ? incidentRollups : incidentDayRollups;
  const keys = keyed
    ? [
        projectIds ? bind.list(incidentRollups.projectId, "projects", [...new Set(projectIds)], true) : undefined,
        f.connection_ids
          ? bind.list(incidentRollups.connectionId, "connections", [...new Set(f.connection_ids)], true)
          : undefined,
        f.connection_types
          ? bind.list(incidentRollups.connectionType, "types", [...new Set(f.connection_types)])
          : undefined,
        f.alert_policy_ids
          ? bind.list(incidentRollups.policy, "policies", [...new Set(f.alert_policy_ids)])
          : undefined,
      ]
    : [];
  const levels = [
    f.severities ? bind.list(t.severity, "severities", [...new Set(f.severities)]) : undefined,
    f.impacts ? bind.list(t.impact, "impacts", [...new Set(f.impacts)]) : undefined,
  ];
  const where = and(...inDays(t), ...keys, ...levels) as SQL;
  return { t, where, levels: true as const };
}

/**
 * Whole seconds between two timestamps (julianday's float error must not tip the hour rounding),
 * exactly as the rollup triggers compute them.
 */
export const secondsBetween = (from: AnyColumn, to: AnyColumn) =>
  sql`round((julianday(${to}) - julianday(${from})) * 86400)`;
const resolveSeconds = sql`case when ${incidents.state} = 'CLOSED' then ${secondsBetween(incidents.openedAt, incidents.closedAt)} end`;
const responseSeconds = secondsBetween(incidents.openedAt, incidents.firstResponseAt);

/** Counts and sums per tag: what the summary adds up. */
export interface TagTotals {
  tag: string;
  total: number;
  closed: number;
  resolved: number;
  resolveSeconds: number;
  responded: number;
  responseSeconds: number;
}

/**
 * The columns of a TagTotals row, per table read: built once, not on each request (a request's
 * query is prepared once per shape, src/db/prepared.ts, and only its values change; building its
 * columns again, a drizzle SQL object each, was most of the summary's own CPU).
 */
const INCIDENT_TAG_TOTALS = {
  tag: incidents.tag,
  total: sql<number>`count(*)`,
  closed: sql<number>`sum(${incidents.state} = 'CLOSED')`,
  resolved: sql<number>`count(${resolveSeconds})`,
  resolveSeconds: sql<number>`coalesce(sum(${resolveSeconds}), 0)`,
  responded: sql<number>`count(${responseSeconds})`,
  responseSeconds: sql<number>`coalesce(sum(${responseSeconds}), 0)`,
};
const rollupTagTotals = (t: typeof incidentTagRollups | typeof incidentRollups | typeof incidentDayRollups) => ({
  tag: t.tag,
  total: sql<number>`sum(${t.total})`,
  closed: sql<number>`sum(${t.closed})`,
  resolved: sql<number>`sum(${t.resolved})`,
  resolveSeconds: sql<number>`sum(${t.resolveSeconds})`,
  responded: sql<number>`sum(${t.responded})`,
  responseSeconds: sql<number>`sum(${t.responseSeconds})`,
});
const ROLLUP_TAG_TOTALS = new Map(
  [incidentTagRollups, incidentRollups, incidentDayRollups].map((t) => [t, rollupTagTotals(t)] as const),
);

/**
 * The queries (one batch) of the counts and sums per tag of the incidents opened in `range` that
 * match the filters: one per part, each written against a Binder (built now by tagTotalsQueries,
 * prepared once by preparedEach).
 */
export function tagTotalsBuilds(
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  range: TimeRange,
) {
  const parts = rangeParts(range, rollupAnswers(filters));
  const fromRollup = (db: Db, bind: Binder): ReadQuery | undefined => {
    const source = rollupSource(tenantId, readable, filters, parts.days, bind);
    if (!source) return undefined;
    const { t, where } = source;
    return db.select(ROLLUP_TAG_TOTALS.get(t)!).from(t).where(where).groupBy(t.tag);
  };
  const fromIncidents =
    (part: TimeRange) =>
    (db: Db, bind: Binder): ReadQuery | undefined => {
      const where = incidentWhere(tenantId, readable, filters, part, bind);
      if (!where) return undefined;
      return db.select(INCIDENT_TAG_TOTALS).from(incidents).where(where).groupBy(incidents.tag);
    };
  return [
    { kind: "incidents.tagTotals.rollup", build: fromRollup },
    ...parts.raw.map((part) => ({ kind: "incidents.tagTotals.incidents", build: fromIncidents(part) })),
  ];
}

/** The queries of tagTotalsBuilds, built now with their values inlined; empty when nothing can match. */
export function tagTotalsQueries(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  range: TimeRange,
) {
  return builtNow(db, tagTotalsBuilds(tenantId, readable, filters, range));
}

/** Adds up the rows of tagTotalsQueries per tag, tags in order. */
export function addTagTotals(parts: TagTotals[][]): TagTotals[] {
  const byTag = new Map<string, TagTotals>();
  for (const rows of parts) {
    for (const r of rows) {
      const t = byTag.get(r.tag);
      if (!t) {
        byTag.set(r.tag, { ...r });
        continue;
      }
      t.total += r.total;
      t.closed += r.closed;
      t.resolved += r.resolved;
      t.resolveSeconds += r.resolveSeconds;
      t.responded += r.responded;
      t.responseSeconds += r.responseSeconds;
    }
  }
  return [...byTag.values()].sort((a, b) => (a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0));
}

/** Incidents opened on one UTC day: in all, and per severity and per impact level. */
export interface DayCounts {
  day: string;
  total: number;
  severityLow: number;
  severityMedium: number;
  severityHigh: number;
  impactLow: number;
  impactMedium: number;
  impactHigh: number;
}

/** The columns of a DayCounts row over rows that each count `n` incidents of a severity and an impact. */
function dayCountColumns(day: SQL<string> | AnyColumn, severity: AnyColumn, impact: AnyColumn, n: SQL | AnyColumn) {
  // Named: D1 keys a row's values by column name, and two unnamed sums could read alike.
  const at = (level: AnyColumn, value: string, name: string) =>
    sql<number>`coalesce(sum(case when ${level} = ${value} then ${n} end), 0)`.as(name);
  return {
    day: day as SQL<string>,
    total: sql<number>`sum(${n})`.as("total"),
    severityLow: at(severity, "LOW", "severity_low"),
    severityMedium: at(severity, "MEDIUM", "severity_medium"),
    severityHigh: at(severity, "HIGH", "severity_high"),
    impactLow: at(impact, "LOW", "impact_low"),
    impactMedium: at(impact, "MEDIUM", "impact_medium"),
    impactHigh: at(impact, "HIGH", "impact_high"),
  };
}

/** The columns of a DayCounts row from incident_tag_rollups, which counts the levels in columns of its own. */
function tagRollupDayColumns() {
  const t = incidentTagRollups;
  return {
    day: t.day,
    total: sql<number>`sum(${t.total})`.as("total"),
    severityLow: sql<number>`sum(${t.severityLow})`.as("severity_low"),
    severityMedium: sql<number>`sum(${t.severityMedium})`.as("severity_medium"),
    severityHigh: sql<number>`sum(${t.severityHigh})`.as("severity_high"),
    impactLow: sql<number>`sum(${t.impactLow})`.as("impact_low"),
    impactMedium: sql<number>`sum(${t.impactMedium})`.as("impact_medium"),
    impactHigh: sql<number>`sum(${t.impactHigh})`.as("impact_high"),
  };
}

/**
 * The queries (one batch) of incidents opened in `range` per day, with their counts per severity
 * and per impact, one per part; their rows add up. Grouped by day alone (the level counts summed
 * in SQL): a year is 365 rows to carry out of D1 instead of one per day, severity and impact, and
 * the rollup's key (tenant, day, …) already orders them, so no sort is needed. Each written
 * against a Binder (built now by dayCountsQueries, prepared once by preparedEach).
 */
export function dayCountsBuilds(
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  range: TimeRange,
) {
  const parts = rangeParts(range, rollupAnswers(filters));
  const fromRollup = (db: Db, bind: Binder): ReadQuery | undefined => {
    const source = rollupSource(tenantId, readable, filters, parts.days, bind);
    if (!source) return undefined;
    const { t, where } = source;
    return source.levels
      ? db
          .select(dayCountColumns(t.day, source.t.severity, source.t.impact, t.total))
          .from(t)
          .where(where)
          .groupBy(t.day)
      : db.select(tagRollupDayColumns()).from(t).where(where).groupBy(t.day);
  };
  const fromIncidents =
    (part: TimeRange) =>
    (db: Db, bind: Binder): ReadQuery | undefined => {
      const where = incidentWhere(tenantId, readable, filters, part, bind);
      if (!where) return undefined;
      const day = sql<string>`substr(${incidents.openedAt}, 1, 10)`;
      return db
        .select(dayCountColumns(day, incidents.severity, incidents.impact, sql`1`))
        .from(incidents)
        .where(where)
        .groupBy(day);
    };
  return [
    { kind: "incidents.dayCounts.rollup", build: fromRollup },
    ...parts.raw.map((part) => ({ kind: "incidents.dayCounts.incidents", build: fromIncidents(part) })),
  ];
}

/** The queries of dayCountsBuilds, built now with their values inlined; empty when nothing can match. */
export function dayCountsQueries(
  db: Db,
  tenantId: string,
  readable: number[] | undefined,
  filters: IncidentFilters,
  range: TimeRange,
) {
  return builtNow(db, dayCountsBuilds(tenantId, readable, filters, range));
}

/**
 * What is open now per tag (whenever it opened) from incident_tag_rollups: every incident it counts
 * is OPEN or CLOSED, so the open ones of a tag are its total less its closed over all days. Only
 * for filters the rollup answers (tagRollupAnswers); tags with none open are left out, as a count
 * of the open incidents leaves them out.
 */
export function openByTagFromRollupQuery(db: Db, tenantId: string, bind: Binder = inlineValues) {
  const t = incidentTagRollups;
  return db
    .select(OPEN_FROM_ROLLUP.columns)
    .from(t)
    .where(eq(t.tenantId, bind.value("tenant", tenantId)))
    .groupBy(t.tag)
    .having(OPEN_FROM_ROLLUP.having);
}

/** The columns and HAVING of openByTagFromRollupQuery, built once. */
const OPEN_FROM_ROLLUP = (() => {
  const t = incidentTagRollups;
  const n = sql<number>`sum(${t.total} - ${t.closed})`;
  return { columns: { tag: t.tag, n }, having: sql`${n} > 0` };
})();
