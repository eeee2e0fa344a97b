/**
 * Segments (asset option `segments`): each listed value and the rest, profiled apart, judged
 * against their own history, alerting and opening incidents of their own.
 */
import { describe, expect, it } from "vitest";
import { segmentKey, segmentOf } from "../../src/contracts/segments";
import { evaluate } from "../../src/detection";
import { MAX_SEGMENT_VALUES } from "../../src/detection/segments";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { admin, call } from "../support/api";
import { assetsPath, csvAsset } from "../support/assets";
import { prng } from "../support/random";
import { scanJob, uploadCsv } from "../support/scans";

const COUNTRIES = ["FR", "DE", "US", "GB", "ES", "IT"];

/** ~1,200 orders; `missingIn(country, rand)` says which rows lose their e-mail. */
function batch(seed: number, missingIn: (country: string, rand: () => number) => boolean = () => false): string {
  const rand = prng(seed);
  const lines = ["id,email,amount,country"];
  for (let i = 0; i < 1200; i++) {
    const country = COUNTRIES[Math.floor(rand() * COUNTRIES.length)]!;
    const email = missingIn(country, rand) ? "" : `user${seed}-${i}@example.com`;
    lines.push(`${seed * 10_000 + i},${email},${(10 + rand() * 90).toFixed(2)},${country}`);
  }
  return `${lines.join("\n")}\n`;
}

describe("segment profiles", () => {
  it("keep each listed value's rows and the rest as (other), nulls included", () => {
    const builder = new ProfileBuilder({ segments: { country: ["DE", "FR"] }, inferFromText: false });
    builder.add([
      { country: "DE", v: "1" },
      { country: "FR", v: "2" },
      { country: "US", v: "3" },
      { country: null, v: "4" },
      { country: "DE", v: null },
    ]);
    const profile = builder.finish();
    expect(profile.segments?.map((s) => [s.attribute, s.value, s.profile.row_count])).toEqual([
      ["country", "DE", 2],
      ["country", "FR", 1],
      ["country", "(other)", 2],
    ]);
  });

  it("are judged against their own history, under their own metric names", () => {
    const builder = new ProfileBuilder({ segments: { country: ["DE"] }, inferFromText: false });
    builder.add(Array.from({ length: 200 }, (_, i) => ({ country: i % 2 ? "DE" : "FR", v: String(i) })));
    const result = evaluate({
      asset: { id: 1, name: "orders", type: "CSV" },
      job_id: "j1",
      scan_time: "2025-01-01T00:00:00.000Z",
      profile: builder.finish(),
      history: {},
    });
    const metrics = result.points.map((p) => p.metric);
    expect(metrics).toContain("row_count");
    expect(metrics).toContain("seg:country:DE:row_count");
    expect(metrics).toContain("seg:country:(other):attr:v:missing_rate");
    expect(segmentOf(segmentKey({ attribute: "a:b", value: '"x"' }))).toEqual({ attribute: "a:b", value: '"x"' });
  });
});

describe("segments through uploads", { timeout: 120_000 }, () => {
  it("a problem confined to DE alerts for the DE segment only, with an incident of its own", async () => {
    const { tenant, asset } = await csvAsset({}, { options: { segments: { country: ["DE", "FR"] } } });
    for (let i = 1; i <= 4; i++) {
      expect((await scanJob(tenant, asset.id, await uploadCsv(tenant, asset.id, batch(i)))).status).toBe("SUCCEEDED");
    }
    // Half the German orders lose their e-mail; no other country does.
    const broken = batch(5, (country, rand) => country === "DE" && rand() < 0.5);
    const jobId = await uploadCsv(tenant, asset.id, broken);
    expect((await scanJob(tenant, asset.id, jobId)).status).toBe("SUCCEEDED");
    const res = await call("POST", `/api/backend/${tenant}/configuration/sources/${asset.id}/alerts?job_id=${jobId}`, {
      as: admin,
    });
    expect(res.status).toBe(200);
    const bySegment = res.body.filter((a: { segment: unknown }) => a.segment !== null);
    expect(bySegment.map((a: { type: string; attribute: string }) => `${a.type}:${a.attribute}`)).toEqual([
      "completeness:email",
    ]);
    const alert = bySegment[0];
    expect(alert.segment).toEqual({ attribute: "country", value: "DE" });
    expect(alert.details.segment).toEqual({ attribute: "country", value: "DE" });
    expect(alert.metric).toBe("seg:country:DE:attr:email:missing_rate");
    expect(alert.description).toMatch(/^In the segment country = DE: /);
    // The whole asset's alert is apart from it, without a segment.
    const whole = res.body.filter((a: { type: string; segment: unknown }) => a.type === "completeness" && !a.segment);
    expect(whole).toHaveLength(1);

    const list = await call("GET", `/api/backend/${tenant}/incidents`, { as: admin });
    const incidents = list.body.filter((i: { alert_policy_id: string }) => i.alert_policy_id === "completeness");
    expect(incidents.map((i: { segment: unknown }) => i.segment)).toEqual(
      expect.arrayContaining([null, { attribute: "country", value: "DE" }]),
    );
    expect(incidents).toHaveLength(2);
    const de = incidents.find((i: { segment: unknown }) => i.segment !== null);
    const detail = await call("GET", `/api/backend/${tenant}/incidents/${de.id}`, { as: admin });
    expect(detail.body.segment).toEqual({ attribute: "country", value: "DE" });
    const refs = detail.body.history.flatMap((h: { alert_refs: number[] }) => h.alert_refs);
    const alerts = await call("POST", `/api/backend/${tenant}/configuration/alerts/by_filters`, {
      as: admin,
      body: { asset_id: String(asset.id), alert_refs: refs },
    });
    expect(alerts.body.map((a: { segment: unknown }) => a.segment)).toEqual([{ attribute: "country", value: "DE" }]);
  });

  it(`refuses more than ${MAX_SEGMENT_VALUES} segment values, and an attribute with none, with a 400`, async () => {
    const { tenant, projectId, connectionId } = await csvAsset();
    const values = Array.from({ length: MAX_SEGMENT_VALUES + 1 }, (_, i) => `v${i}`);
    for (const segments of [{ country: values }, { country: [] }]) {
      const res = await call("POST", assetsPath(tenant, projectId), {
        as: admin,
        body: {
          name: `seg-${segments.country.length}`,
          type: "S3",
          payload: { path: "in/*.csv", format: "csv" },
          connection_id: connectionId,
          options: { segments },
        },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/segment/);
    }
  });
});
