/**
 * bench/detection's plan (issue 41): a run of a subset of the corruption types (--types, the full
 * plan split across processes) judges the very scenarios the full run does, in the same windows,
 * so the subsets' recall adds up to the full run's. Until 2026-11-28 a subset rotated the windows
 * over its own types only: the three subsets of the last wave were another plan (62 / 75 / 80 / 91 /
 * 95 % where the full plan, one process, measured 64 / 77 / 80 / 91 / 96 % on the same code).
 */
import { describe, expect, it } from "vitest";
import { CORRUPTION_IDS, FRACTIONS } from "../../bench/detection/corruptions";
import { planTable, windowsOf } from "../../bench/detection/scenarios";
import { BIRD_COLUMNS, BIRD_SWAPS, FLIGHT_COLUMNS, FLIGHT_SWAPS, type Table } from "../../bench/detection/tables";

const TABLES: Table[] = [
  { name: "flights", columns: FLIGHT_COLUMNS, swapPairs: FLIGHT_SWAPS, batches: [] },
  { name: "birdstrikes", columns: BIRD_COLUMNS, swapPairs: BIRD_SWAPS, batches: [] },
];
const SUBSETS = [
  ["noise", "missing"],
  ["scale_x100", "scale_div100", "swap", "constant"],
  ["number_text", "typo", "mojibake", "share_shift", "duplicates", "truncate"],
];

describe("bench/detection's plan", () => {
  it("the subsets of a split run are the full plan's scenarios, window for window", () => {
    expect(SUBSETS.flat().sort()).toEqual([...CORRUPTION_IDS].sort());
    for (const table of TABLES) {
      const windows = windowsOf(table.name === "flights" ? 181 : 13, 4);
      const ids = (types: readonly string[], fractions: readonly number[] = FRACTIONS) =>
        planTable(table, windows, types, fractions, 2).scenarios.map((s) => s.id);
      const full = ids(CORRUPTION_IDS);
      expect(SUBSETS.flatMap((types) => ids(types)).sort()).toEqual([...full].sort());
      // --quick's fractions too: a part of the full plan.
      expect(full).toEqual(expect.arrayContaining(ids(CORRUPTION_IDS, [0.01, 0.1])));
    }
  });
});
