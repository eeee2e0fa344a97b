import type { AssetProfile } from "../contracts/profile";
import { ConnectorError, type ObjectStore, type StoredObject } from "./connectors/types";
import {
  AttributeNames,
  COLUMNAR_FORMATS,
  type FileFormat,
  MAX_ATTRIBUTES,
  objectSource,
  type ReadOptions,
  readColumns,
  readRecords,
} from "./formats";
import { type ColumnProjection, projectColumns, projectRows } from "./formats/projection";
import type { RecordSource } from "./formats/types";
import { ProfileBuilder, type ProfileBuilderOptions } from "./profiler/profile-builder";

/** Progress of a scan, reported as it goes. */
export interface ScanProgress {
  rows: number;
  bytes: number;
}

export interface FileScanOptions {
  format: FileFormat;
  separator?: string;
  profile: ProfileBuilderOptions;
  /** attribute → allowed values (asset option `filter`): other rows are left out. */
  filter?: Record<string, Array<string | number | boolean>>;
  /** Only rows whose timestamp attribute is after this instant (delta_only). */
  since?: { attribute: string; after: number };
  onProgress?: (progress: ScanProgress) => Promise<void>;
  /**
   * Per file, which of its columns are read and under which names, and the columns it lacks
   * (an Iceberg table's columns by field id): unset, every file is read as it is.
   */
  projectionOf?: (object: StoredObject, source: RecordSource) => Promise<ColumnProjection>;
}

/**
 * The most rows a scan holds to keep the newest `limit` of them by the timestamp attribute (the
 * Worker's memory budget); with a larger limit, a file scan takes the first `limit` rows in file order.
 */
export const MAX_NEWEST_ROWS = 100_000;

/** A row's time as epoch ms (NaN when it has none): the order `limit` keeps the newest rows by. */
function timeOf(v: unknown): number {
  if (v instanceof Date) return v.getTime();
  if (typeof v === "number") return v;
  if (v === null || v === undefined || v === "") return Number.NaN;
  return Date.parse(String(v));
}

/** The newest `size` rows seen, by a time key: a binary min-heap, so the oldest kept row is dropped first. */
class NewestRows {
  private readonly heap: Array<{ t: number; row: Record<string, unknown> }> = [];
  dropped = 0;

  constructor(private readonly size: number) {}

  add(t: number, row: Record<string, unknown>): void {
    const key = Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
    const heap = this.heap;
    if (heap.length < this.size) {
      heap.push({ t: key, row });
      this.up(heap.length - 1);
      return;
    }
    this.dropped += 1;
    if (key <= heap[0]!.t) return;
    heap[0] = { t: key, row };
    this.down(0);
  }

  /** The kept rows, oldest first. */
  rows(): Record<string, unknown>[] {
    return [...this.heap].sort((a, b) => a.t - b.t).map((e) => e.row);
  }

  private up(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.t <= heap[i]!.t) return;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  private down(i: number): void {
    const heap = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < heap.length && heap[l]!.t < heap[least]!.t) least = l;
      if (r < heap.length && heap[r]!.t < heap[least]!.t) least = r;
      if (least === i) return;
      [heap[least], heap[i]] = [heap[i]!, heap[least]!];
      i = least;
    }
  }
}

function keep(filter: FileScanOptions["filter"], since: FileScanOptions["since"]) {
  const allowed = filter ? Object.entries(filter).map(([k, values]) => [k, new Set(values.map(String))] as const) : [];
  return (row: Record<string, unknown>): boolean => {
    for (const [attribute, values] of allowed) {
      const v = row[attribute];
      if (v === null || v === undefined || !values.has(String(v))) return false;
    }
    if (since) {
      if (!(timeOf(row[since.attribute]) > since.after)) return false;
    }
    return true;
  };
}

/**
 * Profiles the objects of one scan, streamed one after another through their format's reader
 * into one ProfileBuilder: memory holds a batch and the sketches, never a file. Data past a limit
 * of src/scan/formats/limits.ts (more than MAX_ATTRIBUTES attributes over the files, a value longer
 * than MAX_VALUE_CHARS, JSON deeper than MAX_RECORD_DEPTH) fails the scan as invalid input.
 */
export async function profileObjects(
  store: ObjectStore,
  objects: StoredObject[],
  options: FileScanOptions,
): Promise<AssetProfile> {
  if (objects.length === 0) throw new ConnectorError("no file matches the asset's path", "not_found");
  // `limit` with a timestamp attribute keeps the newest rows: every file is read, the newest held.
  const { limit, timestampAttribute } = options.profile;
  const newest =
    limit !== undefined && timestampAttribute !== undefined && limit <= MAX_NEWEST_ROWS
      ? { attribute: timestampAttribute, rows: new NewestRows(limit) }
      : undefined;
  const builder = new ProfileBuilder(newest ? { ...options.profile, limit: undefined } : options.profile);
  const accept = options.filter || options.since ? keep(options.filter, options.since) : undefined;
  // Over all the files: an attribute beyond what an asset's schema holds could not be kept.
  const attributes = new AttributeNames(MAX_ATTRIBUTES);
  let rows = 0;
  let bytesBefore = 0;
  let lastReport = Date.now();
  const readOptions: ReadOptions = {
    ...(options.separator ? { separator: options.separator } : {}),
    batchSize: 2000,
    attributes,
  };
  // Without a row filter, CSV and Parquet go to the profiler as columns: no row objects at all.
  const columnar = !accept && !newest && COLUMNAR_FORMATS.includes(options.format);
  scan: for (const object of objects) {
    let bytes = 0;
    const source = objectSource(store, object);
    const projection = await options.projectionOf?.(object, source);
    const fileOptions = projection ? { ...readOptions, columns: projection.read } : readOptions;
    for await (const read of columnar
      ? readColumns(source, options.format, fileOptions)
      : readRecords(source, options.format, fileOptions)) {
      const batch = !projection
        ? read
        : "columns" in read
          ? projectColumns(read, projection)
          : projectRows(read, projection);
      let batchRows: number;
      if ("columns" in batch) {
        builder.addColumns(batch);
        batchRows = batch.length;
      } else {
        const kept = accept ? batch.rows.filter(accept) : batch.rows;
        if (newest) for (const row of kept) newest.rows.add(timeOf(row[newest.attribute]), row);
        else builder.add(kept);
        batchRows = kept.length;
      }
      rows += batchRows;
      builder.addBytes(batch.bytes - bytes);
      bytes = batch.bytes;
      if (options.onProgress && Date.now() - lastReport > 2000) {
        lastReport = Date.now();
        await options.onProgress({ rows, bytes: bytesBefore + bytes });
      }
      // The limit counts profiled rows (after sampling): stop reading once the builder has them.
      if (builder.done) {
        bytesBefore += bytes;
        break scan;
      }
    }
    bytesBefore += Math.max(bytes, object.size);
  }
  if (newest) {
    builder.add(newest.rows.rows());
    if (newest.rows.dropped > 0) builder.markTruncated();
  }
  await options.onProgress?.({ rows, bytes: bytesBefore });
  return builder.finish();
}
