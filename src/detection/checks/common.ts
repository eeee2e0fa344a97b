/**
 * What every check shares: its context and result shapes, the number formats of the alert texts,
 * and the share test the rate policies use (a Wilson interval against the metric's own history).
 */
import type { HistoryPoint, TrainingState } from "../../contracts/asset-monitor";
import type { AttributeProfile } from "../../contracts/profile";
import type { AttributeKind } from "../../db/schema";
import { type AnomalyParams, type AnomalyResult, baselinePoints, SCAN_PERIOD, shareBaseline } from "../anomaly";
import type { EvaluationInput } from "../input";
import { investigationSentence } from "../investigate";
import { wilson } from "../stats";
import type {
  Band,
  InvestigationEntry,
  MetricHistory,
  MovedValue,
  PolicyAlert,
  Priority,
  SchemaChange,
} from "../types";

export interface CheckContext {
  input: EvaluationInput;
  profile: EvaluationInput["profile"];
  history: MetricHistory;
  /** This scan's metric values by name. */
  current: Map<string, number>;
  idAttributes: Set<string>;
  /** The kind of every attribute of the scan. */
  kinds: Readonly<Record<string, AttributeKind>>;
  /** The profile's attributes of the kinds the policy fits (its definition's `fits`), in profile order. */
  attributes: readonly AttributeProfile[];
}

export interface Finding {
  attribute?: string;
  metric: string;
  observed: number | string;
  metric_value?: string;
  expected?: Band | string;
  /** The unit of observed and expected, where the metric's name does not say it (freshness: hours). */
  unit?: string;
  description: string;
  strategy?: string;
  training_window?: { from: string; to: string };
  training_size?: number;
  values?: MovedValue[];
  schema_changes?: SchemaChange[];
  /** See PolicyAlert.investigation. */
  investigation?: InvestigationEntry[];
  /** See PolicyAlert.deviation. */
  deviation?: number;
  /** See PolicyAlert.adaptable. */
  adaptable: boolean;
  /** See PolicyAlert.event. */
  event?: boolean;
  /** The highest priority the finding may have (one record is at most a LOW observation). */
  max_priority?: Priority;
  /** Metric points of this scan to keep out of future baselines. */
  exclude: string[];
}

export interface CheckResult {
  findings: Finding[];
  training: Omit<TrainingState, "policy">[];
}

/** A policy's check: its findings in one scan. `earlier`: this scan's alerts of the policies it runs after. */
export type Check<Params> = (ctx: CheckContext, params: Params, earlier: readonly PolicyAlert[]) => CheckResult;

export const NOTHING: CheckResult = { findings: [], training: [] };

/** Standard deviations of a metric's own history that are still ordinary (the anomaly policies' default threshold). */
export const SPREAD_Z = 3.5;

/**
 * A number as a reader wants it: integers whole, others to 4 significant digits but never fewer
 * than their whole part (396358 h, not 396400 h: the text must not round what `details` keeps).
 */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n) || Math.abs(n) >= 1000) return String(Math.round(n));
  return String(Number(n.toPrecision(4)));
}

export function pct(rate: number): string {
  const digits = rate !== 0 && Math.abs(rate) < 0.001 ? 3 : rate !== 0 && Math.abs(rate) < 0.01 ? 2 : 1;
  return `${(rate * 100).toFixed(digits)}%`;
}

/** A number for `details`: 6 significant digits, never fewer than its whole part (what fmt quotes stays a rounding of it). */
export const round = (n: number) => (Math.abs(n) >= 1e5 ? Math.round(n * 10) / 10 : Number(n.toPrecision(6)));
export const roundBand = (b: Band): Band => ({ low: round(b.low), high: round(b.high) });

/**
 * The band of a count (rows, distinct values): the whole numbers inside it, never below 0 nor
 * above `max` (distinct values are at most the values). A whole count is outside it exactly when
 * it is outside the band it comes from, so the band the text quotes is the one that decided.
 */
export function countBand(b: Band, max = Number.POSITIVE_INFINITY): Band {
  const high = Math.min(max, Math.floor(b.high));
  // A band beyond `max` asks for more than can be: the most there can be is all it can ask.
  return { low: Math.min(high, Math.max(0, Math.ceil(b.low))), high };
}

/** A p-value as the texts quote it: "p = 2.1e-9", or "p < 1e-300" when it underflows. */
export function pText(p: number): string {
  return p < 1e-300 ? "p < 1e-300" : `p = ${p.toExponential(1)}`;
}

export function bandText(b: Band): string {
  return `${fmt(b.low)} to ${fmt(b.high)}`;
}

function strategyText(r: AnomalyResult, p: AnomalyParams): string {
  switch (r.strategy) {
    case "rate_of_change":
      return `rate of change against the previous scan, at most ${pct(p.max_change)}`;
    case "weekly_seasonal":
      return `weekly-seasonal baseline: robust z-score over ${r.window_size} past scans on the same weekday and hour, threshold ${p.threshold}`;
    case "seasonal": {
      const s = r.season!;
      const cycle = s.cycle === "scans" ? `a cycle of ${SCAN_PERIOD} scans` : `a ${s.cycle} cycle`;
      return `seasonal baseline: ${cycle} found in its last ${r.window_size} scans, judged against its ${s.phase_points} past scans of the same phase (${s.phase}), level ${fmt(s.phase_level)}, robust z-score of the scans around their phase's level, threshold ${p.threshold}`;
    }
    default:
      return `robust z-score on median/MAD of the last ${r.window_size} scans, threshold ${p.threshold}`;
  }
}

export function trainingWindow(from?: string, to?: string) {
  return from && to ? { training_window: { from, to } } : {};
}

export function anomalyFields(r: AnomalyResult, p: AnomalyParams) {
  return {
    strategy: r.strategy,
    training_size: r.window_size,
    ...trainingWindow(r.from, r.to),
    strategyText: strategyText(r, p),
  };
}

/** Signed distance of x from a band's centre in half-widths (beyond ±1 is outside). */
export function deviationFrom(x: number, band: Band): number {
  const centre = (band.low + band.high) / 2;
  const half = (band.high - band.low) / 2;
  return half > 0 ? (x - centre) / half : x === centre ? 0 : Math.sign(x - centre) * Number.MAX_VALUE;
}

export function ignored(params: { ignore_attributes?: string[] }, a: AttributeProfile): boolean {
  return params.ignore_attributes?.includes(a.name) ?? false;
}

export const assetName = (ctx: CheckContext) => ctx.input.asset.name;

/** Whether the investigator runs on this scan (off with the asset's skip_investigator). */
export const investigating = (ctx: CheckContext) => ctx.input.investigate !== false;

/**
 * A finding with where its problem sits, when it sits somewhere in particular: the entries, and
 * one sentence about the strongest at the end of the description. `problem` names the problem
 * rows ("missing values of email"); `exclude` adds metrics to leave out of the baselines.
 */
export function withInvestigation(
  finding: Finding,
  entries: InvestigationEntry[],
  problem: string,
  exclude: string[] = [],
  quantity?: string,
): Finding {
  const sentence = investigationSentence(entries, problem, problem.startsWith("move") ? "comes" : "come", quantity);
  const excluded = exclude.length ? { ...finding, exclude: [...finding.exclude, ...exclude] } : finding;
  if (!sentence) return excluded;
  return { ...excluded, description: `${finding.description} ${sentence}`, investigation: entries };
}

/** An attribute's kind; one the scan did not type is a code. */
export const kindOf = (ctx: Pick<CheckContext, "kinds">, a: Pick<AttributeProfile, "name">): AttributeKind =>
  ctx.kinds[a.name] ?? "code";

/** Parameters of a share test (completeness, type mismatch, duplicate rows). */
export interface ShareTestParams {
  window: number;
  /** Past scans needed before the history decides; fewer and `max_rate` alone does. */
  min_history: number;
  /** Standard errors of the Wilson interval: the share must be above the limit even at its lower bound. */
  z: number;
  /** The smallest rise worth an alert, in share points (0.002 = a fifth of a percentage point). */
  margin: number;
  /** Without history: the share above which it alerts; absent, nothing is judged until there is history. */
  max_rate?: number;
}

export interface ShareVerdict {
  fires: boolean;
  /** The highest share that is still normal. */
  limit: number;
  /** The share the history says is usual (median), when there is history. */
  usual?: number;
  /** The Wilson interval of the observed share. */
  interval: { low: number; high: number };
  past: HistoryPoint[];
  why: string;
  deviation: number;
}

/**
 * Is `k` of `n` more than the history allows? It alerts when even the Wilson lower bound of k/n is
 * above the limit, so a share measured on few rows needs a larger rise. The limit is the usual
 * share (median of past scans, or a wandering history's recent level) plus the larger of `margin`
 * and the history's drift beyond sampling (excessSpread, a studentized bound) added to the Wilson
 * half-width in quadrature, since the two are independent errors. Without `min_history` past
 * scans: above `max_rate`.
 */
export function shareTest(
  history: readonly HistoryPoint[] | undefined,
  jobId: string,
  k: number,
  n: number,
  p: ShareTestParams,
): ShareVerdict {
  const share = n > 0 ? k / n : 0;
  const interval = wilson(k, n, p.z);
  const past = baselinePoints(history, jobId).slice(-p.window);
  if (past.length < p.min_history) {
    const limit = p.max_rate ?? 1;
    return {
      fires: share > limit,
      limit,
      interval,
      past,
      why: "no history yet",
      deviation: limit > 0 ? share / limit : 1,
    };
  }
  const values = past.map((h) => h.value);
  // The Wilson bound covers this scan's sampling; the history adds only its drift beyond sampling.
  const base = shareBaseline(values, n, SPREAD_Z);
  const usual = base.centre;
  // The scan's sampling (the Wilson interval's lower half) and the history's drift are independent:
  // the rise they allow together is their quadrature sum, of which the Wilson bound takes its part.
  const below = share - interval.low;
  const allowed = Math.max(p.margin, Math.hypot(below, base.allowed) - below);
  const limit = Math.min(1, usual + allowed);
  const fires = interval.low > limit;
  const level = base.wandering ? "its recent level" : "its usual";
  const why = `${level} ${pct(usual)} over the last ${past.length} scans plus ${pct(allowed)}, judged on the Wilson lower bound ${pct(interval.low)} of ${fmt(k)} in ${fmt(n)}`;
  return { fires, limit, usual, interval, past, why, deviation: allowed > 0 ? (share - usual) / allowed : 1 };
}
