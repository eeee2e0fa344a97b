/** An attribute profile for tests of the policies, built in memory (no binding: both test lanes use it). */
import type { AttributeProfile } from "../../src/contracts/profile";

/** An attribute profile with no rows and no values, overridden by `over`. */
export function attributeProfile(name: string, over: Partial<AttributeProfile> = {}): AttributeProfile {
  return {
    name,
    inferred_type: "string",
    count: 0,
    nulls: 0,
    empties: 0,
    distinct: 0,
    distinct_exact: true,
    top_values: [],
    type_counts: {},
    type_mismatches: 0,
    patterns: [],
    ...over,
  };
}
