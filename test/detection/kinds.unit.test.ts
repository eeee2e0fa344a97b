import { describe, expect, it } from "vitest";
import type { AttributeProfile } from "../../src/contracts/profile";
import { inferKind, resolveKinds } from "../../src/detection/kinds";

/** An attribute profile of 10,000 rows with the given shape. */
function attribute(a: Partial<AttributeProfile> & Pick<AttributeProfile, "name" | "inferred_type">): AttributeProfile {
  return {
    count: 10_000,
    nulls: 0,
    empties: 0,
    distinct: 100,
    distinct_exact: true,
    top_values: [],
    type_counts: {},
    type_mismatches: 0,
    patterns: [],
    ...a,
  };
}

describe("inferKind", () => {
  const asset = { id_attributes: ["trip_id"], timestamp_attribute: "pickup_at" };

  it("tells identifiers, codes, quantities, free text and timestamps apart", () => {
    const cases: Array<[Partial<AttributeProfile> & Pick<AttributeProfile, "name" | "inferred_type">, string]> = [
      [{ name: "trip_id", inferred_type: "integer", distinct: 10_000 }, "identifier"],
      [{ name: "pickup_at", inferred_type: "string" }, "timestamp"],
      [{ name: "dropoff_at", inferred_type: "timestamp", distinct: 9_000 }, "timestamp"],
      // Payment types 1..6: integers, but a code; so are location ids with a few hundred values.
      [{ name: "payment_type", inferred_type: "integer", distinct: 6, min: 1, max: 6 }, "code"],
      [{ name: "PULocationID", inferred_type: "integer", distinct: 260, min: 1, max: 265 }, "code"],
      [{ name: "customer_id", inferred_type: "string", distinct: 9_990 }, "identifier"],
      [{ name: "fare_amount", inferred_type: "number", distinct: 3_000 }, "quantity"],
      [{ name: "passengers_total", inferred_type: "integer", distinct: 400, min: 0, max: 90_000 }, "quantity"],
      [{ name: "row_number", inferred_type: "integer", distinct: 10_000, min: 1, max: 10_000 }, "identifier"],
      [{ name: "store_and_fwd_flag", inferred_type: "boolean", distinct: 2 }, "code"],
      [{ name: "vendor", inferred_type: "string", distinct: 3, mean_length: 4 }, "code"],
      [
        {
          name: "comment",
          inferred_type: "string",
          distinct: 9_800,
          mean_length: 60,
          patterns: [{ pattern: "Aa a a", share: 1 }],
        },
        "text",
      ],
      [
        {
          name: "email",
          inferred_type: "string",
          distinct: 10_000,
          mean_length: 22,
          patterns: [{ pattern: "a9@a.a", share: 1 }],
        },
        "identifier",
      ],
      [{ name: "status", inferred_type: "string", distinct: 50, mean_length: 7 }, "code"],
      // A cost that is 0 in most rows has few values, but its name says it is an amount.
      [{ name: "cost_total", inferred_type: "integer", distinct: 12, min: 0, max: 90_000 }, "quantity"],
      [{ name: "tip_amount", inferred_type: "number", distinct: 8 }, "quantity"],
      [{ name: "wildlife_size", inferred_type: "string", distinct: 3, mean_length: 6 }, "code"],
      [{ name: "size_code", inferred_type: "integer", distinct: 4 }, "code"],
      // Running times of the first 4 films that have one: 4 values, none repeating, are no categories.
      [
        { name: "running_time_min", inferred_type: "integer", nulls: 9_996, distinct: 4, min: 90, max: 140 },
        "quantity",
      ],
      [{ name: "rating", inferred_type: "integer", nulls: 9_990, distinct: 4, min: 1, max: 4 }, "code"],
    ];
    for (const [a, kind] of cases) expect(inferKind(attribute(a), asset), a.name).toBe(kind);
  });
});

describe("resolveKinds", () => {
  const fare = attribute({ name: "fare", inferred_type: "integer", distinct: 12 });

  it("infers for the first scans, then keeps the settled kind while the type stays", () => {
    let known = resolveKinds([fare], {}, {}, {});
    expect(known.fare).toMatchObject({ kind: "code", source: "inferred", scans: 1 });
    for (let i = 0; i < 3; i++) known = resolveKinds([fare], {}, known, {});
    expect(known.fare!.scans).toBe(4);
    // Settled: more distinct values later do not flip it back and forth.
    const wider = { ...fare, distinct: 400 };
    expect(resolveKinds([wider], {}, known, {}).fare!.kind).toBe("code");
    // A new type is a new attribute as far as kinds go.
    expect(resolveKinds([{ ...wider, inferred_type: "number" }], {}, known, {}).fare).toMatchObject({
      kind: "quantity",
      scans: 1,
    });
  });

  it("keeps the kind through a scan with no value, which would read as an empty string column", () => {
    let known = resolveKinds([fare], {}, {}, {});
    for (let i = 0; i < 3; i++) known = resolveKinds([fare], {}, known, {});
    const empty = { ...fare, inferred_type: "string" as const, nulls: 10_000, distinct: 0 };
    expect(resolveKinds([empty], {}, known, {}).fare).toEqual(known.fare);
  });

  it("a user's kind wins", () => {
    expect(resolveKinds([fare], {}, {}, { fare: "quantity" }).fare).toMatchObject({ kind: "quantity", source: "user" });
  });
});
