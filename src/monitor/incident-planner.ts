/**
 * The incident rules, as a pure function: the asset's open incidents and one scan's alerts in,
 * the decisions out. No I/O: the AssetMonitor reads the open incidents and writes the decisions.
 */

import type { IncidentState, Level } from "../db/schema";
import type { PolicyAlert } from "./policies/types";

/** Consecutive clean scans after which an incident closes itself, unless the asset says otherwise. */
export const DEFAULT_AUTO_CLOSE_AFTER = 3;

const RANK: Record<Level, number> = { LOW: 1, MEDIUM: 2, HIGH: 3 };

/** What the rules need of an alert: the policy's alert, as evaluated or as read back from D1. */
export type IncidentAlert = Pick<PolicyAlert, "policy" | "policy_name" | "priority" | "dimension"> & {
  /** "" for an asset-level alert. */
  attribute: string;
};

/** What the rules need of an open incident. */
export interface OpenIncident {
  id: number;
  policy: string;
  attribute: string;
  state: IncidentState;
  severity: Level;
  cleanScans: number;
}

/** The key of an incident: one OPEN incident per (policy, attribute) of an asset. */
export const incidentKey = (policy: string, attribute: string) => `${policy}\u0000${attribute}`;

export type IncidentDecision =
  /** No open incident for the alert's key: open one. */
  | { kind: "open"; alert: IncidentAlert }
  /** The alert joins the open incident; severity is the highest priority of its alerts. */
  | { kind: "join"; incident: OpenIncident; alert: IncidentAlert; severity: Level }
  /** No alert for an open incident in this scan: one more clean scan. */
  | { kind: "clean"; incident: OpenIncident }
  /** The clean scan that reaches the asset's auto-close threshold. */
  | { kind: "auto_close"; incident: OpenIncident; cleanScans: number };

/**
 * Folds one scan's alerts into the asset's open incidents: each alert joins the open incident of
 * its (policy, attribute) or opens one; each open incident without an alert in this scan counts a
 * clean scan and closes itself after `autoCloseAfter` of them.
 */
export function planIncidents(
  open: ReadonlyMap<string, OpenIncident>,
  alerts: readonly IncidentAlert[],
  autoCloseAfter: number,
): IncidentDecision[] {
  const decisions: IncidentDecision[] = [];
  const hit = new Set<string>();
  for (const alert of alerts) {
    const key = incidentKey(alert.policy, alert.attribute);
    hit.add(key);
    const incident = open.get(key);
    if (!incident) {
      decisions.push({ kind: "open", alert });
      continue;
    }
    const severity = RANK[alert.priority] > RANK[incident.severity] ? alert.priority : incident.severity;
    decisions.push({ kind: "join", incident, alert, severity });
  }
  for (const [key, incident] of open) {
    if (hit.has(key)) continue;
    const cleanScans = incident.cleanScans + 1;
    decisions.push(
      cleanScans >= autoCloseAfter ? { kind: "auto_close", incident, cleanScans } : { kind: "clean", incident },
    );
  }
  return decisions;
}

/** Why a manual state change cannot be made; the monitor answers with it instead of changing anything. */
export type TransitionRefusal =
  | { ok: false; problem: "not_found"; message: string }
  | { ok: false; problem: "conflict"; message: string };

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
