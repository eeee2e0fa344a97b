/**
 * bench/capacity: the batches a sample asset receives. A clean batch draws every column from the
 * same distributions scan after scan (an id, a category, an amount, counts, a flag), so a scan of
 * it finds nothing new; a broken one is the same batch with its first `broken` measure columns
 * spoiled the way real loads break: the first loses 40 % of its values, the second gets text among
 * its numbers, further ones a tenfold shift.
 */
import { prng } from "../../test/support/random";

const CATEGORIES = ["retail", "online", "wholesale", "partner", "internal"];

/** The header: id, category, then `measures` numeric columns. */
function header(measures: number): string[] {
  return ["id", "category", ...Array.from({ length: measures }, (_, c) => `measure_${c}`)];
}

/** One batch of `rows` rows for `asset`'s `scan`-th upload; `broken` columns spoiled (0: clean). */
export function batchCsv(asset: number, scan: number, measures: number, rows: number, broken = 0): string {
  const r = prng(asset * 1_000_003 + scan * 7919 + 1);
  const lines = [header(measures).join(",")];
  for (let i = 0; i < rows; i++) {
    const values = [String(scan * rows + i), CATEGORIES[Math.floor(r() * r() * CATEGORIES.length)]!];
    for (let c = 0; c < measures; c++) {
      // A column's own level and spread, the same in every batch.
      const level = 100 * (c + 1);
      let value = String(Math.round(level + (r() + r() + r() - 1.5) * level * 0.2));
      if (c < broken) {
        if (c === 0 && r() < 0.4) value = "";
        else if (c === 1 && r() < 0.3) value = `n/a-${i}`;
        else if (c >= 2) value = String(Number(value) * 10);
      }
      values.push(value);
    }
    lines.push(values.join(","));
  }
  return `${lines.join("\n")}\n`;
}
