/** schema_change and freshness: fixed rules that need no baseline. */
import type { AssetProfile, SchemaField } from "../../scan/profile";
import { hasValues } from "../metrics";
import type { SchemaChange } from "../types";
import { assetName, type Check, type Finding, fmt, NOTHING, round } from "./common";

/**
 * The type of an attribute that has had nothing to type yet: no declared type, and every value
 * null or empty. A file's column that is empty in the first batches is not a string column.
 */
export const UNKNOWN_TYPE = "unknown";

/** The schema as a scan saw it: an attribute without a declared type or a value has no type yet. */
export function seenSchema(profile: Pick<AssetProfile, "schema" | "attributes">): SchemaField[] {
  const untyped = new Set(
    profile.attributes.filter((a) => a.declared_type === undefined && !hasValues(a)).map((a) => a.name),
  );
  if (untyped.size === 0) return profile.schema;
  return profile.schema.map((f) => (untyped.has(f.name) ? { ...f, type: UNKNOWN_TYPE } : f));
}

/**
 * The schema the next scan is compared with: this scan's, where each attribute with no type now
 * keeps the type it last had, so integer → (a batch of nulls) → integer is no change, and
 * integer → (nulls) → string still is.
 */
export function rememberedSchema(previous: readonly SchemaField[] | undefined, seen: SchemaField[]): SchemaField[] {
  const known = new Map((previous ?? []).filter((f) => f.type !== UNKNOWN_TYPE).map((f) => [f.name, f.type]));
  return seen.map((f) => {
    const type = f.type === UNKNOWN_TYPE ? known.get(f.name) : undefined;
    return type ? { ...f, type } : f;
  });
}

const typeText = (type: string) => (type === UNKNOWN_TYPE ? "no values yet" : type);

/**
 * One finding per scan, however many attributes changed: it names the attribute when one changed,
 * else it is asset-level and lists them (`values`), so a flood of new columns is one incident.
 * An attribute's first typed values are not a change of type: it had none (UNKNOWN_TYPE).
 */
export const schemaChange: Check<"schema_change"> = (ctx, p) => {
  const before = ctx.input.previous_schema;
  if (!before) return NOTHING;
  const schema = seenSchema(ctx.profile);
  const now = new Map(schema.map((f) => [f.name, f]));
  const was = new Map(before.map((f) => [f.name, f]));
  const changes: Array<SchemaChange & { text: string; observed: string; expected: string; value: string }> = [];
  for (const f of before) {
    const g = now.get(f.name);
    if (!g && p.removed) {
      changes.push({
        attribute: f.name,
        change: "removed",
        type: f.type,
        text: `${f.name} (${typeText(f.type)}) was removed`,
        observed: "removed",
        expected: `present (${f.type})`,
        value: "removed",
      });
    } else if (g && g.type !== f.type && g.type !== UNKNOWN_TYPE && f.type !== UNKNOWN_TYPE && p.type_changed) {
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
  for (const g of schema) {
    if (was.has(g.name) || !p.added) continue;
    changes.push({
      attribute: g.name,
      change: "added",
      type: g.type,
      text: `${g.name} (${typeText(g.type)}) was added`,
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

/** An age of days or years in those words too: " (16.5 days)", " (45.2 years)"; nothing under two days. */
function inDays(hours: number): string {
  const days = hours / 24;
  if (days < 2) return "";
  return days < 730 ? ` (${days.toFixed(1)} days)` : ` (${(days / 365.25).toFixed(1)} years)`;
}

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
          unit: "hours",
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
        unit: "hours",
        description: `The newest ${ts} in ${assetName(ctx)} is ${newest}, ${fmt(age)} h${inDays(age)} before the scan at ${ctx.input.scan_time}; expected at most ${fmt(p.max_age_hours)} h.`,
        strategy: "threshold",
        adaptable: false,
        exclude: ["freshness_age_hours"],
      },
    ],
    training: [],
  };
};
