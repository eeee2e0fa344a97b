import { and, eq, gte, lt, or, type SQL, sql } from "drizzle-orm";
import { assets, type ConnectionType, type IncidentState, incidents, type Level } from "../db/schema";
import { InvalidInputError } from "../lib/errors";
import { type Binder, inlineValues } from "../lib/sql";

/** The list filters of spec 4.8, parsed and validated (times normalised to ISO 8601 UTC). */
export interface IncidentFilters {
  project_ids?: number[];
  connection_types?: ConnectionType[];
  alert_policy_ids?: string[];
  severities?: Level[];
  impacts?: Level[];
  connection_ids?: number[];
  from_time?: string;
  to_time?: string;
  text_to_search?: string;
  /** The list's own filters (not the summary's or the distribution's): these assets, these states. */
  asset_ids?: number[];
  states?: IncidentState[];
}

/** A half-open UTC range [from, to) on opened_at. */
export interface TimeRange {
  from: string;
  to: string;
}

const DAY_MS = 86_400_000;
/** Summary and distribution look at the last 30 days when no range is given. */
export const DEFAULT_RANGE_DAYS = 30;

/**
 * The range of the summary and the distribution: the one asked for, else the last 30 days;
 * one bound alone is completed with a 30-day span (to = now, or from = to - 30 days).
 */
export function resolveRange(f: IncidentFilters, now: Date): TimeRange {
  const to = f.to_time ?? (f.from_time && Date.parse(f.from_time) > now.getTime() ? f.from_time : now.toISOString());
  const from = f.from_time ?? new Date(Date.parse(to) - DEFAULT_RANGE_DAYS * DAY_MS).toISOString();
  return { from, to };
}

/** Escapes LIKE wildcards so the text matches literally (ESCAPE '\'). */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

/** The projects a read may see: the filter's within the caller's readable ones (undefined = all; [] = none). */
export function projectScope(readable: number[] | undefined, f: IncidentFilters): number[] | undefined {
  if (readable === undefined) return f.project_ids;
  const allowed = new Set(readable);
  return f.project_ids ? f.project_ids.filter((id) => allowed.has(id)) : readable;
}

/**
 * The WHERE clause of the list, summary and distribution: tenant first (every index leads with
 * it), the caller's readable projects (undefined = all), then each filter; `range` overrides the
 * filters' own from/to (the summary's previous period). undefined when nothing can match.
 * The values go through `bind`: inlined, or as placeholders of a query prepared once.
 */
export function incidentWhere(
  tenantId: string,
  readable: number[] | undefined,
  f: IncidentFilters,
  range?: Partial<TimeRange>,
  bind: Binder = inlineValues,
): SQL | undefined {
  const projectIds = projectScope(readable, f);
  if (projectIds && projectIds.length === 0) return undefined;
  const from = range ? range.from : f.from_time;
  const to = range ? range.to : f.to_time;
  const conditions: Array<SQL | undefined> = [
    eq(incidents.tenantId, bind.value("tenant", tenantId)),
    projectIds ? bind.list(incidents.projectId, "projects", [...new Set(projectIds)], true) : undefined,
    f.connection_ids
      ? bind.list(incidents.connectionId, "connections", [...new Set(f.connection_ids)], true)
      : undefined,
    f.connection_types ? bind.list(incidents.connectionType, "types", [...new Set(f.connection_types)]) : undefined,
    f.alert_policy_ids ? bind.list(incidents.policy, "policies", [...new Set(f.alert_policy_ids)]) : undefined,
    f.severities ? bind.list(incidents.severity, "severities", [...new Set(f.severities)]) : undefined,
    f.impacts ? bind.list(incidents.impact, "impacts", [...new Set(f.impacts)]) : undefined,
    f.asset_ids ? bind.list(incidents.assetId, "assets", [...new Set(f.asset_ids)], true) : undefined,
    f.states ? bind.list(incidents.state, "states", [...new Set(f.states)]) : undefined,
    from ? gte(incidents.openedAt, bind.value("from", from)) : undefined,
    to ? lt(incidents.openedAt, bind.value("to", to)) : undefined,
  ];
  if (f.text_to_search) {
    const pattern = bind.value("pattern", likeContains(f.text_to_search));
    // SQLite's LIKE is case-insensitive for ASCII; the ESCAPE makes % and _ literal. The asset is
    // found by its current name (a renamed asset by its new one) and by the name it had when the
    // incident opened.
    conditions.push(
      or(
        sql`${incidents.policyName} like ${pattern} escape '\\'`,
        sql`${incidents.sourceName} like ${pattern} escape '\\'`,
        sql`exists (select 1 from ${assets} where ${assets.id} = ${incidents.assetId} and ${assets.name} like ${pattern} escape '\\')`,
      ),
    );
  }
  return and(...conditions);
}

/** Checks from < to (both normalised); the path names the field for the 400. */
export function assertRange(f: IncidentFilters): void {
  if (f.from_time && f.to_time && f.from_time >= f.to_time) {
    throw new InvalidInputError([{ field: "to_time", message: "must be after from_time" }]);
  }
}
