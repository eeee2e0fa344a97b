/**
 * A closed incident is an answer: what the asset's user (or the detector, NEW_NORMAL) said about a
 * condition, remembered per (policy, attribute, segment, direction), and the rule that keeps that
 * condition quiet afterwards. Pure: the AssetMonitor keeps the closes in its own storage.
 *
 * After a close as EXPECTED, NEW_NORMAL, FALSE_POSITIVE or NO_ACTION_NEEDED, a finding of the same
 * condition is an alert again only when it goes clearly further than the alert that was closed: by
 * the rule that makes a finding of an open incident alert again (escalates: ESCALATION_STEP units of
 * its allowed change further, or a higher priority), measured in the closed alert's own unit when it
 * quoted a band (closedUnit: the baseline learns after a close, and its units change with it; the
 * user's answer was about what that alert said). The reasons differ in what the baseline learns
 * (see the AssetMonitor): EXPECTED and NEW_NORMAL move it to the new level; FALSE_POSITIVE and
 * NO_ACTION_NEEDED give the incident's points back to it unmoved. FIXED and AUTO_RESOLVED are not
 * answers about the level: the condition coming back is news, and alerts.
 */

import { type Segment, segmentKey } from "../contracts/segments";
import type { CloseReason, Level } from "../db/schema";
import { deviationFrom, round } from "./checks/common";
import { ESCALATION_STEP, escalates, incidentKey, RANK } from "./incident-planner";
import { escapeName } from "./metrics";
import { segmentPrefix } from "./segments";
import type { AfterClose, Band, EvaluatedPoint, PolicyAlert } from "./types";

/** The close reasons that answer a condition. */
export const ANSWERING_REASONS: readonly CloseReason[] = [
  "EXPECTED",
  "NEW_NORMAL",
  "FALSE_POSITIVE",
  "NO_ACTION_NEEDED",
];

/** A condition closed with an answering reason, as the AssetMonitor keeps it. */
export interface ClosedCondition {
  policy: string;
  /** "" for an asset-level condition. */
  attribute: string;
  /** segmentKey of the segment; "" for the whole asset. */
  segment: string;
  /** Sign of the closed alert's deviation (-1, 0 or 1): a move the other way is another condition. */
  direction: number;
  reason: CloseReason;
  incidentId: number;
  closedAt: string;
  /** Deviation of the closed incident's last alert (null: its policy measures none). */
  deviation: number | null;
  /** The closed alert's metric, observed value and numeric band, when it had them. */
  metric: string | null;
  observed: number | null;
  band: Band | null;
  /** The closed incident's severity: a finding of a higher priority alerts. */
  severity: Level;
}

const direction = (deviation: number | null | undefined) =>
  deviation === null || deviation === undefined || !Number.isFinite(deviation) ? 0 : Math.sign(deviation);

/** The key of a condition: its incident's key and the direction of its deviation. */
export const conditionKey = (policy: string, attribute: string, segment: string, dir: number) =>
  `${incidentKey(policy, attribute, segment)}\u0000${dir}`;

const keyOfAlert = (a: PolicyAlert) =>
  conditionKey(a.policy, a.attribute ?? "", segmentKey(a.segment), direction(a.deviation));

const isBand = (x: unknown): x is Band =>
  typeof x === "object" && x !== null && Number.isFinite((x as Band).low) && Number.isFinite((x as Band).high);

/**
 * The remembered close of an incident closed now: `last` is its last alert (or, for NEW_NORMAL, the
 * finding at the level adopted), with its deviation, metric, observed value and band.
 */
export function closedCondition(
  incident: { id: number; policy: string; attribute: string; segment: string; severity: Level },
  last: { metric?: string; observed?: unknown; expected?: unknown; deviation?: number | null },
  reason: CloseReason,
  closedAt: string,
): ClosedCondition {
  const deviation =
    last.deviation !== undefined && last.deviation !== null && Math.abs(last.deviation) < 1e12 ? last.deviation : null;
  return {
    policy: incident.policy,
    attribute: incident.attribute,
    segment: incident.segment,
    direction: direction(deviation),
    reason,
    incidentId: incident.id,
    closedAt,
    deviation,
    severity: incident.severity,
    metric: last.metric ?? null,
    observed: typeof last.observed === "number" && Number.isFinite(last.observed) ? last.observed : null,
    band: isBand(last.expected) ? { low: last.expected.low, high: last.expected.high } : null,
  };
}

/**
 * The closed alert's unit of deviation in its metric's own terms: its deviation grows by one per
 * `unit` of observed value beyond the band edge it crossed (a band's half-width; a share's allowed
 * rise; with no history, the limit itself), read off its observed value, deviation and band.
 */
export function closedUnit(c: Pick<ClosedCondition, "band" | "observed" | "deviation">): number | undefined {
  if (!c.band || c.observed === null || c.deviation === null || Math.abs(c.deviation) <= 1) return undefined;
  const edge = c.deviation > 0 ? c.band.high : c.band.low;
  const unit = (c.observed - edge) / (c.deviation - Math.sign(c.deviation));
  return Number.isFinite(unit) && unit > 0 ? unit : undefined;
}

/** Whether a finding of a closed condition goes clearly further than the alert that was closed. */
function beyond(close: ClosedCondition, a: PolicyAlert): boolean {
  if (a.event || RANK[a.priority] > RANK[close.severity]) return true;
  if (close.band && close.observed !== null && close.metric === a.metric && typeof a.observed === "number") {
    const unit = closedUnit(close);
    if (unit !== undefined)
      return (Math.sign(close.deviation!) * (a.observed - close.observed)) / unit >= ESCALATION_STEP;
    const was = deviationFrom(close.observed, close.band);
    const now = deviationFrom(a.observed, close.band);
    return Math.sign(now) === Math.sign(was) && Math.abs(now) - Math.abs(was) >= ESCALATION_STEP;
  }
  const closed = {
    id: close.incidentId,
    policy: close.policy,
    attribute: close.attribute,
    segment: close.segment,
    state: "CLOSED" as const,
    severity: close.severity,
    cleanScans: 0,
    levelScans: 0,
    deviation: close.deviation,
    openedAt: close.closedAt,
    lastAlertAt: close.closedAt,
  };
  return escalates(closed, { ...a, attribute: a.attribute ?? "" });
}

/**
 * Splits a scan's alerts by the closes: `alerts` are still alerts (those of a closed condition that
 * went clearly further carry `after_close`), `answered` are findings a close already answered.
 */
export function answerCloses(
  alerts: readonly PolicyAlert[],
  closes: readonly ClosedCondition[],
): { alerts: PolicyAlert[]; answered: PolicyAlert[] } {
  if (closes.length === 0) return { alerts: [...alerts], answered: [] };
  const byKey = new Map(closes.map((c) => [conditionKey(c.policy, c.attribute, c.segment, c.direction), c]));
  const out: PolicyAlert[] = [];
  const answered: PolicyAlert[] = [];
  for (const a of alerts) {
    const close = byKey.get(keyOfAlert(a));
    if (!close) {
      out.push(a);
      continue;
    }
    if (beyond(close, a)) {
      const after: AfterClose = {
        incident_id: close.incidentId,
        reason: close.reason,
        closed_at: close.closedAt,
        accepted_deviation: close.deviation === null ? null : round(close.deviation),
        accepted_observed: close.observed,
        band_at_close: close.band,
      };
      out.push({ ...a, after_close: after });
    } else {
      answered.push(a);
    }
  }
  return { alerts: out, answered };
}

/** Whether a metric belongs to the findings of `attribute` ("" = the asset-level metrics) in `segment`. */
export function ownsMetric(metric: string, attribute: string, segment?: Segment): boolean {
  const prefix = segment ? segmentPrefix(segment) : "";
  if (!metric.startsWith(prefix)) return false;
  const own = metric.slice(prefix.length);
  if (own === "duplicate_count") return true;
  if (!segment && own.startsWith("seg:")) return false;
  return attribute === "" ? !own.startsWith("attr:") : own.startsWith(`attr:${escapeName(attribute)}:`);
}

/**
 * The scan's points with the answered findings' exclusions lifted: a close said their level is
 * normal, so the baseline learns it (a point another policy's alert excluded stays out).
 */
export function releaseAnswered(points: readonly EvaluatedPoint[], answered: readonly PolicyAlert[]): EvaluatedPoint[] {
  if (answered.length === 0) return [...points];
  return points.map((p) => {
    if (!p.excluded || !p.excluded_by) return p;
    const rest = p.excluded_by.filter(
      (policy) => !answered.some((a) => a.policy === policy && ownsMetric(p.metric, a.attribute ?? "", a.segment)),
    );
    if (rest.length === p.excluded_by.length) return p;
    return rest.length > 0
      ? { ...p, excluded_by: rest }
      : { metric: p.metric, value: p.value, ...(p.attribute ? { attribute: p.attribute } : {}), excluded: false };
  });
}
