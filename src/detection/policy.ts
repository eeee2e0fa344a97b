/**
 * What a policy is. Each policy is one file under policies/ that defines one (definePolicy); the
 * registry (registry.ts) derives the rest from the list of them: the ids, the override schema, the
 * order of evaluation, the DQ score's penalties, the segments' overrides and the docs' table.
 */
import type { z } from "zod";
import type { DqDimension } from "../contracts/dimensions";
import type { AttributeKind } from "../db/schema";
import type { CheckContext, CheckResult } from "./checks/common";
import type { PolicyAlert, Priority } from "./types";

/** rule: fires from the first scan; anomaly: compares with the metric's own history. */
export const POLICY_KINDS = ["rule", "anomaly"] as const;

/**
 * What a policy's findings are about: the asset as a whole, its attributes; and "segment" when it
 * judges each segment of the asset (asset option `segments`) apart too.
 */
export const POLICY_SCOPES = ["asset", "attribute", "segment"] as const;
export type PolicyScope = (typeof POLICY_SCOPES)[number];

/**
 * How a policy's alerts weigh in the DQ score of its dimension (dq-score.ts): "penalty", each alert
 * lowers it by its priority's penalty; "measured", the dimension's measured share already counts
 * what the policy finds; `{ measured: metrics }`, alerts on those metrics are measured, the others
 * a penalty.
 */
export type ScoreEffect = "penalty" | "measured" | { measured: readonly string[] };

/** A policy's parameters: a strict object, so an override naming an unknown parameter is refused. */
export type ParamsSchema = z.ZodObject<z.core.$ZodShape, z.core.$strict>;

export interface PolicyDefinition<Id extends string = string, S extends ParamsSchema = ParamsSchema> {
  /** The alert's `type`; a key of the asset's overrides. */
  readonly id: Id;
  readonly name: string;
  /** What it watches, as the API lists it. */
  readonly description: string;
  /** The incident tag of its alerts, and the DQ score dimension they weigh in. */
  readonly dimension: DqDimension;
  /** Its alerts' priority unless the asset overrides it. */
  readonly priority: Priority;
  readonly kind: (typeof POLICY_KINDS)[number];
  /** The kinds of attribute it judges: its check is given only those (ctx.attributes); [] for the asset alone. */
  readonly fits: readonly AttributeKind[];
  readonly scope: readonly PolicyScope[];
  /** Policies whose alerts of the same scan it reads (its check's `earlier`): it is evaluated after them. */
  readonly after: readonly string[];
  readonly params: S;
  readonly defaults: z.output<S>;
  readonly score: ScoreEffect;
  /**
   * The metrics whose history the metrics route draws with this policy's band (its parameters must
   * hold the anomaly detector's: the registry checks it); the others get their kind's default band.
   */
  readonly bands?: (metric: string) => boolean;
  /** How it judges, with its defaults, for docs/policies.md (Markdown, no line breaks). */
  readonly details: string;
  /** Method syntax: a registry lists policies of different parameters side by side. */
  check(ctx: CheckContext, params: z.output<S>, earlier: readonly PolicyAlert[]): CheckResult;
}

/** A policy's definition, typed by its id and its parameters' schema. */
export function definePolicy<const Id extends string, S extends ParamsSchema>(
  definition: PolicyDefinition<Id, S>,
): PolicyDefinition<Id, S> {
  return definition;
}
