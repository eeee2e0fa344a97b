/**
 * The batch a customer's upload brings in bench/incidents' live rounds, shared with
 * bench/profile/batches.ts, which profiles the same batches beside DuckDB.
 */

import { prng } from "../../test/support/random";

/**
 * One batch of the live aggregation: an id column and `columns` columns named for the round (so
 * every round's findings are new incidents). The first half have 30 % empty values, the second
 * half 30 % text among numbers: from the first scan, a completeness or a type_mismatch alert per
 * column (above max_rate 5 %; each policy reports at most 20 attributes of a scan one by one).
 */
export function liveCsv(round: number, asset: number, columns: number, rows: number): string {
  const r = prng(round * 100_003 + asset);
  const header = ["id", ...Array.from({ length: columns }, (_, c) => `r${round}_c${c}`)].join(",");
  const lines = [header];
  for (let i = 0; i < rows; i++) {
    const values = [String(i)];
    for (let c = 0; c < columns; c++) {
      const odd = r() < 0.3;
      values.push(odd ? (c < columns / 2 ? "" : `x${i}`) : String(Math.floor(r() * 1000)));
    }
    lines.push(values.join(","));
  }
  return `${lines.join("\n")}\n`;
}
