/** schema_change: attributes added, removed or retyped since the previous scan; a fixed rule, no baseline. */
import { z } from "zod";
import { UNKNOWN_TYPE } from "../../contracts/profile";
import { ATTRIBUTE_KINDS } from "../../db/schema";
import { assetName, type Check, type Finding, NOTHING } from "../checks/common";
import { seenSchema } from "../checks/schema";
import { definePolicy } from "../policy";
import type { SchemaChange } from "../types";

const params = z.strictObject({ added: z.boolean(), removed: z.boolean(), type_changed: z.boolean() });
type Params = z.output<typeof params>;

const typeText = (type: string) => (type === UNKNOWN_TYPE ? "no values yet" : type);

/**
 * One finding per scan, however many attributes changed: it names the attribute when one changed,
 * else it is asset-level and lists them (`values`), so a flood of new columns is one incident.
 * An attribute's first typed values are not a change of type: it had none (UNKNOWN_TYPE).
 */
const schemaChange: Check<Params> = (ctx, p) => {
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

export const schemaChangePolicy = definePolicy({
  id: "schema_change",
  name: "Schema change",
  description: "An attribute was added, removed or changed type since the previous scan.",
  dimension: "consistency",
  priority: "HIGH",
  kind: "rule",
  fits: ATTRIBUTE_KINDS,
  // A segment has the asset's schema.
  scope: ["asset", "attribute"],
  after: [],
  params,
  defaults: { added: true, removed: true, type_changed: true },
  score: "penalty",
  details:
    "attributes added, removed or retyped since the previous scan: one alert per scan (naming the attribute when one changed, else listing them in `schema_changes`). An attribute with no value yet (every value null or empty, no declared type) has type `unknown` (its `type` with `with_attributes=true`): its first values are no change of type, and a scan without a value keeps the type it last had, so integer → empty → string still alerts",
  check: schemaChange,
});
