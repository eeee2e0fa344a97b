/** docs/policies.md is written from the registry (npm run docs:policies): it must not fall behind it. */
import { describe, expect, it } from "vitest";
import committed from "../../docs/policies.md?raw";
import { POLICIES } from "../../src/detection/policies";
import { policiesMarkdown } from "../../src/detection/policy-docs";

describe("docs/policies.md", () => {
  it("is what the registry says: after changing a policy, run npm run docs:policies", () => {
    expect(committed, "docs/policies.md is stale: run npm run docs:policies").toBe(policiesMarkdown(POLICIES));
  });

  it("shows each policy's row, its dependencies, the order and every default", () => {
    const page = policiesMarkdown(POLICIES);
    for (const p of POLICIES.policies) {
      expect(page).toContain(`| \`${p.id}\` | ${p.dimension} | ${p.kind} | ${p.priority} |`);
      expect(page).toContain(`### \`${p.id}\``);
      for (const name of Object.keys(p.defaults)) expect(page).toContain(`| \`${name}\` |`);
    }
    expect(page).toContain("| attributes: code, quantity, text | `uniqueness` | lowers consistency |");
    expect(page).toContain("`uniqueness` → `value_range`");
    expect(page).toContain("| `max_age_hours` | `24` | number > 0 and ≤ 100000 |");
    expect(page).toContain("| `strategy` | `robust_z` | one of `robust_z`, `rate_of_change`, `weekly_seasonal` |");
  });
});
