/**
 * The DQ dimensions: each policy's alerts are tagged with one (the incident tag), and the DQ score
 * is computed per dimension and weighted over them.
 */
import { InvalidInputError } from "../lib/errors";

export const DQ_DIMENSIONS = ["completeness", "accuracy", "consistency", "timeliness"] as const;
export type DqDimension = (typeof DQ_DIMENSIONS)[number];
export type DqWeights = Record<DqDimension, number>;

/** An asset's DQ score: one per dimension, and the overall one weighted over them. */
export type DqScore = Record<DqDimension, number> & { overall: number };

/** Scales weights to sum 1, so a score stays within 0-100 whatever scale the caller used. */
export function normaliseWeights(weights: DqWeights): DqWeights {
  const sum = DQ_DIMENSIONS.reduce((s, d) => s + weights[d], 0);
  if (!(sum > 0) || !Number.isFinite(sum)) {
    throw new InvalidInputError([], "DQ score weights must be finite and not all zero");
  }
  return Object.fromEntries(DQ_DIMENSIONS.map((d) => [d, weights[d] / sum])) as DqWeights;
}
