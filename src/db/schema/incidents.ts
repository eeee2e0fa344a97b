import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { tenants } from "./tenancy";

export const INCIDENT_STATES = ["OPEN", "CLOSED"] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];
export const LEVELS = ["LOW", "MEDIUM", "HIGH"] as const;
export type Level = (typeof LEVELS)[number];
/**
 * Why an incident was closed. EXPECTED and FALSE_POSITIVE (by a user) make the detector adopt the
 * level the incident reported; NEW_NORMAL is the detector adopting it by itself after the asset's
 * `adapt_after` scans at that level; AUTO_RESOLVED follows clean scans.
 */
export const CLOSE_REASONS = [
  "FIXED",
  "EXPECTED",
  "FALSE_POSITIVE",
  "NO_ACTION_NEEDED",
  "AUTO_RESOLVED",
  "NEW_NORMAL",
] as const;
export type CloseReason = (typeof CLOSE_REASONS)[number];

/**
 * Alerts of one (asset, policy, attribute) over time. At most one is OPEN per key (partial
 * unique index). Written only by the asset's AssetMonitor; denormalised asset fields keep the
 * list filters on this one table.
 */
export const incidents = sqliteTable(
  "incidents",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    assetId: integer("asset_id").notNull(),
    projectId: integer("project_id").notNull(),
    connectionId: integer("connection_id").notNull(),
    /** The asset's (and its connection's) type, for the connection_types filter. */
    connectionType: text("connection_type").notNull(),
    sourceName: text("source_name").notNull(),
    /** The policy id, e.g. "completeness". */
    policy: text("policy").notNull(),
    policyName: text("policy_name").notNull(),
    /** "" for asset-level policies. */
    attribute: text("attribute").notNull().default(""),
    /** The segment (segmentKey: JSON [attribute, value]) the incident is about; "" for the whole asset. */
    segment: text("segment").notNull().default(""),
    state: text("state", { enum: INCIDENT_STATES }).notNull(),
    /** The highest priority of its alerts. */
    severity: text("severity", { enum: LEVELS }).notNull(),
    /** Grows with the asset's downstream lineage when the incident opened. */
    impact: text("impact", { enum: LEVELS }).notNull(),
    /** The policy's dimension (completeness, accuracy, consistency, timeliness). */
    tag: text("tag").notNull(),
    alertCount: integer("alert_count").notNull(),
    /** Consecutive clean scans of the asset since the last alert (auto-close at the asset's threshold). */
    cleanScans: integer("clean_scans").notNull().default(0),
    /** Consecutive scans at the level the last alert reported (the detector adopts it at the asset's adapt_after). */
    levelScans: integer("level_scans").notNull().default(1),
    /**
     * How far the last alert was from its baseline, signed, in units of the allowed change (|x| > 1 is
     * outside): a later finding escalates when it goes the other way or two units further.
     */
    deviation: real("deviation"),
    openedAt: text("opened_at").notNull(),
    lastAlertAt: text("last_alert_at").notNull(),
    closedAt: text("closed_at"),
    closeReason: text("close_reason", { enum: CLOSE_REASONS }),
    /** First manual change (PATCH), for the mean time to first response. */
    firstResponseAt: text("first_response_at"),
    ticketKey: text("ticket_key"),
    ticketUrl: text("ticket_url"),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("incidents_open_uq")
      .on(t.tenantId, t.assetId, t.policy, t.attribute, t.segment)
      .where(sql`${t.state} = 'OPEN'`),
    index("incidents_tenant_opened_idx").on(t.tenantId, t.openedAt, t.id),
    index("incidents_tenant_project_opened_idx").on(t.tenantId, t.projectId, t.openedAt),
    index("incidents_tenant_state_idx").on(t.tenantId, t.state, t.closedAt),
    index("incidents_tenant_asset_idx").on(t.tenantId, t.assetId),
  ],
);

/**
 * The counts and sums the incidents summary and distribution read, per UTC day of opened_at and
 * every key their filters can name (project, connection, connection type, policy) with the tag,
 * severity and impact they group by. Kept by triggers on incidents (migration
 * 0009_incident_rollup_triggers): every insert, update of these columns and delete of an incident
 * moves its row here in the same statement, whichever code wrote it (monitor, manual change, move,
 * retention), so the rollup never disagrees with the incidents. Seconds are rounded per incident
 * exactly as the raw query rounds them, so sums give the raw query's means.
 */
const rollupCounts = {
  /** Incidents opened that day. */
  total: integer("total").notNull(),
  /** Of them, CLOSED now. */
  closed: integer("closed").notNull(),
  /** CLOSED ones with a closing time, and the sum of their whole seconds from opening to closing. */
  resolved: integer("resolved").notNull(),
  resolveSeconds: integer("resolve_seconds").notNull(),
  /** Ones with a first response, and the sum of their whole seconds from opening to it. */
  responded: integer("responded").notNull(),
  responseSeconds: integer("response_seconds").notNull(),
};

/** incidents per (tenant, day, project, connection, type, policy, tag, severity, impact): answers every filter but text. */
export const incidentRollups = sqliteTable(
  "incident_rollups",
  {
    tenantId: text("tenant_id").notNull(),
    /** YYYY-MM-DD, substr(opened_at, 1, 10). */
    day: text("day").notNull(),
    projectId: integer("project_id").notNull(),
    connectionId: integer("connection_id").notNull(),
    connectionType: text("connection_type").notNull(),
    policy: text("policy").notNull(),
    tag: text("tag").notNull(),
    severity: text("severity", { enum: LEVELS }).notNull(),
    impact: text("impact", { enum: LEVELS }).notNull(),
    ...rollupCounts,
  },
  (t) => [
    primaryKey({
      columns: [
        t.tenantId,
        t.day,
        t.projectId,
        t.connectionId,
        t.connectionType,
        t.policy,
        t.tag,
        t.severity,
        t.impact,
      ],
    }),
  ],
);

/**
 * The same per (tenant, day, tag, severity, impact) only: a tenant-wide read (no project,
 * connection or policy filter) sums a few dozen rows a day instead of one per key.
 */
export const incidentDayRollups = sqliteTable(
  "incident_day_rollups",
  {
    tenantId: text("tenant_id").notNull(),
    day: text("day").notNull(),
    tag: text("tag").notNull(),
    severity: text("severity", { enum: LEVELS }).notNull(),
    impact: text("impact", { enum: LEVELS }).notNull(),
    ...rollupCounts,
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.day, t.tag, t.severity, t.impact] })],
);

/**
 * The same per (tenant, day, tag) alone, with the day's incidents counted per severity and per
 * impact beside: what a read with no filter but the range sums (the summary groups it by tag, the
 * distribution by day), four rows a day instead of one per tag, severity and impact (~36). Kept by
 * its own triggers (migration 0011_incident_tag_rollup_triggers), like the others.
 */
export const incidentTagRollups = sqliteTable(
  "incident_tag_rollups",
  {
    tenantId: text("tenant_id").notNull(),
    day: text("day").notNull(),
    tag: text("tag").notNull(),
    ...rollupCounts,
    severityLow: integer("severity_low").notNull(),
    severityMedium: integer("severity_medium").notNull(),
    severityHigh: integer("severity_high").notNull(),
    impactLow: integer("impact_low").notNull(),
    impactMedium: integer("impact_medium").notNull(),
    impactHigh: integer("impact_high").notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.day, t.tag] })],
);

/** An alert as an incident's detail shows it among its metrics. */
export interface AlertMetric {
  id: number;
  jobId: string;
  metric: string;
  metricValue: string;
  metricTime: string;
  priority: "LOW" | "MEDIUM" | "HIGH";
  details: Record<string, unknown>;
}

/**
 * An incident's history entry as its asset's AssetMonitor keeps it (issue 38): what a row of
 * incident_history says, without the tenant (the object is the asset's). `legacyId`: the D1 id of
 * an entry moved in from incident_history (null for the object's own); `seq`: the object's order
 * of its own entries, which follow moved ones of the same time (as D1's later ids would have).
 */
export interface IncidentEntry {
  incidentId: number;
  time: string;
  fromState: IncidentState | null;
  toState: IncidentState;
  alertRefs: number[];
  actor: string;
  note: string | null;
  reason: string | null;
  jobId: string | null;
  details: Record<string, unknown> | null;
  alertMetrics: AlertMetric[] | null;
  legacyId: number | null;
  seq: number;
}

/**
 * A history entry to keep (IncidentEntry without the object's order): `opens` names, by its key,
 * the incident a scan's D1 batch opens (incidentId null until its batch gives the id).
 */
export type NewIncidentEntry = Omit<IncidentEntry, "legacyId" | "seq" | "incidentId"> &
  ({ incidentId: number; opens?: undefined } | { incidentId: null; opens: string });

/**
 * Every state change of an incident, with the alerts that caused it. Since issue 38 the entries
 * live in the asset's AssetMonitor (IncidentEntry); the rows here are those from before, which the
 * history's move (src/retention/history-move.ts) carries there and deletes.
 */
export const incidentHistory = sqliteTable(
  "incident_history",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id").notNull(),
    incidentId: integer("incident_id")
      .notNull()
      .references(() => incidents.id, { onDelete: "cascade" }),
    time: text("time").notNull(),
    /** null for the opening entry; equal states for an entry that only adds alerts. */
    fromState: text("from_state", { enum: INCIDENT_STATES }),
    toState: text("to_state", { enum: INCIDENT_STATES }).notNull(),
    /** Alert ids (alerts.id) this entry is about. */
    alertRefs: text("alert_refs", { mode: "json" }).$type<number[]>().notNull(),
    /** "system" or the user / key that acted. */
    actor: text("actor").notNull(),
    note: text("note"),
    reason: text("reason"),
    /** The scan job the entry came from, when a scan caused it (idempotency of replays). */
    jobId: text("job_id"),
    /**
     * What the scan measured, for an entry that confirms the incident without a new alert
     * (metric, observed, expected), or the bands before and after a NEW_NORMAL adoption.
     */
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>(),
    /**
     * The alerts of alert_refs as the incident's detail shows them (AlertMetric: id, job, metric,
     * value, time, priority, details), written with the entry: the alerts themselves live in the
     * asset's Durable Object (issue 38), and the detail reads D1 alone. null: an entry from before,
     * whose alerts are still in D1's alerts table until the history's move fills it.
     */
    alertMetrics: text("alert_metrics", { mode: "json" }).$type<AlertMetric[]>(),
  },
  (t) => [
    index("incident_history_incident_idx").on(t.incidentId, t.time),
    uniqueIndex("incident_history_job_uq").on(t.incidentId, t.jobId),
  ],
);

/** A tenant's Jira Cloud integration: the API token is sealed (lib/crypto), never returned. */
export const jiraIntegrations = sqliteTable("jira_integrations", {
  tenantId: text("tenant_id")
    .primaryKey()
    .references(() => tenants.id, { onDelete: "cascade" }),
  baseUrl: text("base_url").notNull(),
  email: text("email").notNull(),
  tokenSecret: text("token_secret").notNull(),
  /** Template used to open a ticket automatically when an incident opens; null = never. */
  defaultTemplateId: integer("default_template_id"),
  updatedAt: text("updated_at").notNull(),
});

export const TICKET_STATUSES = ["PENDING", "CREATED", "FAILED"] as const;

/** A ticket request for an incident: retried until Jira answers, reported either way. */
export const ticketRequests = sqliteTable(
  "ticket_requests",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    incidentId: integer("incident_id").notNull(),
    templateId: integer("template_id").notNull(),
    status: text("status", { enum: TICKET_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    ticketKey: text("ticket_key"),
    error: text("error"),
    /** When a PENDING request is next due (backoff on its attempts, or Jira's Retry-After if later). */
    nextAttemptAt: text("next_attempt_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("ticket_requests_incident_idx").on(t.tenantId, t.incidentId),
    // The cron's query across tenants: due PENDING requests, soonest first.
    index("ticket_requests_due_idx").on(t.status, t.nextAttemptAt),
  ],
);

export const BACKFILL_STATUSES = ["RUNNING", "SUCCEEDED", "FAILED"] as const;
export type BackfillStatus = (typeof BACKFILL_STATUSES)[number];
/** An asset the backfill could not rebuild ("" when the step itself failed), and why. */
export interface BackfillError {
  asset_id: string;
  message: string;
}

/**
 * Progress of an incident backfill (POST …/incidents/historical). Its steps run one queue message
 * at a time and write only while it is RUNNING and still at their cursor, so a replayed or
 * dead-lettered step never changes a finished job or counts an asset twice.
 */
export const incidentBackfills = sqliteTable(
  "incident_backfills",
  {
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    id: text("id").notNull(),
    status: text("status", { enum: BACKFILL_STATUSES }).notNull(),
    /** The window of alerts it folds: [since, until). */
    since: text("since").notNull(),
    until: text("until").notNull(),
    requestedBy: text("requested_by").notNull(),
    startedAt: text("started_at").notNull(),
    finishedAt: text("finished_at"),
    /** Assets with alerts in the window, counted by the first step. */
    assetsTotal: integer("assets_total"),
    assetsDone: integer("assets_done").notNull().default(0),
    incidents: integer("incidents").notNull().default(0),
    alerts: integer("alerts").notNull().default(0),
    errors: text("errors", { mode: "json" }).$type<BackfillError[]>().notNull(),
    /** The asset id the next step starts after: a step carrying another cursor is a duplicate delivery. */
    afterAssetId: integer("after_asset_id").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] })],
);
