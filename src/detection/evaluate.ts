/**
 * The entry point the AssetMonitor calls once per scan: every enabled policy over the profile and
 * the asset's metric history. Pure and deterministic: the scan time is an input, nothing is read
 * or written.
 */
import type { TrainingState } from "../contracts/asset-monitor";
import { type CheckContext, type Finding, kindOf } from "./checks/common";
import type { EvaluationInput } from "./input";
import { resolveKinds } from "./kinds";
import { extractMetrics } from "./metrics";
import { POLICIES } from "./policies";
import type { PolicyRegistry, ResolvedPolicy } from "./registry";
import { historyUnder, segmentPrefix } from "./segments";
import { type EvaluatedPoint, type Evaluation, type PolicyAlert, PRIORITIES } from "./types";

/**
 * Attribute findings one policy may raise in one scan; more become one asset-level finding that
 * lists them, so a flood (thousands of new, empty columns) is one incident, not thousands.
 */
export const MAX_FINDINGS_PER_POLICY = 20;

function capped(findings: readonly Finding[], asset: string, policyName: string): readonly Finding[] {
  const attributes = findings.filter((f) => f.attribute !== undefined);
  if (attributes.length <= MAX_FINDINGS_PER_POLICY) return findings;
  const names = attributes.map((f) => f.attribute!);
  const summary: Finding = {
    metric: "attributes",
    observed: names.length,
    metric_value: `${names.length} attributes`,
    expected: `at most ${MAX_FINDINGS_PER_POLICY} attributes alerting separately`,
    description: `${policyName}: ${names.length} attributes of ${asset} at once, more than ${MAX_FINDINGS_PER_POLICY} are reported as one: ${names.slice(0, MAX_FINDINGS_PER_POLICY).join(", ")} and ${names.length - MAX_FINDINGS_PER_POLICY} more. First: ${attributes[0]!.description}`,
    strategy: "summary",
    adaptable: false,
    exclude: attributes.flatMap((f) => f.exclude),
  };
  return [...findings.filter((f) => f.attribute === undefined), summary];
}

/**
 * Alerts of one scan, its metric points (anomalous ones marked excluded), and what is still
 * training. The registry's policies run in its order; each is given the attributes of the kinds
 * it fits and this scan's alerts of the policies it runs after.
 */
export function evaluate(input: EvaluationInput, registry: PolicyRegistry = POLICIES): Evaluation {
  const policies: Readonly<Record<string, ResolvedPolicy>> = registry.resolve(input.overrides);
  const kinds =
    input.kinds ??
    Object.fromEntries(
      Object.entries(resolveKinds(input.profile.attributes, input.asset, {}, {})).map(([name, k]) => [name, k.kind]),
    );
  const metricPoints = extractMetrics(input.profile, input.asset, input.scan_time, kinds);
  const ctx: Omit<CheckContext, "attributes"> = {
    input,
    profile: input.profile,
    history: input.history,
    current: new Map(metricPoints.map((p) => [p.metric, p.value])),
    idAttributes: new Set(input.asset.id_attributes ?? []),
    kinds,
  };
  const alerts: PolicyAlert[] = [];
  const training: TrainingState[] = [];
  const excludedBy = new Map<string, Set<string>>();
  for (const definition of registry.order) {
    const id = definition.id;
    const policy = policies[id]!;
    if (!policy.enabled) continue;
    const attributes = input.profile.attributes.filter((a) => definition.fits.includes(kindOf(ctx, a)));
    const earlier = definition.after.length ? alerts.filter((a) => definition.after.includes(a.policy)) : [];
    const result = definition.check({ ...ctx, attributes }, policy.params, earlier);
    for (const t of result.training) training.push({ policy: id, ...t });
    const seen = new Set<string | undefined>();
    for (const f of capped(result.findings, input.asset.name, policy.name)) {
      if (seen.has(f.attribute)) continue; // one alert per (policy, attribute) per scan
      seen.add(f.attribute);
      const { exclude, metric_value, max_priority, ...rest } = f;
      const kind = f.attribute !== undefined ? kinds[f.attribute] : undefined;
      alerts.push({
        policy: id,
        policy_name: policy.name,
        priority:
          max_priority && PRIORITIES.indexOf(max_priority) < PRIORITIES.indexOf(policy.priority)
            ? max_priority
            : policy.priority,
        dimension: policy.dimension,
        ...rest,
        ...(kind ? { attribute_kind: kind } : {}),
        metric_value: metric_value ?? String(f.observed),
      });
      for (const m of exclude) {
        const by = excludedBy.get(m) ?? new Set<string>();
        by.add(id);
        excludedBy.set(m, by);
      }
    }
  }
  const points: EvaluatedPoint[] = metricPoints.map((p) => {
    const by = excludedBy.get(p.metric);
    return by ? { ...p, excluded: true, excluded_by: [...by] } : { ...p, excluded: false };
  });
  for (const { attribute, value, profile } of input.profile.segments ?? []) {
    const segment = { attribute, value };
    const prefix = segmentPrefix(segment);
    const judged = evaluate(
      {
        ...input,
        profile,
        history: historyUnder(input.history, prefix),
        previous_schema: undefined,
        overrides: registry.segmentOverrides(input.overrides),
        kinds,
        investigate: false,
      },
      registry,
    );
    for (const a of judged.alerts) {
      const description = `In the segment ${attribute} = ${value}: ${a.description}`;
      alerts.push({ ...a, segment, metric: prefix + a.metric, description });
    }
    for (const p of judged.points) points.push({ ...p, metric: prefix + p.metric });
    for (const t of judged.training) training.push({ ...t, metric: prefix + t.metric });
  }
  return { alerts, points, training };
}
