/** Profiles for tests of the policies: a CSV text through the file profiler (an in-memory attribute: attribute-profile.ts). */
import { env } from "cloudflare:workers";
import type { AssetProfile } from "../../src/contracts/profile";
import { R2Store } from "../../src/scan/connectors";
import { profileObjects } from "../../src/scan/files";
import type { ProfileBuilderOptions } from "../../src/scan/profiler/profile-builder";

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
