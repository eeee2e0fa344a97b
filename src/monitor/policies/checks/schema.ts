/** schema_change and freshness: fixed rules that need no baseline. */
import { assetName, type Check, type Finding, fmt, round } from "./common";

export const schemaChange: Check<"schema_change"> = (ctx, p) => {
  const before = ctx.input.previous_schema;
  if (!before) return { findings: [], training: [] };
  const now = new Map(ctx.profile.schema.map((f) => [f.name, f]));
  const was = new Map(before.map((f) => [f.name, f]));
  const findings: Finding[] = [];
  const asset = assetName(ctx);
  for (const f of before) {
    const g = now.get(f.name);
    if (!g && p.removed) {
      findings.push({
        attribute: f.name,
        metric: "schema",
        observed: "removed",
        metric_value: "removed",
        expected: `present (${f.type})`,
        description: `Attribute ${f.name} (${f.type}) was removed from ${asset} since the previous scan.`,
        adaptable: false,
        event: true,
        exclude: [],
      });
    } else if (g && g.type !== f.type && p.type_changed) {
      findings.push({
        attribute: f.name,
        metric: "schema",
        observed: g.type,
        metric_value: `type ${f.type} -> ${g.type}`,
        expected: f.type,
        description: `Attribute ${f.name} of ${asset} changed type from ${f.type} to ${g.type} since the previous scan.`,
        adaptable: false,
        event: true,
        exclude: [],
      });
    }
  }
  for (const g of ctx.profile.schema) {
    if (was.has(g.name) || !p.added) continue;
    findings.push({
      attribute: g.name,
      metric: "schema",
      observed: `added (${g.type})`,
      metric_value: "added",
      expected: "absent",
      description: `Attribute ${g.name} (${g.type}) was added to ${asset} since the previous scan.`,
      adaptable: false,
      event: true,
      exclude: [],
    });
  }
  return { findings, training: [] };
};

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
