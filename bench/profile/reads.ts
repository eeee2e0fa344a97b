/**
 * The reads under the profile, for bench/profile's breakdown rows and for bench:profile:cpu --read-only:
 * what readColumns alone costs, and the floor of any profile (read + distinct count).
 */
import { objectSource, readColumns } from "../../src/scan/formats";
import { DistinctCounter } from "../../src/scan/profiler/distinct";
import { HashScratch, hashTexts, hashValue, VALUE_SEED } from "../../src/scan/profiler/hash";
import type { FileKind } from "./duckdb";
import { FileStore } from "./file-store";

/**
 * The same read without the profiler: the columns profileObjects hands the profiler (readColumns,
 * batches of 2,000 rows), decoded and dropped: how much of our time is the format reader.
 */
export async function readOnly(path: string, format: FileKind): Promise<number> {
  const store = new FileStore();
  let rows = 0;
  for await (const batch of readColumns(objectSource(store, await store.object(path)), format, { batchSize: 2000 })) {
    rows += batch.length;
  }
  return rows;
}

/**
 * The floor of any profile: readColumns as readOnly, then each column's non-null values hashed with
 * the profiler's hash (text columns in one hashTexts call; a dictionary-coded column only its
 * dictionary, once a batch) into the profiler's distinct counter, and nothing else. SUMMARIZE
 * reports that count too (approx_unique), so no profile of ours or DuckDB's does less per value.
 * Returns the rows read and the distinct count of the last column (so the work cannot be skipped).
 */
export async function readAndCount(path: string, format: FileKind): Promise<{ rows: number; distinct: number }> {
  const store = new FileStore();
  let rows = 0;
  let counters: DistinctCounter[] = [];
  let hi = new Int32Array(0);
  let lo = new Int32Array(0);
  const hash = new HashScratch();
  const out = hash.out;
  for await (const batch of readColumns(objectSource(store, await store.object(path)), format, { batchSize: 2000 })) {
    const n = batch.length;
    rows += n;
    if (hi.length < n) {
      hi = new Int32Array(n);
      lo = new Int32Array(n);
    }
    if (counters.length === 0) counters = batch.names.map(() => new DistinctCounter());
    batch.columns.forEach((values, c) => {
      const counter = counters[c]!;
      const coded = batch.dictionaries?.[c];
      if (coded) {
        for (const v of Array.from(coded.dictionary)) {
          hashValue(v, VALUE_SEED, hash);
          counter.add(out[0]!, out[1]!);
        }
      } else if (hashTexts(values, n, VALUE_SEED, hi, lo, hash)) {
        for (let i = 0; i < n; i++) if (values[i] != null) counter.add(hi[i]!, lo[i]!);
      } else {
        for (let i = 0; i < n; i++) {
          const v = values[i];
          if (v == null) continue;
          hashValue(v, VALUE_SEED, hash);
          counter.add(out[0]!, out[1]!);
        }
      }
    });
  }
  return { rows, distinct: counters.at(-1)?.estimate() ?? 0 };
}
