/**
 * A segment of an asset's rows (the asset option `segments`) as alerts and incidents store it:
 * `alerts.segment` and `incidents.segment` hold its key, and their views show it as an object.
 */

export interface Segment {
  attribute: string;
  value: string;
}

/** The stored key of a segment (alerts.segment, incidents.segment): JSON [attribute, value]; "" for none. */
export function segmentKey(s: Segment | undefined): string {
  return s ? JSON.stringify([s.attribute, s.value]) : "";
}

/** The segment a stored key names, if any. */
export function segmentOf(key: string | null | undefined): Segment | undefined {
  if (!key) return undefined;
  const parsed: unknown = JSON.parse(key);
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  return { attribute: String(parsed[0]), value: String(parsed[1]) };
}
