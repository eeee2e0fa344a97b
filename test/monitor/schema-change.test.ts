/**
 * schema_change through the real path (upload → queue → profiler → AssetMonitor): a column with
 * no value yet has no type, so its first values are not a change of type; a real change is.
 */
import { describe, expect, it } from "vitest";
import { type AssetProfile, type AttributeProfile, UNKNOWN_TYPE } from "../../src/contracts/profile";
import { rememberedSchema, seenSchema } from "../../src/detection/checks/schema";
import { admin, call } from "../support/api";
import { csvAsset } from "../support/assets";
import { attributeProfile } from "../support/attribute-profile";
import { scanJob, uploadCsv } from "../support/scans";

/** 300 storm observations; `diameter` holds what `diameterOf(i)` gives ("" = empty field). */
function observations(seq: number, diameterOf: (i: number) => string): string {
  const lines = ["id,status,wind,diameter"];
  for (let i = 0; i < 300; i++) {
    const status = ["tropical depression", "tropical storm", "hurricane"][i % 3]!;
    lines.push(`${seq * 1000 + i},${status},${25 + ((i * 7) % 90)},${diameterOf(i)}`);
  }
  return `${lines.join("\n")}\n`;
}

const empty = () => "";
const miles = (i: number) => (i % 4 === 0 ? "" : String(40 + ((i * 13) % 200)));

describe("schema_change on a column empty in the first batches", { timeout: 120_000 }, () => {
  it("takes its first integers quietly, and still alerts HIGH on a real change of type", async () => {
    const { tenant, asset } = await csvAsset();
    const alertsOf = async (csv: string) => {
      const jobId = await uploadCsv(tenant, asset.id, csv);
      expect((await scanJob(tenant, asset.id, jobId)).status).toBe("SUCCEEDED");
      const res = await call(
        "POST",
        `/api/backend/${tenant}/configuration/sources/${asset.id}/alerts?job_id=${jobId}`,
        { as: admin },
      );
      expect(res.status).toBe(200);
      return res.body.filter((a: { type: string }) => a.type === "schema_change");
    };
    const diameter = async () => {
      const res = await call(
        "GET",
        `/api/backend/${tenant}/configuration/projects/${asset.project_id}/assets/${asset.id}?with_attributes=true`,
        { as: admin },
      );
      return res.body.attributes.find((a: { name: string }) => a.name === "diameter");
    };

    for (let seq = 1; seq <= 3; seq++) expect(await alertsOf(observations(seq, empty)), `batch ${seq}`).toEqual([]);
    expect(await diameter()).toMatchObject({ type: UNKNOWN_TYPE, stats: { inferred_type: UNKNOWN_TYPE } });

    // Its first values: the column now has a type, which is no change of one.
    expect(await alertsOf(observations(4, miles))).toEqual([]);
    expect(await diameter()).toMatchObject({ type: "integer", stats: { inferred_type: "integer" } });

    // A batch without a value says nothing of the type: neither going empty nor coming back alerts.
    expect(await alertsOf(observations(5, empty))).toEqual([]);
    expect(await alertsOf(observations(6, miles))).toEqual([]);

    // Empty again, then text: against the type it last had, that is a change.
    expect(await alertsOf(observations(7, empty))).toEqual([]);
    const retyped = await alertsOf(observations(8, (i) => (i % 4 === 0 ? "" : `${40 + i} nm`)));
    expect(retyped).toHaveLength(1);
    expect(retyped[0]).toMatchObject({
      attribute: "diameter",
      priority: "HIGH",
      metric_value: "type integer -> string",
    });
    expect(retyped[0].description).toBe(
      `Attribute diameter changed type from integer to string in ${asset.name} since the previous scan.`,
    );
  });
});

describe("seenSchema and rememberedSchema", () => {
  const attribute = (name: string, over: Partial<AttributeProfile>) => attributeProfile(name, { count: 10, ...over });
  const profile = (attributes: AttributeProfile[]): AssetProfile => ({
    row_count: 10,
    schema: attributes.map((a) => ({ name: a.name, type: a.declared_type ?? a.inferred_type, nullable: true })),
    attributes,
    sampled: false,
  });

  it("gives no type to an attribute without a declared type whose values are all null or empty", () => {
    const seen = seenSchema(
      profile([
        attribute("nulls", { nulls: 10 }),
        attribute("blanks", { nulls: 4, empties: 6 }),
        attribute("declared", { nulls: 10, declared_type: "BIGINT", inferred_type: "integer" }),
        attribute("one", { nulls: 9, inferred_type: "integer", type_counts: { integer: 1 } }),
      ]),
    );
    expect(seen.map((f) => [f.name, f.type])).toEqual([
      ["nulls", UNKNOWN_TYPE],
      ["blanks", UNKNOWN_TYPE],
      ["declared", "BIGINT"],
      ["one", "integer"],
    ]);
  });

  it("remembers each attribute's last known type through scans without a value", () => {
    const before = [
      { name: "a", type: "integer", nullable: true },
      { name: "b", type: UNKNOWN_TYPE, nullable: true },
    ];
    const now = [
      { name: "a", type: UNKNOWN_TYPE, nullable: true },
      { name: "b", type: UNKNOWN_TYPE, nullable: true },
      { name: "c", type: UNKNOWN_TYPE, nullable: true },
    ];
    expect(rememberedSchema(before, now).map((f) => f.type)).toEqual(["integer", UNKNOWN_TYPE, UNKNOWN_TYPE]);
    expect(rememberedSchema(undefined, now)).toEqual(now);
  });
});
