/**
 * The docs' page of the policies (docs/policies.md), written from a registry: `npm run
 * docs:policies` writes it, and a test fails while the committed page differs from what the
 * registry says.
 */
import { z } from "zod";
import { ATTRIBUTE_KINDS } from "../db/schema";
import type { PolicyDefinition } from "./policy";
import type { PolicyRegistry } from "./registry";

/** A table cell: one line, its pipes escaped. */
const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

function judges(p: PolicyDefinition): string {
  const parts: string[] = [];
  if (p.scope.includes("asset")) parts.push("the asset");
  if (p.scope.includes("attribute")) {
    const every = ATTRIBUTE_KINDS.every((k) => p.fits.includes(k));
    parts.push(`attributes: ${every ? "every kind" : p.fits.join(", ")}`);
  }
  if (p.scope.includes("segment")) parts.push("each segment too");
  return parts.join("; ");
}

function scoreText(p: PolicyDefinition): string {
  if (p.score === "penalty") return `lowers ${p.dimension}`;
  if (p.score === "measured") return `measured in the ${p.dimension} share`;
  const measured = p.score.measured.map((m) => `\`${m}\``).join(", ");
  return `lowers ${p.dimension} (${measured}: measured in its share)`;
}

type JsonSchema = {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  items?: JsonSchema;
};

/** What a parameter may be, in words, from its JSON Schema. */
function allowed(s: JsonSchema): string {
  if (s.enum) return `one of ${s.enum.map((v) => `\`${String(v)}\``).join(", ")}`;
  if (s.type === "boolean") return "true or false";
  if (s.type === "integer" || s.type === "number") {
    const bounds: string[] = [];
    if (s.exclusiveMinimum !== undefined) bounds.push(`> ${s.exclusiveMinimum}`);
    if (s.minimum !== undefined) bounds.push(`≥ ${s.minimum}`);
    if (s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER) bounds.push(`≤ ${s.maximum}`);
    return [s.type, bounds.join(" and ")].filter(Boolean).join(" ");
  }
  if (s.type === "array") {
    const size = [
      s.minItems !== undefined ? `at least ${s.minItems}` : "",
      s.maxItems !== undefined ? `at most ${s.maxItems}` : "",
    ].filter(Boolean);
    return `list of ${s.items ? allowed(s.items) : "values"}${size.length ? ` (${size.join(", ")})` : ""}`;
  }
  if (s.type === "string") return s.minLength ? "text, not empty" : "text";
  return s.type ?? "any";
}

function value(v: unknown): string {
  if (Array.isArray(v)) return v.length ? v.map((x) => `\`${String(x)}\``).join(", ") : "none";
  return `\`${String(v)}\``;
}

function parameters(p: PolicyDefinition): string[] {
  const schema = z.toJSONSchema(p.params) as { properties: Record<string, JsonSchema> };
  const defaults = p.defaults as Record<string, unknown>;
  return [
    `### \`${p.id}\``,
    "",
    cell(p.description),
    "",
    "| parameter | default | allowed |",
    "|---|---|---|",
    ...Object.entries(schema.properties).map(
      ([name, s]) => `| \`${name}\` | ${value(defaults[name])} | ${allowed(s)} |`,
    ),
    "",
  ];
}

/** docs/policies.md as the registry says it. */
export function policiesMarkdown(registry: PolicyRegistry): string {
  const rows = registry.policies.map((p) =>
    [
      `\`${p.id}\``,
      p.dimension,
      p.kind,
      p.priority,
      judges(p),
      p.after.length ? p.after.map((d) => `\`${d}\``).join(", ") : "—",
      scoreText(p),
      cell(p.details),
    ].join(" | "),
  );
  return [
    "# Policies",
    "",
    "<!-- Written by `npm run docs:policies` from src/detection/policies/: edit a policy's file, then run it. -->",
    "",
    "Each policy is one file under `src/detection/policies/`: its id, dimension, kind, default priority, the",
    "attribute kinds it judges, its scope, the policies whose alerts it reads, its parameters with their",
    "defaults, and its check. The registry (`src/detection/registry.ts`) derives from them the policy ids,",
    "the schema of an asset's overrides (`PUT …/assets/{assetId}/policies`), the order of evaluation, the",
    "DQ score's penalties and this page.",
    "",
    "| policy | dimension (incident tag) | kind | priority | judges | runs after | DQ score | how it judges, with its defaults |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r} |`),
    "",
    `Evaluation order (each policy after those whose alerts it reads): ${registry.order.map((p) => `\`${p.id}\``).join(" → ")}.`,
    "",
    "An asset overrides any of a policy's `enabled`, `priority`, `notify` and parameters, e.g.",
    '`{"overrides": {"completeness": {"priority": "HIGH", "params": {"margin": 0.01}}}}`; an unknown policy',
    "or parameter, a value outside what is allowed below, or a `min_history` above the `window`, is a 400.",
    "",
    "## Parameters",
    "",
    ...registry.policies.flatMap(parameters),
  ].join("\n");
}
