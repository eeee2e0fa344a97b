/** schema_change and freshness: fixed rules that need no baseline. */
import type { SchemaChange } from "../types";
import { assetName, type Check, type Finding, fmt, NOTHING, round } from "./common";

/**
 * One finding per scan, however many attributes changed: it names the attribute when one changed,
 * else it is asset-level and lists them (`values`), so a flood of new columns is one incident.
 */
export const schemaChange: Check<"schema_change"> = (ctx, p) => {
  const before = ctx.input.previous_schema;
  if (!before) return NOTHING;
  const now = new Map(ctx.profile.schema.map((f) => [f.name, f]));
  const was = new Map(before.map((f) => [f.name, f]));
  const changes: Array<SchemaChange & { text: string; observed: string; expected: string; value: string }> = [];
  for (const f of before) {
    const g = now.get(f.name);
    if (!g && p.removed) {
      changes.push({
        attribute: f.name,
        change: "removed",
        type: f.type,
        text: `${f.name} (${f.type}) was removed`,
        observed: "removed",
        expected: `present (${f.type})`,
        value: "removed",
      });
    } else if (g && g.type !== f.type && p.type_changed) {
      changes.push({
        attribute: f.name,
        change: "retyped",
        type: g.type,
        previous_type: f.type,
        text: `${f.name} changed type from ${f.type} to ${g.type}`,
        observed: g.type,
        expected: f.type,
        value: `type ${f.type} -> ${g.type}`,
      });
    }
  }
  for (const g of ctx.profile.schema) {
    if (was.has(g.name) || !p.added) continue;
    changes.push({
      attribute: g.name,
      change: "added",
      type: g.type,
      text: `${g.name} (${g.type}) was added`,
      observed: `added (${g.type})`,
      expected: "absent",
      value: "added",
    });
  }
  if (changes.length === 0) return NOTHING;
  const asset = assetName(ctx);
  const shown = changes.slice(0, MAX_LISTED).map((c) => c.text);
  const more = changes.length > MAX_LISTED ? ` and ${changes.length - MAX_LISTED} more` : "";
  const one = changes.length === 1 ? changes[0]! : undefined;
  const finding: Finding = one
    ? {
        attribute: one.attribute,
        metric: "schema",
        observed: one.observed,
        metric_value: one.value,
        expected: one.expected,
        description: `Attribute ${one.text} ${one.change === "added" ? "to" : one.change === "removed" ? "from" : "in"} ${asset} since the previous scan.`,
        adaptable: false,
        event: true,
        exclude: [],
      }
    : {
        metric: "schema",
        observed: changes.length,
        metric_value: `${changes.length} attributes changed`,
        expected: "the previous scan's schema",
        description: `${changes.length} attributes of ${asset} changed since the previous scan: ${shown.join("; ")}${more}.`,
        schema_changes: changes.slice(0, MAX_VALUES).map(({ attribute, change, type, previous_type }) => ({
          attribute,
          change,
          type,
          ...(previous_type ? { previous_type } : {}),
        })),
        adaptable: false,
        event: true,
        exclude: [],
      };
  return { findings: [finding], training: [] };
};

/** Attributes a schema change's text lists by name, and its `values` (the alert stays small). */
const MAX_LISTED = 20;
const MAX_VALUES = 200;

export const freshness: Check<"freshness"> = (ctx, p) => {
  const ts = ctx.input.asset.timestamp_attribute;
  if (!ts) return { findings: [], training: [] };
  const newest = ctx.profile.freshness;
  if (!newest) {
    if (ctx.profile.row_count <= 0) return { findings: [], training: [] };
    return {
      findings: [
        {
          attribute: ts,
          metric: "freshness_age_hours",
          observed: "unknown",
          metric_value: "unknown",
          expected: { low: 0, high: p.max_age_hours },
          description: `Timestamp attribute ${ts} of ${assetName(ctx)} has no values, so the data's age is unknown; expected at most ${fmt(p.max_age_hours)} h.`,
          strategy: "threshold",
          adaptable: false,
          event: true,
          exclude: [],
        },
      ],
      training: [],
    };
  }
  const age = ctx.current.get("freshness_age_hours");
  if (age === undefined || !(age > p.max_age_hours)) return { findings: [], training: [] };
  return {
    findings: [
      {
        attribute: ts,
        metric: "freshness_age_hours",
        observed: round(age),
        metric_value: fmt(age),
        expected: { low: 0, high: p.max_age_hours },
        description: `The newest ${ts} in ${assetName(ctx)} is ${newest}, ${fmt(age)} h before the scan at ${ctx.input.scan_time}; expected at most ${fmt(p.max_age_hours)} h.`,
        strategy: "threshold",
        adaptable: false,
        exclude: ["freshness_age_hours"],
      },
    ],
    training: [],
  };
};
