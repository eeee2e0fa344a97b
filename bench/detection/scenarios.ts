/**
 * bench/detection: the plan of a run — which assets get which batches. Per table: a few training
 * windows spread over its batches (8 clean batches, then a 9th); one scenario per corruption
 * type × target × fraction, each assigned to a window round-robin, whose asset gets the 8 clean
 * batches and then the corrupted 9th (`reps` > 1: the same scenario in that many windows); one
 * control per window, whose asset gets the clean 9th.
 */
import { CORRUPTION_IDS, corruptionTargets, FRACTIONS, WHOLE_BATCH } from "./corruptions";
import type { Table } from "./data";

/** Clean batches an asset is trained on before the batch under test. */
export const TRAINING_BATCHES = 8;

export interface Window {
  index: number;
  /** Batch indices of the training batches, then the test batch. */
  training: number[];
  test: number;
}

/** A scenario (or a control: type "control", no target): one asset, 9 scans. */
export interface Scenario {
  id: string;
  table: string;
  type: string;
  target: string;
  /** Fraction of the rows corrupted; 0 for a control. */
  fraction: number;
  window: Window;
}

/** `count` windows of TRAINING_BATCHES + 1 consecutive batches, start days spread evenly. */
export function windowsOf(batches: number, count: number): Window[] {
  const span = TRAINING_BATCHES + 1;
  if (batches < span) throw new Error(`${batches} batches: a window needs ${span}`);
  const last = batches - span;
  const starts = [
    ...new Set(Array.from({ length: count }, (_, k) => (count === 1 ? 0 : Math.round((k * last) / (count - 1))))),
  ];
  return starts.map((start, index) => ({
    index,
    training: Array.from({ length: TRAINING_BATCHES }, (_, i) => start + i),
    test: start + TRAINING_BATCHES,
  }));
}

/** The columns a target names ([] for the whole batch). */
export const targetColumns = (target: string) => (target === WHOLE_BATCH || target === "" ? [] : target.split("<>"));

/**
 * The scenarios and controls of a table. A scenario's window is its place in the full plan (every
 * corruption type, every fraction, in that order), whatever `types` and `fractions` select: a run
 * of a subset (--types, split across processes) judges the very scenarios the full run does, so
 * the subsets' recall adds up to the full run's.
 */
export function planTable(
  table: Table,
  windows: Window[],
  types: readonly string[],
  fractions: readonly number[],
  reps = 1,
): { scenarios: Scenario[]; controls: Scenario[] } {
  const scenarios: Scenario[] = [];
  let i = 0;
  for (const { type, target } of corruptionTargets(table, CORRUPTION_IDS)) {
    for (const fraction of FRACTIONS) {
      // Round-robin: consecutive scenarios start in consecutive windows; reps take the next ones.
      const selected = types.includes(type) && fractions.includes(fraction);
      for (let r = 0; selected && r < Math.min(reps, windows.length); r++) {
        const window = windows[(i + r) % windows.length]!;
        const pct = Math.round(fraction * 100);
        scenarios.push({
          id: `${table.name}/${type}/${target}/${pct}%/w${window.index}`,
          table: table.name,
          type,
          target,
          fraction,
          window,
        });
      }
      i++;
    }
  }
  const controls = windows.map((window) => ({
    id: `${table.name}/control/w${window.index}`,
    table: table.name,
    type: "control",
    target: "",
    fraction: 0,
    window,
  }));
  return { scenarios, controls };
}
