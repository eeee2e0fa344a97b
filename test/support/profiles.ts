/** Profiles for tests of the policies: an attribute with no rows, and a CSV text through the file profiler. */
import { env } from "cloudflare:workers";
import { R2Store } from "../../src/scan/connectors";
import { profileObjects } from "../../src/scan/files";
import type { AssetProfile, AttributeProfile } from "../../src/scan/profile";
import type { ProfileBuilderOptions } from "../../src/scan/profiler/profile-builder";

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

/** A CSV text profiled as an upload's scan profiles it: stored in R2, read by the file profiler (breakdown on). */
export async function profileCsv(csv: string, options: Partial<ProfileBuilderOptions> = {}): Promise<AssetProfile> {
  const key = `profiles-test/${crypto.randomUUID()}.csv`;
  await env.UPLOADS.put(key, csv);
  try {
    const object = { key, size: new TextEncoder().encode(csv).byteLength };
    return await profileObjects(new R2Store(env.UPLOADS), [object], {
      format: "csv",
      profile: { breakdown: true, ...options },
    });
  } finally {
    await env.UPLOADS.delete(key);
  }
}
