import { ConnectorError, type ObjectStore, type StoredObject } from "./connectors/types";
import { AttributeNames, type FileFormat, MAX_ATTRIBUTES, objectSource, readRecords } from "./formats";
import type { AssetProfile } from "./profile";
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
}

function keep(filter: FileScanOptions["filter"], since: FileScanOptions["since"]) {
  const allowed = filter ? Object.entries(filter).map(([k, values]) => [k, new Set(values.map(String))] as const) : [];
  return (row: Record<string, unknown>): boolean => {
    for (const [attribute, values] of allowed) {
      const v = row[attribute];
      if (v === null || v === undefined || !values.has(String(v))) return false;
    }
    if (since) {
      const v = row[since.attribute];
      const t = v instanceof Date ? v.getTime() : typeof v === "number" ? v : Date.parse(String(v));
      if (!(t > since.after)) return false;
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
  const builder = new ProfileBuilder(options.profile);
  const accept = options.filter || options.since ? keep(options.filter, options.since) : undefined;
  // Over all the files: an attribute beyond what an asset's schema holds could not be kept.
  const attributes = new AttributeNames(MAX_ATTRIBUTES);
  let rows = 0;
  let bytesBefore = 0;
  let lastReport = Date.now();
  scan: for (const object of objects) {
    let bytes = 0;
    for await (const batch of readRecords(objectSource(store, object), options.format, {
      ...(options.separator ? { separator: options.separator } : {}),
      batchSize: 2000,
      attributes,
    })) {
      const batchRows = accept ? batch.rows.filter(accept) : batch.rows;
      builder.add(batchRows);
      rows += batchRows.length;
      builder.addBytes(batch.bytes - bytes);
      bytes = batch.bytes;
      if (options.onProgress && Date.now() - lastReport > 2000) {
        lastReport = Date.now();
        await options.onProgress({ rows, bytes: bytesBefore + bytes });
      }
      // The limit counts profiled rows (after sampling): stop reading once the builder has them.
      if (builder.done) break scan;
    }
    bytesBefore += Math.max(bytes, object.size);
  }
  await options.onProgress?.({ rows, bytes: bytesBefore });
  return builder.finish();
}
