import { describe, expect, it } from "vitest";
import { loadSchema } from "../../../../src/scan/sql";
import { dialectSql } from "../../../../src/scan/sql/dialects";
import { alias, planColumns, renderFor, scalarQuery, sourceOf } from "../../../../src/scan/sql/generator";
import { toNumber } from "../../../../src/scan/sql/profile-table";
import { CATALOG, fakeWarehouseRunners, fixtures } from "./support";

describe("row metrics through every warehouse API", () => {
  it("counts rows, id tuples and distinct whole rows with each dialect's SQL", async () => {
    const all = await fakeWarehouseRunners();
    for (const runner of all) {
      const d = dialectSql(runner.dialect);
      const table = { schema: fixtures().schema, name: "items" };
      const plan = planColumns(await loadSchema(runner, table, CATALOG));
      expect(plan.map((c) => c.kind)).toEqual(["integer", "text", "number", "boolean", "timestamp"]);
      // apple, banana and fig: three distinct rows, two values of `active`.
      const source = sourceOf(d, table, { filter: { name: ["apple", "banana", "fig", "zzz"] } });
      const q = renderFor(d, scalarQuery(d, source, [], { id_attributes: ["active"] }, true, plan));
      const [row] = await runner.query<Record<string, unknown>>(q.sql, q.params);
      const value = (name: string) => toNumber(row?.[name] ?? row?.[name.toUpperCase()]);
      expect([value(alias.rowCount), value(alias.idGroups), value(alias.distinctRows)], runner.dialect).toEqual([
        3, 2, 3,
      ]);
    }
    await Promise.all(all.map((r) => r.close()));
  });
});
