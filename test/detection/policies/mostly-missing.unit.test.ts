/**
 * A policy is one file: the test-only mostly_missing (./mostly-missing.ts), added to a registry of
 * the prebuilt policies, is evaluated after the policy it reads, takes overrides of its own
 * parameters, weighs in the DQ score and has its row in the docs.
 */
import { describe, expect, it } from "vitest";
import { computeDqScore } from "../../../src/detection/dq-score";
import { evaluate } from "../../../src/detection/evaluate";
import { BUILTIN_POLICIES, POLICIES } from "../../../src/detection/policies";
import { policiesMarkdown } from "../../../src/detection/policy-docs";
import { PolicyRegistry } from "../../../src/detection/registry";
import type { PolicyOverridesById } from "../../../src/detection/types";
import { cleanOrders, ORDERS, orderKinds, ordersScan } from "../fixtures";
import { mostlyMissingPolicy } from "./mostly-missing";

// Listed first: the registry still runs it after completeness, whose alerts it reads.
const registry = new PolicyRegistry([mostlyMissingPolicy, ...BUILTIN_POLICIES]);
const base = cleanOrders(8);

/** Scan 8 of the orders table with `share` of its amounts null, judged by the registry. */
function judge(share: number, overrides: PolicyOverridesById = {}, policies: PolicyRegistry = registry) {
  const scan = ordersScan(8);
  const amount = scan.profile.attributes.find((a) => a.name === "amount")!;
  amount.nulls = Math.round(amount.count * share);
  const input = {
    asset: ORDERS,
    job_id: scan.job_id,
    scan_time: scan.scan_time,
    profile: scan.profile,
    previous_schema: base.previous.profile.schema,
    history: base.history,
    kinds: orderKinds(),
    overrides,
  };
  return { evaluation: evaluate(input, policies), profile: scan.profile, scan_time: scan.scan_time };
}

const keys = (e: ReturnType<typeof judge>) => e.evaluation.alerts.map((a) => `${a.policy}:${a.attribute ?? ""}`);

describe("a test-only policy added by one file", () => {
  it("is evaluated after completeness, whose alerts it reads", () => {
    const order = registry.order.map((p) => p.id);
    expect(order.indexOf("mostly_missing")).toBe(order.indexOf("completeness") + 1);
    expect(keys(judge(0.6))).toEqual(["completeness:amount", "mostly_missing:amount"]);
    expect(judge(0.6).evaluation.alerts[1]).toMatchObject({
      policy_name: "Mostly missing",
      priority: "HIGH",
      dimension: "completeness",
      observed: expect.closeTo(0.6, 2),
      expected: { low: 0, high: 0.5 },
    });
    // Fewer missing values: completeness alone; completeness off: nothing to read.
    expect(keys(judge(0.2))).toEqual(["completeness:amount"]);
    expect(keys(judge(0.6, { completeness: { enabled: false } }))).toEqual([]);
  });

  it("takes overrides of its own parameters, checked by its schema", () => {
    expect(keys(judge(0.2, { mostly_missing: { params: { max_share: 0.1 } } }))).toContain("mostly_missing:amount");
    expect(keys(judge(0.6, { mostly_missing: { enabled: false } }))).toEqual(["completeness:amount"]);
    expect(registry.overridesSchema.safeParse({ mostly_missing: { params: { max_share: 0.1 } } }).success).toBe(true);
    const bad = registry.overridesSchema.safeParse({ mostly_missing: { params: { max_share: 2, min: 1 } } });
    expect(bad.error?.issues.map((i) => i.path.join("."))).toEqual([
      "mostly_missing.params.max_share",
      "mostly_missing.params",
    ]);
    // The prebuilt registry knows nothing of it.
    expect(POLICIES.overridesSchema.safeParse({ mostly_missing: {} }).success).toBe(false);
    expect(keys(judge(0.6, {}, POLICIES))).toEqual(["completeness:amount"]);
  });

  it("weighs in the DQ score of its dimension and has its row in the docs", () => {
    const { evaluation, profile, scan_time } = judge(0.6);
    const weights = { completeness: 1, accuracy: 1, consistency: 1, timeliness: 1 };
    const withIt = computeDqScore(profile, evaluation.alerts, weights, { scan_time }, registry);
    const without = computeDqScore(profile, evaluation.alerts, weights, { scan_time });
    expect(withIt.completeness).toBeCloseTo(without.completeness * 0.7, 0);
    expect(policiesMarkdown(registry)).toContain(
      "| `mostly_missing` | completeness | rule | HIGH | attributes: every kind; each segment too | `completeness` | lowers completeness |",
    );
  });
});
