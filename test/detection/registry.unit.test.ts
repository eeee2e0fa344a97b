/**
 * The policy registry (src/detection/registry.ts): what it derives from the list of policies, and
 * the lists it refuses when it is made.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AttributeKind } from "../../src/db/schema";
import { NOTHING } from "../../src/detection/checks/common";
import { computeDqScore } from "../../src/detection/dq-score";
import { evaluate } from "../../src/detection/evaluate";
import { BUILTIN_POLICIES, POLICIES, POLICY_IDS } from "../../src/detection/policies";
import { definePolicy, type PolicyScope } from "../../src/detection/policy";
import { PolicyRegistry } from "../../src/detection/registry";
import type { PolicyAlert } from "../../src/detection/types";
import { ORDERS, orderKinds, ordersScan } from "./fixtures";

/** A policy that finds nothing (or what `check` says), for the registry's own rules. */
function probe(
  id: string,
  opts: {
    after?: string[];
    fits?: AttributeKind[];
    scope?: PolicyScope[];
    check?: Parameters<typeof definePolicy>[0]["check"];
  } = {},
) {
  return definePolicy({
    id,
    name: id,
    description: `the probe ${id}`,
    dimension: "accuracy",
    priority: "LOW",
    kind: "rule",
    fits: opts.fits ?? [],
    scope: opts.scope ?? ["asset"],
    after: opts.after ?? [],
    params: z.strictObject({ limit: z.number().min(0) }),
    defaults: { limit: 1 },
    score: "penalty",
    details: "a probe",
    check: opts.check ?? (() => NOTHING),
  });
}

const ids = (r: PolicyRegistry) => r.order.map((p) => p.id);

describe("the order of evaluation", () => {
  it("puts a policy after those whose alerts it reads, else keeps the listed order", () => {
    expect(ids(new PolicyRegistry([probe("a", { after: ["c"] }), probe("b"), probe("c")]))).toEqual(["b", "c", "a"]);
    expect(
      ids(new PolicyRegistry([probe("a", { after: ["b", "c"] }), probe("c", { after: ["b"] }), probe("b")])),
    ).toEqual(["b", "c", "a"]);
    // The prebuilt policies: cardinality_drift reads uniqueness's alerts, listed first or not.
    const reversed = new PolicyRegistry([...BUILTIN_POLICIES].reverse());
    expect(ids(reversed).indexOf("cardinality_drift")).toBeGreaterThan(ids(reversed).indexOf("uniqueness"));
    expect(ids(POLICIES)).toEqual([...POLICY_IDS]);
  });

  it("refuses a cycle, naming it", () => {
    expect(() => new PolicyRegistry([probe("a", { after: ["b"] }), probe("b", { after: ["a"] }), probe("c")])).toThrow(
      "run after each other in a cycle: a → b → a",
    );
    expect(() => new PolicyRegistry([probe("x"), probe("a", { after: ["a"] })])).toThrow("cycle: a → a");
    // A policy waiting on a cycle is not in it.
    expect(
      () =>
        new PolicyRegistry([probe("d", { after: ["b"] }), probe("b", { after: ["c"] }), probe("c", { after: ["b"] })]),
    ).toThrow("cycle: b → c → b");
  });

  it("refuses a dependency on a policy it does not hold, a policy listed twice, and defaults its schema refuses", () => {
    expect(() => new PolicyRegistry([probe("a", { after: ["nope"] })])).toThrow(
      "Policy a runs after nope, which is not a policy of the registry",
    );
    expect(() => new PolicyRegistry([probe("a"), probe("a")])).toThrow("Policy a is listed twice");
    expect(() => new PolicyRegistry([{ ...probe("a"), defaults: { limit: -1 } }])).toThrow(
      "Policy a: its defaults break its parameters' schema",
    );
    expect(() => new PolicyRegistry([{ ...probe("a"), bands: () => true }])).toThrow(
      "Policy a draws bands, so its parameters must include the anomaly detector's",
    );
  });
});

describe("what a check is given", () => {
  const scan = ordersScan(0);
  const kinds = orderKinds();
  const run = (registry: PolicyRegistry, overrides = {}) =>
    evaluate(
      {
        asset: ORDERS,
        job_id: scan.job_id,
        scan_time: scan.scan_time,
        profile: scan.profile,
        history: {},
        kinds,
        overrides,
      },
      registry,
    );

  it("only the attributes of the kinds it fits, in the profile's order", () => {
    const seen: Record<string, string[]> = {};
    const recording = (id: string, fits: AttributeKind[]) =>
      probe(id, {
        fits,
        check: (ctx) => {
          seen[id] = ctx.attributes.map((a) => a.name);
          return NOTHING;
        },
      });
    run(
      new PolicyRegistry([
        recording("codes", ["code"]),
        recording("all", ["identifier", "code", "quantity", "text", "timestamp"]),
        recording("none", []),
      ]),
    );
    const names = scan.profile.attributes.map((a) => a.name);
    expect(seen.all).toEqual(names);
    expect(seen.none).toEqual([]);
    expect(seen.codes).toEqual(names.filter((n) => kinds[n] === "code"));
    expect(seen.codes!.length).toBeGreaterThan(0);
    expect(seen.codes!.length).toBeLessThan(names.length);
  });

  it("this scan's alerts of the policies it runs after, and no others", () => {
    const alerting = (id: string) =>
      probe(id, {
        check: () => ({
          findings: [{ metric: "row_count", observed: 1, description: id, adaptable: false, exclude: [] }],
          training: [],
        }),
      });
    let earlier: readonly PolicyAlert[] = [];
    const reader = probe("reader", {
      after: ["b"],
      check: (_ctx, _p, alerts) => {
        earlier = alerts;
        return NOTHING;
      },
    });
    const e = run(new PolicyRegistry([reader, alerting("a"), alerting("b")]));
    expect(e.alerts.map((a) => a.policy)).toEqual(["a", "b"]);
    expect(earlier.map((a) => a.policy)).toEqual(["b"]);
  });
});

describe("the settings an asset's overrides give", () => {
  it("a segment is judged by the policies whose scope includes segments only", () => {
    const registry = new PolicyRegistry([
      probe("whole", { scope: ["asset"] }),
      probe("parts", { scope: ["asset", "segment"] }),
    ]);
    const overrides = registry.segmentOverrides({ whole: { priority: "HIGH" } });
    expect(overrides).toEqual({ whole: { priority: "HIGH", enabled: false } });
    expect(POLICIES.segmentOverrides({})).toEqual({
      schema_change: { enabled: false },
      freshness: { enabled: false },
      cardinality_drift: { enabled: false },
    });
  });

  it("the override schema holds each policy's parameters, and nothing else", () => {
    const registry = new PolicyRegistry([probe("a"), probe("b")]);
    expect(registry.overridesSchema.parse({ a: { params: { limit: 3 } }, b: { enabled: false } })).toEqual({
      a: { params: { limit: 3 } },
      b: { enabled: false },
    });
    const bad = registry.overridesSchema.safeParse({ a: { params: { limit: -1, other: 1 } }, c: {} });
    expect(bad.error?.issues.map((i) => i.path.join("."))).toEqual(["a.params.limit", "a.params", ""]);
    expect(registry.resolve({ a: { params: { limit: 3 }, notify: false } }, true)).toEqual({
      a: {
        id: "a",
        name: "a",
        description: "the probe a",
        dimension: "accuracy",
        priority: "LOW",
        kind: "rule",
        params: { limit: 3 },
        enabled: true,
        notify: false,
      },
      b: expect.objectContaining({ id: "b", params: { limit: 1 }, enabled: true, notify: true }),
    });
  });
});

describe("the DQ score's penalties", () => {
  const profile = { row_count: 10, schema: [], attributes: [], sampled: false };
  const weights = { completeness: 1, accuracy: 1, consistency: 1, timeliness: 1 };
  const opts = { scan_time: "2025-01-01T00:00:00Z" };
  const alert = (policy: string, metric = "m"): Pick<PolicyAlert, "policy" | "priority" | "metric"> => ({
    policy,
    metric,
    priority: "HIGH",
  });

  it("follow each policy's score: a penalty, measured in its share, or measured for some metrics", () => {
    expect(POLICIES.penalised(alert("value_range"))).toBe("accuracy");
    expect(POLICIES.penalised(alert("completeness"))).toBeUndefined();
    expect(POLICIES.penalised(alert("uniqueness", "duplicate_count"))).toBeUndefined();
    expect(POLICIES.penalised(alert("uniqueness", "attr:id:unique_ratio"))).toBe("consistency");
    expect(POLICIES.penalised(alert("no_such_policy"))).toBeUndefined();
    // A registry of other policies scores their alerts by their own definitions.
    const registry = new PolicyRegistry([probe("p")]);
    expect(computeDqScore(profile, [alert("p")], weights, opts, registry).accuracy).toBe(70);
    expect(computeDqScore(profile, [alert("p")], weights, opts).accuracy).toBe(100);
  });
});
