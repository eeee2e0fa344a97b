/**
 * Shapes shared by metric extraction, anomaly detection and the prebuilt policies. Plain JSON
 * throughout: the AssetMonitor stores the points and the alerts as they are.
 */

import type { HistoryPoint, TrainingState } from "../contracts/asset-monitor";
import type { DqDimension } from "../contracts/dimensions";
import type { AttributeKind, CloseReason } from "../db/schema";

export const PRIORITIES = ["LOW", "MEDIUM", "HIGH"] as const;
export type Priority = (typeof PRIORITIES)[number];

/**
 * A per-asset override of one policy: any of enabled, priority, notify and a subset of its params
 * (an explicit `undefined` means "not set", not "unset the default").
 */
export interface PolicyOverride<Params extends object = Record<string, unknown>> {
  enabled?: boolean;
  priority?: Priority;
  /** false mutes this policy's notifications on the asset (its alerts say is_notification_enabled: false). */
  notify?: boolean;
  params?: Partial<Params>;
}

/** Overrides by policy id, as any registry's policies take them (policies/index.ts types the built-in ones). */
export type PolicyOverridesById = Readonly<Record<string, PolicyOverride | undefined>>;

/** One named value a scan produced, e.g. `row_count` or `attr:amount:null_rate`. */
export interface MetricPoint {
  metric: string;
  value: number;
  attribute?: string;
}

/** For each metric name, its past points, oldest first. */
export type MetricHistory = Record<string, HistoryPoint[]>;

/** A point of this scan, as it should be stored in the history. */
export interface EvaluatedPoint extends MetricPoint {
  /** True when a policy flagged it; the lead flips it back when the user accepts the incident. */
  excluded: boolean;
  /** Policies whose alert excluded it, so closing that incident knows which points to release. */
  excluded_by?: string[];
}

export interface Band {
  low: number;
  high: number;
}

/** What the AssetMonitor turns into an alert row (spec 2.6 plus the explanation fields). */
export interface PolicyAlert {
  /** Policy id = the alert's `type`. */
  policy: string;
  policy_name: string;
  attribute?: string;
  priority: Priority;
  /** A readable sentence: what, where, observed vs expected. */
  description: string;
  metric: string;
  metric_value: string;
  observed: number | string;
  expected?: Band | string;
  /** The unit of observed and expected, where the metric's name does not say it (freshness: hours). */
  unit?: string;
  /** The detection strategy that decided, for anomaly policies. */
  strategy?: string;
  /** Time span of the baseline, for anomaly policies. */
  training_window?: { from: string; to: string };
  /** Number of past scans in the baseline. */
  training_size?: number;
  /** The incident tag. */
  dimension: DqDimension;
  /** The kind of the alert's attribute, for attribute-level policies. */
  attribute_kind?: AttributeKind;
  /** Categorical policies: the values that moved, with their baseline and observed shares. */
  values?: MovedValue[];
  /** schema_change: every attribute that changed (up to 200). */
  schema_changes?: SchemaChange[];
  /** Where the problem concentrates (the investigator, investigate.ts), strongest first. */
  investigation?: InvestigationEntry[];
  /** The segment (asset option `segments`) the alert is about; absent for the whole asset. */
  segment?: { attribute: string; value: string };
  /**
   * Signed distance from the baseline in units of the allowed change (beyond ±1 is outside): a later
   * finding of the same incident alerts again only when it goes the other way, or further by two
   * units (a band's width beyond the level already reported).
   */
  deviation?: number;
  /**
   * True when the finding measures a level the detector can adopt as its new baseline (NEW_NORMAL
   * after adapt_after scans); false for fixed limits (freshness, id duplicates, schema changes).
   */
  adaptable: boolean;
  /** True when each finding is a new event (a schema change): it alerts even with its incident open. */
  event?: boolean;
  /** The close of the same condition this alert went clearly beyond (closes.ts); absent when none. */
  after_close?: AfterClose;
}

/** What a later alert of a closed condition says about the close it went beyond (closes.ts). */
export interface AfterClose {
  incident_id: number;
  reason: CloseReason;
  closed_at: string;
  /** The closed alert's deviation and observed value: what the close accepted. */
  accepted_deviation: number | null;
  accepted_observed: number | null;
  /**
   * The band the closed alert quoted: with accepted_observed and accepted_deviation it gives the
   * closed alert's unit (closedUnit), of which this alert is ESCALATION_STEP further at least.
   */
  band_at_close: Band | null;
}

/** An attribute added, removed or retyped since the previous scan. */
export interface SchemaChange {
  attribute: string;
  change: "added" | "removed" | "retyped";
  /** Its type now (added, retyped) or before (removed). */
  type: string;
  previous_type?: string;
}

/** A value of a categorical attribute whose share changed. */
export interface MovedValue {
  value: string;
  /** Share in the baseline (0 for a new category). */
  expected: number;
  /** Share in this scan (0 for a vanished category). */
  observed: number;
  change: "new" | "vanished" | "up" | "down";
  /**
   * The test that found a moved share (up, down): the G-test over all the shares, or, for a value
   * rare in the baseline, a Poisson test of its count; with its p-value. New and vanished values
   * are judged by their shares alone.
   */
  test?: "g_test" | "poisson";
  p_value?: number;
}

export interface AssetRef {
  id: string | number;
  name: string;
  type: string;
  id_attributes?: string[];
  timestamp_attribute?: string;
}

export interface Evaluation {
  alerts: PolicyAlert[];
  points: EvaluatedPoint[];
  training: TrainingState[];
}

/** A value the investigator found a problem concentrated in (investigate.ts). */
export interface InvestigationEntry {
  /** The attribute and value the problem concentrates in. */
  attribute: string;
  value: string;
  /** Rows holding the value, and of those, the rows with the problem. */
  rows: number;
  problem_rows: number;
  /** problem_rows ÷ all problem rows; rows ÷ all rows. */
  share_of_problem: number;
  share_of_rows: number;
  /**
   * Quantity shifts: the value's share of the quantity before the move (Σ rows × |mean|), which a
   * change by a factor spread at random would give it of the move.
   */
  share_of_metric?: number;
  /** share_of_problem ÷ share_of_rows. */
  lift: number;
}
