/**
 * The prebuilt policies, one file each, and what the registry derives from them. Listed in the
 * order the API lists them, the docs table shows them and a scan's alerts come out (evaluation
 * follows this order where `after` does not say otherwise).
 */
import { type OverridesOf, PolicyRegistry, type ResolvedOf } from "../registry";
import { cardinalityDriftPolicy } from "./cardinality-drift";
import { completenessPolicy } from "./completeness";
import { distributionDriftPolicy } from "./distribution-drift";
import { freshnessPolicy } from "./freshness";
import { patternDriftPolicy } from "./pattern-drift";
import { rowCountAnomalyPolicy } from "./row-count-anomaly";
import { schemaChangePolicy } from "./schema-change";
import { typeMismatchPolicy } from "./type-mismatch";
import { uniquenessPolicy } from "./uniqueness";
import { valueRangePolicy } from "./value-range";

export { notifies } from "../registry";
export { VALUE_RANGE_STATS } from "./value-range";

export const BUILTIN_POLICIES = [
  schemaChangePolicy,
  freshnessPolicy,
  rowCountAnomalyPolicy,
  completenessPolicy,
  typeMismatchPolicy,
  uniquenessPolicy,
  valueRangePolicy,
  distributionDriftPolicy,
  patternDriftPolicy,
  cardinalityDriftPolicy,
] as const;

/** The registry every asset is judged by. */
export const POLICIES = new PolicyRegistry(BUILTIN_POLICIES);

export type PolicyId = (typeof BUILTIN_POLICIES)[number]["id"];
export const POLICY_IDS = POLICIES.ids;

/** Per-asset overrides: per policy id, any of enabled, priority, notify and a subset of its params. */
export const PolicyOverridesSchema = POLICIES.overridesSchema;
export type PolicyOverrides = OverridesOf<typeof BUILTIN_POLICIES>;

type Builtin = (typeof BUILTIN_POLICIES)[number];
export type PolicyParams<P extends PolicyId> = Extract<Builtin, { id: P }>["defaults"];

/** What a policy is before an asset's overrides: the settings the API lists for it. */
export type PolicyDefaults<P extends PolicyId> = Omit<ResolvedOf<typeof BUILTIN_POLICIES>[P], "enabled" | "notify">;

/** Each prebuilt policy's settings before any override. */
export const POLICY_DEFAULTS = Object.fromEntries(
  POLICIES.policies.map((p) => [
    p.id,
    {
      id: p.id,
      name: p.name,
      description: p.description,
      dimension: p.dimension,
      priority: p.priority,
      kind: p.kind,
      params: p.defaults,
    },
  ]),
) as { [P in PolicyId]: PolicyDefaults<P> };

/** The effective settings of every policy: defaults, then the asset's overrides. */
export function resolvePolicies(
  overrides: PolicyOverrides = {},
  assetNotify?: boolean | null,
): ResolvedOf<typeof BUILTIN_POLICIES> {
  return POLICIES.resolve(overrides, assetNotify);
}
