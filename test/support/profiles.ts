/** Attribute profiles for tests of the policies: an attribute with no rows, and what a test sets. */
import type { AttributeProfile } from "../../src/scan/profile";

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
