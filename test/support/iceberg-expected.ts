/**
 * What a scan of the tables of test/support/iceberg-evolved.ts must find: the rows written there,
 * by column (kept apart from the writer, which loads DuckDB's native binding: workerd cannot).
 */

/** What a scan of each table must find (the rows written, by column). */
export const EVOLVED_EXPECTED = {
  rows: 7,
  /** label (field id 2): A's `name` values and B's `label` values. */
  labels: { a1: 1, a2: 1, a3: 1, b10: 1, b11: 1, b12: 1, b13: 1 },
  /** name (field id 5): B's only; A's old `name` (field id 2) is not it. */
  names: { n10: 1, n11: 1, n12: 1, n13: 1 },
  categories: { alpha: 3, beta: 4 },
  /** score: null in A's 3 rows. */
  scoreNulls: 3,
  flag: { true: 7 },
};
/** The v1 table: 5 rows, `day` from the manifests only, one null amount. */
export const LEGACY_V1_EXPECTED = { rows: 5, days: ["2024-03-18T00:00:00.000Z", "2024-03-19T00:00:00.000Z"] };
