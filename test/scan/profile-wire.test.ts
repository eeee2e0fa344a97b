/**
 * The profile's wire text (scan/profile-wire.ts): what the scan pipeline hands the AssetMonitor,
 * top values packed as [values, counts]. Decoded, it is the profile JSON.parse gives of its plain
 * JSON, keys in the same order; the monitor judges it as it judges the profile itself.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import type { AssetProfile } from "../../src/contracts/profile";
import { decodeProfile, encodeProfile } from "../../src/scan/profile-wire";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { csvAsset } from "../support/assets";
import { keptAlerts } from "../support/monitor";

/** A profile with segments, a breakdown, an all-null attribute and values JSON must escape. */
function profileWithEverything(): AssetProfile {
  const builder = new ProfileBuilder({ segments: { country: ["DE", "FR"] }, breakdown: true });
  const odd = ['a "quoted" value', "back\\slash", "ünïcödé ✓", "tab\there", "line\nbreak", "", " "];
  builder.add(
    Array.from({ length: 300 }, (_, i) => ({
      id: String(i),
      country: ["DE", "FR", "US", null][i % 4] ?? null,
      amount: i % 7 === 0 ? `x${i}` : String((i * 37) % 101),
      note: odd[i % odd.length]!,
      nothing: null,
    })),
  );
  return builder.finish();
}

describe("the profile's wire text", () => {
  it("decodes to the profile's plain JSON, segments and key order included, in less text", () => {
    const profile = profileWithEverything();
    expect(profile.segments?.length).toBe(3);
    expect(profile.attributes.find((a) => a.name === "nothing")?.top_values).toEqual([]);
    const plain = JSON.stringify(profile);
    const wire = encodeProfile(profile)!;
    const decoded = decodeProfile(wire);
    expect(JSON.stringify(decoded)).toBe(plain);
    expect(decoded).toStrictEqual(JSON.parse(plain));
    expect(wire.length).toBeLessThan(plain.length * 0.6);
    // The profile itself is left as it was.
    expect(JSON.stringify(profile)).toBe(plain);
  });

  it("is not made for a profile with an attribute that has no list of top values", () => {
    const profile = profileWithEverything();
    const [first, ...rest] = profile.attributes;
    const broken = { ...profile, attributes: [{ ...first!, top_values: undefined as never }, ...rest] };
    expect(encodeProfile(broken)).toBeUndefined();
  });

  it("is judged by the monitor as the profile itself is: the same alerts and DQ score", async () => {
    const profile = profileWithEverything();
    const results = [];
    for (const form of ["profile", "wire"] as const) {
      const { tenant, projectId, connectionId, asset } = await csvAsset();
      const monitored = {
        tenantId: tenant,
        id: asset.id as number,
        name: asset.name as string,
        type: "S3",
        projectId,
        connectionId,
      };
      const scan = {
        asset: monitored,
        jobId: `job_wire_${form}_${asset.id}`,
        createdAt: "2026-11-26T09:00:00.000Z",
        scanTime: "2026-11-26T09:00:01.000Z",
      };
      const stub = assetMonitor(env, tenant, monitored.id);
      const result = await stub.applyScan(
        form === "wire" ? { ...scan, profileWire: encodeProfile(profile)! } : { ...scan, profile },
      );
      const alerts = {
        results: (await keptAlerts<Record<string, string>>(tenant, monitored.id, "job_id = ?", scan.jobId))
          .map(({ type, attribute, segment, priority, details }) => ({ type, attribute, segment, priority, details }))
          .sort((x, y) =>
            `${x.type}\u0000${x.attribute}\u0000${x.segment}` < `${y.type}\u0000${y.attribute}\u0000${y.segment}`
              ? -1
              : 1,
          ),
      };
      // The descriptions name the asset: each form has its own.
      const rows = JSON.parse(JSON.stringify(alerts.results).replaceAll(monitored.name, "<asset>"));
      results.push({ alerts: result.alerts, dqScore: result.dqScore, rows });
    }
    expect(results[0]!.alerts).toBeGreaterThan(0);
    expect(results[1]).toEqual(results[0]);
  });
});
