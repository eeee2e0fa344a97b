/**
 * Segments (the asset option `segments: {attribute: [values]}`): the rows of each listed value of
 * an attribute, and the rest of its rows as the `(other)` segment, profiled apart and judged
 * against their own history. A segment's metrics are kept under its own prefix, its alerts carry
 * `segment: {attribute, value}`, and its incidents are apart from the asset's (segmentKey).
 */
import type { Segment } from "../contracts/segments";
import { escapeName } from "./metrics";
import type { MetricHistory } from "./types";

export { OTHER_SEGMENT } from "../contracts/profile";

/** Segment values an asset may list, over all its attributes (each attribute adds `(other)`). */
export const MAX_SEGMENT_VALUES = 50;

/** The prefix of a segment's metrics in the asset's history: `seg:<attribute>:<value>:`. */
export function segmentPrefix(s: Segment): string {
  return `seg:${escapeName(s.attribute)}:${escapeName(s.value)}:`;
}

/** The part of the history under `prefix`, with the prefix taken off each metric's name. */
export function historyUnder(history: MetricHistory, prefix: string): MetricHistory {
  const out: MetricHistory = {};
  for (const [metric, points] of Object.entries(history)) {
    if (metric.startsWith(prefix)) out[metric.slice(prefix.length)] = points;
  }
  return out;
}
