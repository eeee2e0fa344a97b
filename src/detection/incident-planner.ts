/**
 * The incident rules, as a pure function: the asset's open incidents and one scan's findings in,
 * the decisions out (which findings are alerts, which confirm an incident, which are adopted as
 * the new normal). No I/O: the AssetMonitor reads the open incidents and writes the decisions.
 */

import type { TransitionRefusal } from "../contracts/asset-monitor";
import { segmentKey } from "../contracts/segments";
import type { IncidentState, Level } from "../db/schema";
import type { PolicyAlert } from "./types";

/** Consecutive clean scans after which an incident closes itself, unless the asset says otherwise. */
export const DEFAULT_AUTO_CLOSE_AFTER = 3;

/** Scans at a new level after which the detector adopts it (NEW_NORMAL), unless the asset says otherwise. */
export const DEFAULT_ADAPT_AFTER = 3;

/**
 * How much further than the last alert a finding must go to alert again, in units of its allowed
 * change (a band's half-width): two, a full band width beyond the level already reported.
 */
export const ESCALATION_STEP = 2;

/** Priorities in order, for comparisons. */
export const RANK: Record<Level, number> = { LOW: 1, MEDIUM: 2, HIGH: 3 };

/** What the rules need of a finding: the policy's alert, as evaluated or as read back from D1. */
export type IncidentAlert = Pick<PolicyAlert, "policy" | "policy_name" | "priority" | "dimension"> &
  Partial<Pick<PolicyAlert, "deviation" | "adaptable" | "event" | "segment">> & {
    /** "" for an asset-level alert. */
    attribute: string;
  };

/** What the rules need of an open incident. */
export interface OpenIncident {
  id: number;
  policy: string;
  attribute: string;
  /** The segment's stored key (segmentKey); "" for the whole asset. */
  segment: string;
  state: IncidentState;
  severity: Level;
  cleanScans: number;
  /** Consecutive scans at the level of the last alert. */
  levelScans: number;
  /** Signed deviation of the last alert (see PolicyAlert.deviation). */
  deviation: number | null;
  openedAt: string;
  lastAlertAt: string;
}

/** The key of an incident: one OPEN incident per (policy, attribute, segment) of an asset. */
export const incidentKey = (policy: string, attribute: string, segment = "") =>
  `${policy}\u0000${attribute}\u0000${segment}`;

/** The key of the incident a finding belongs to. */
export const incidentKeyOf = (a: IncidentAlert) => incidentKey(a.policy, a.attribute, segmentKey(a.segment));

export type IncidentDecision<A extends IncidentAlert = IncidentAlert> =
  /** No open incident for the finding's key: it is an alert and opens one. */
  | { kind: "open"; alert: A }
  /** The open incident's problem got worse (further, the other way, or a higher priority): a new alert joins it. */
  | { kind: "escalate"; incident: OpenIncident; alert: A; severity: Level }
  /** The same problem again: no alert; the incident records the scan. */
  | { kind: "confirm"; incident: OpenIncident; alert: A; levelScans: number }
  /** The confirming scan that reaches adapt_after: the detector adopts the level, the incident closes as NEW_NORMAL. */
  | { kind: "adopt"; incident: OpenIncident; alert: A; levelScans: number }
  /** No finding for an open incident in this scan: one more clean scan. */
  | { kind: "clean"; incident: OpenIncident }
  /** The clean scan that reaches the asset's auto-close threshold. */
  | { kind: "auto_close"; incident: OpenIncident; cleanScans: number };

export interface PlanSettings {
  /** Consecutive clean scans that close an incident. */
  autoCloseAfter: number;
  /** Scans at a new level after which an adaptable finding's level is adopted. */
  adaptAfter: number;
  /** The findings are alerts already written (a rebuild from D1): each one joins its incident. */
  alreadyAlerts?: boolean;
}

/** Whether a finding for an open incident is worse than what the incident reported. */
export function escalates(incident: OpenIncident, alert: IncidentAlert): boolean {
  if (alert.event || RANK[alert.priority] > RANK[incident.severity]) return true;
  const was = incident.deviation;
  const now = alert.deviation;
  if (was === null || now === undefined || !Number.isFinite(was) || !Number.isFinite(now) || was === 0) return false;
  return Math.sign(now) !== Math.sign(was) || Math.abs(now) - Math.abs(was) >= ESCALATION_STEP;
}

/**
 * Folds one scan's findings into the asset's open incidents. A finding without an open incident
 * of its (policy, attribute) is an alert that opens one. With one, it is an alert only when it
 * escalates; otherwise it confirms the incident, and the `adaptAfter`-th consecutive scan at that
 * level of an adaptable finding adopts it (NEW_NORMAL). Each open incident without a finding counts
 * a clean scan and closes itself after `autoCloseAfter` of them.
 */
export function planIncidents<A extends IncidentAlert>(
  open: ReadonlyMap<string, OpenIncident>,
  alerts: readonly A[],
  settings: PlanSettings,
): IncidentDecision<A>[] {
  const decisions: IncidentDecision<A>[] = [];
  const hit = new Set<string>();
  for (const alert of alerts) {
    const key = incidentKeyOf(alert);
    hit.add(key);
    const incident = open.get(key);
    if (!incident) {
      decisions.push({ kind: "open", alert });
      continue;
    }
    if (settings.alreadyAlerts || escalates(incident, alert)) {
      const severity = RANK[alert.priority] > RANK[incident.severity] ? alert.priority : incident.severity;
      decisions.push({ kind: "escalate", incident, alert, severity });
      continue;
    }
    const levelScans = incident.levelScans + 1;
    const adopt = alert.adaptable === true && levelScans >= settings.adaptAfter;
    decisions.push({ kind: adopt ? "adopt" : "confirm", incident, alert, levelScans });
  }
  for (const [key, incident] of open) {
    if (hit.has(key)) continue;
    const cleanScans = incident.cleanScans + 1;
    decisions.push(
      cleanScans >= settings.autoCloseAfter
        ? { kind: "auto_close", incident, cleanScans }
        : { kind: "clean", incident },
    );
  }
  return decisions;
}

/** The findings of a plan that are alerts: those that open or escalate an incident. */
export function alertsOf<A extends IncidentAlert>(decisions: readonly IncidentDecision<A>[]): A[] {
  return decisions.flatMap((d) => (d.kind === "open" || d.kind === "escalate" ? [d.alert] : []));
}

/**
 * Checks a manual change of an incident's state: it must exist, not already be in that state,
 * and a reopen must not clash with another open incident of the same (policy, attribute).
 */
export function checkTransition(
  incident: OpenIncident | undefined,
  to: IncidentState,
  openForSameKey: { id: number } | undefined,
): TransitionRefusal | undefined {
  if (!incident) return { ok: false, problem: "not_found", message: "Incident not found" };
  if (incident.state === to) return { ok: false, problem: "conflict", message: `The incident is already ${to}` };
  if (to === "OPEN" && openForSameKey && openForSameKey.id !== incident.id) {
    return { ok: false, problem: "conflict", message: `Incident ${openForSameKey.id} is open for the same problem` };
  }
  return undefined;
}
