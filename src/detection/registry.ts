/**
 * A registry of policies: from the list of their definitions (policies/index.ts lists the built-in
 * ones), everything that used to list them by hand. The ids; the schema of an asset's overrides;
 * the order of evaluation, each policy after those whose alerts it reads (a topological sort,
 * stable on the listed order); the effective settings of an asset; the overrides a segment is
 * judged with; the DQ score dimension an alert lowers; the policy that draws a metric's band.
 * A list that cannot be ordered (a cycle, an unknown dependency) or whose defaults break their own
 * schema fails when the registry is made, i.e. when the module loads.
 */
import { z } from "zod";
import type { DqDimension } from "../contracts/dimensions";
import { AnomalyParamsSchema } from "./params";
import type { PolicyDefinition } from "./policy";
import { type PolicyAlert, type PolicyOverride, type PolicyOverridesById, PRIORITIES, type Priority } from "./types";

export type ParamsOf<D extends PolicyDefinition> = D["defaults"];

/** Overrides by policy id, typed by a registry's policies. */
export type OverridesOf<P extends readonly PolicyDefinition[]> = {
  [D in P[number] as D["id"]]?: PolicyOverride<ParamsOf<D>>;
};

/** A policy as it applies to an asset: its defaults, then the asset's overrides. */
export interface ResolvedPolicy<D extends PolicyDefinition = PolicyDefinition> {
  id: D["id"];
  name: string;
  description: string;
  dimension: DqDimension;
  priority: Priority;
  kind: PolicyDefinition["kind"];
  params: ParamsOf<D>;
  enabled: boolean;
  /** Its alerts are notified (channels get its incident events). */
  notify: boolean;
}

export type ResolvedOf<P extends readonly PolicyDefinition[]> = {
  [D in P[number] as D["id"]]: ResolvedPolicy<D>;
};

/** An explicit `undefined` in an override means "not set", not "unset the default". */
function definedOnly(params: object | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params ?? {}).filter(([, v]) => v !== undefined));
}

/**
 * Whether a policy's alerts are notified on an asset: not when the asset mutes notifications
 * (`notify: false`), nor when the policy's override does.
 */
export function notifies(
  overrides: PolicyOverridesById,
  assetNotify: boolean | null | undefined,
  policy: string,
): boolean {
  if (assetNotify === false) return false;
  return overrides[policy]?.notify !== false;
}

/** The policies in an order where each comes after those it names in `after`, else as listed. */
function evaluationOrder<D extends PolicyDefinition>(policies: readonly D[]): D[] {
  const byId = new Map(policies.map((p) => [p.id, p]));
  for (const p of policies) {
    for (const dep of p.after) {
      if (!byId.has(dep)) throw new Error(`Policy ${p.id} runs after ${dep}, which is not a policy of the registry`);
    }
  }
  const placed = new Set<string>();
  const order: D[] = [];
  while (order.length < policies.length) {
    const next = policies.find((p) => !placed.has(p.id) && p.after.every((d) => placed.has(d)));
    if (!next) {
      // Each policy left waits for another one left: following them comes round to a cycle.
      const path: string[] = [];
      let id = policies.find((p) => !placed.has(p.id))!.id;
      while (!path.includes(id)) {
        path.push(id);
        id = byId.get(id)!.after.find((d) => !placed.has(d))!;
      }
      const cycle = [...path.slice(path.indexOf(id)), id];
      throw new Error(`Policies cannot be ordered, they run after each other in a cycle: ${cycle.join(" → ")}`);
    }
    placed.add(next.id);
    order.push(next);
  }
  return order;
}

/** The load-time checks of one definition: its defaults are valid parameters, its bands have anomaly parameters. */
function checkDefinition(p: PolicyDefinition): void {
  const defaults = p.params.safeParse(p.defaults);
  if (!defaults.success) {
    throw new Error(`Policy ${p.id}: its defaults break its parameters' schema: ${defaults.error.message}`);
  }
  if (p.bands && !AnomalyParamsSchema.safeParse(p.defaults).success) {
    throw new Error(`Policy ${p.id} draws bands, so its parameters must include the anomaly detector's`);
  }
}

export class PolicyRegistry<const P extends readonly PolicyDefinition[] = readonly PolicyDefinition[]> {
  /** The ids, as listed. */
  readonly ids: readonly P[number]["id"][];
  /** The order of evaluation (and of the alerts of a scan). */
  readonly order: readonly P[number][];
  /** An asset's overrides: per policy id, any of enabled, priority, notify and a subset of its params. */
  readonly overridesSchema: z.ZodType<OverridesOf<P>>;
  private readonly byId: ReadonlyMap<string, P[number]>;

  constructor(readonly policies: P) {
    const byId = new Map<string, P[number]>();
    for (const p of policies) {
      if (byId.has(p.id)) throw new Error(`Policy ${p.id} is listed twice`);
      checkDefinition(p);
      byId.set(p.id, p);
    }
    this.byId = byId;
    this.ids = policies.map((p) => p.id);
    this.order = evaluationOrder(policies);
    this.overridesSchema = this.makeOverridesSchema();
  }

  get(id: string): P[number] | undefined {
    return this.byId.get(id);
  }

  private makeOverridesSchema(): z.ZodType<OverridesOf<P>> {
    const shape = Object.fromEntries(
      this.policies.map((p) => [
        p.id,
        z
          .strictObject({
            enabled: z.boolean().optional(),
            priority: z.enum(PRIORITIES).optional(),
            /** false mutes this policy's notifications on the asset (its alerts say is_notification_enabled: false). */
            notify: z.boolean().optional(),
            params: p.params.partial().optional(),
          })
          .optional(),
      ]),
    );
    const schema = z.strictObject(shape).superRefine((o, ctx) => {
      // A baseline window shorter than the history it waits for could never leave training.
      for (const p of this.policies) {
        const override = o[p.id] as PolicyOverride | undefined;
        const merged = { ...p.defaults, ...definedOnly(override?.params) } as Record<string, unknown>;
        if (typeof merged.window === "number" && typeof merged.min_history === "number") {
          if (merged.min_history > merged.window) {
            ctx.addIssue({
              code: "custom",
              path: [p.id, "params", "min_history"],
              message: `min_history (${merged.min_history}) must not exceed window (${merged.window})`,
            });
          }
        }
      }
    });
    return schema as unknown as z.ZodType<OverridesOf<P>>;
  }

  /** The effective settings of every policy, as listed: defaults, then the asset's overrides. */
  resolve(overrides: PolicyOverridesById = {}, assetNotify?: boolean | null): ResolvedOf<P> {
    const out: Record<string, ResolvedPolicy> = {};
    for (const p of this.policies) {
      const o = overrides[p.id];
      out[p.id] = {
        id: p.id,
        name: p.name,
        description: p.description,
        dimension: p.dimension,
        priority: o?.priority ?? p.priority,
        kind: p.kind,
        params: { ...p.defaults, ...definedOnly(o?.params) },
        enabled: o?.enabled ?? true,
        notify: notifies(overrides, assetNotify, p.id),
      };
    }
    return out as ResolvedOf<P>;
  }

  /** The asset's overrides with the policies that judge the whole asset only switched off, for judging a segment. */
  segmentOverrides(overrides: PolicyOverridesById = {}): PolicyOverridesById {
    const out: Record<string, PolicyOverride | undefined> = { ...overrides };
    for (const p of this.policies) {
      if (!p.scope.includes("segment")) out[p.id] = { ...overrides[p.id], enabled: false };
    }
    return out;
  }

  /** The dimension an alert lowers beyond its measured share, if any (see ScoreEffect). */
  penalised(alert: Pick<PolicyAlert, "policy" | "metric">): DqDimension | undefined {
    const p = this.byId.get(alert.policy);
    if (!p || p.score === "measured") return undefined;
    if (p.score !== "penalty" && p.score.measured.includes(alert.metric)) return undefined;
    return p.dimension;
  }

  /** The policy whose band a metric's history is drawn with (its `bands`), if any. */
  bandsOf(metric: string): P[number] | undefined {
    return this.policies.find((p) => p.bands?.(metric));
  }
}
