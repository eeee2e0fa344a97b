/**
 * bench/detection: the triage replay. A user who works the alerts: after each scan of the history
 * asset, every open incident is closed with the reason a person would choose from its last alert
 * (triageReason), through the public API. Then: how many alerts the same history raises with and
 * without triage, and how many alerts repeat a condition the user had closed.
 *
 * A repeat is an alert of a closed condition (policy, attribute, segment, direction of its
 * deviation) that does not go clearly further than the alert that was closed: less than two units
 * of that alert's deviation beyond its observed value (the unit read off its observed value,
 * deviation and band; without them, two units of `details.deviation`), and no higher priority.
 * Judged here from the alerts' own numbers, not from what the service says of them.
 */
import type { Alert, DqService } from "./service";

/** A close the replay made: the condition, and the alert it answered. */
export interface TriageClose {
  /** Index of the batch after whose scan the close was made. */
  after: number;
  incident: number;
  key: string;
  reason: string;
  alert: Alert;
}

const band = (x: unknown): { low: number; high: number } | undefined => {
  const b = x as { low?: unknown; high?: unknown } | undefined;
  return typeof b?.low === "number" && typeof b.high === "number" ? { low: b.low, high: b.high } : undefined;
};
const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : undefined);

/**
 * The reason a person closes an incident with, from its last alert: NO_ACTION_NEEDED for what may
 * be one record (a value below zero, a LOW observation); EXPECTED for a real change of the data's
 * level (rows, missing values, a mean or median, the schema, freshness, duplicates); FALSE_POSITIVE
 * for the rest on this clean history (shapes of distributions, tails, patterns, cardinalities).
 */
export function triageReason(alert: Alert): "EXPECTED" | "FALSE_POSITIVE" | "NO_ACTION_NEEDED" {
  if (alert.details.strategy === "sign" || /may be one record/.test(alert.description)) return "NO_ACTION_NEEDED";
  const level = ["row_count_anomaly", "completeness", "schema_change", "freshness", "uniqueness"];
  if (level.includes(alert.type)) return "EXPECTED";
  if (alert.type === "value_range" && /:(mean|p50)$/.test(alert.metric)) return "EXPECTED";
  return "FALSE_POSITIVE";
}

const segmentText = (s: unknown) => (s ? JSON.stringify(s) : "");
const direction = (a: Alert) => Math.sign(num(a.details.deviation) ?? 0);
/** The condition of an alert: policy, attribute, segment, direction. */
export const conditionOf = (a: Alert) =>
  `${a.type}|${a.attribute ?? ""}|${segmentText(a.details.segment)}|${direction(a)}`;
const incidentKeyOf = (type: string, attribute: string | null, segment: unknown) =>
  `${type}|${attribute ?? ""}|${segmentText(segment)}`;

/** Closes every open incident of the project with the reason its last alert calls for. */
export async function triage(
  service: DqService,
  projectId: number,
  after: number,
  lastAlert: ReadonlyMap<string, Alert>,
): Promise<TriageClose[]> {
  const closes: TriageClose[] = [];
  for (const i of await service.incidents(projectId)) {
    if (i.state !== "OPEN") continue;
    const alert = lastAlert.get(incidentKeyOf(i.alert_policy_id, i.attribute, i.segment));
    if (!alert) continue;
    const reason = triageReason(alert);
    await service.closeIncident(i.id, reason, "bench triage replay");
    closes.push({ after, incident: i.id, key: conditionOf(alert), reason, alert });
  }
  return closes;
}

/** The key of an alert's incident (policy, attribute, segment), as triage() matches them. */
export const alertIncidentKey = (a: Alert) => incidentKeyOf(a.type, a.attribute, a.details.segment);

const RANK: Record<string, number> = { LOW: 1, MEDIUM: 2, HIGH: 3 };

/** Whether `a` goes clearly further than the closed alert `c` (see the file's comment). */
export function clearlyFurther(c: Alert, a: Alert): boolean {
  if ((RANK[a.priority] ?? 0) > (RANK[c.priority] ?? 0)) return true;
  const b = band(c.details.expected);
  const was = num(c.details.observed);
  const now = num(a.details.observed);
  const d0 = num(c.details.deviation);
  if (b && was !== undefined && now !== undefined && d0 !== undefined && Math.abs(d0) > 1) {
    // The closed alert's unit: its deviation grows by one per unit beyond the band edge it crossed.
    const unit = (was - (d0 > 0 ? b.high : b.low)) / (d0 - Math.sign(d0));
    if (Number.isFinite(unit) && unit > 0) return (Math.sign(d0) * (now - was)) / unit >= 2;
  }
  if (b && was !== undefined && now !== undefined && band(a.details.expected)) {
    const centre = (b.low + b.high) / 2;
    const half = (b.high - b.low) / 2;
    if (half > 0) {
      const dw = (was - centre) / half;
      const dn = (now - centre) / half;
      return Math.sign(dw) === Math.sign(dn) && Math.abs(dn) - Math.abs(dw) >= 2;
    }
  }
  const dw = num(c.details.deviation);
  const dn = num(a.details.deviation);
  return dw !== undefined && dn !== undefined && Math.abs(dn) - Math.abs(dw) >= 2;
}

/** The alerts of batch `index` on, that repeat a condition closed before that batch. */
export function repeatsOf(batches: ReadonlyArray<{ alerts: readonly Alert[] }>, closes: readonly TriageClose[]) {
  const repeats: Array<{ batch: number; alert: Alert; close: TriageClose }> = [];
  batches.forEach((b, index) => {
    const open = new Map<string, TriageClose>();
    for (const c of closes) if (c.after < index) open.set(c.key, c);
    for (const a of b.alerts) {
      const c = open.get(conditionOf(a));
      if (c && !clearlyFurther(c.alert, a)) repeats.push({ batch: index, alert: a, close: c });
    }
  });
  return repeats;
}
