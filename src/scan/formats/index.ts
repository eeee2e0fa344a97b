/**
 * Streaming readers for files in object storage: CSV, NDJSON, JSON and Parquet, read in batches of
 * rows so that a scan never holds a whole file (Workers have 128 MB).
 */

import type { SchemaField } from "../../contracts/profile";
import { ConnectorError } from "../connectors/types";
import { CsvParser } from "./csv";
import { SchemaSampler, textType } from "./infer";
import { JsonParser } from "./json";
import { NdjsonParser } from "./ndjson";
import { parquetSchemaFields, readParquet, readParquetColumns } from "./parquet";
import { parseText, type TextParser, textChunks } from "./text";
import {
  batchRowsFor,
  type ColumnRecordBatch,
  DEFAULT_BATCH_SIZE,
  DEFAULT_SAMPLE_SIZE,
  FILE_FORMATS,
  type FileFormat,
  type ReadOptions,
  type RecordBatch,
  type RecordSource,
  type SchemaOptions,
} from "./types";

export { AttributeNames, MAX_ATTRIBUTES, MAX_RECORD_DEPTH, MAX_VALUE_CHARS } from "./limits";
export { bytesSource, objectSource } from "./source";
export type {
  ColumnRecordBatch,
  FileFormat,
  ReadOptions,
  RecordBatch,
  RecordSource,
  Row,
  SchemaOptions,
} from "./types";
export { FILE_FORMATS } from "./types";

function textParser(source: RecordSource, format: Exclude<FileFormat, "parquet">, options: ReadOptions): TextParser {
  const common = { columns: options.columns, name: source.name, attributes: options.attributes };
  switch (format) {
    case "csv":
      return new CsvParser({ ...common, separator: options.separator });
    case "ndjson":
      return new NdjsonParser(common);
    case "json":
      return new JsonParser(common);
  }
}

function checkFormat(format: string): asserts format is FileFormat {
  if (!(FILE_FORMATS as readonly string[]).includes(format)) {
    throw new ConnectorError(
      `unsupported file format ${JSON.stringify(format)} (one of ${FILE_FORMATS.join(", ")})`,
      "unsupported",
    );
  }
}

/**
 * The rows of one file, streamed in batches of at most `options.batchSize` (default 1,000).
 * Every error (bad options, bad file, source failure) surfaces from the iteration, as a ConnectorError.
 * So does a record past a limit of src/scan/formats/limits.ts: a value longer than MAX_VALUE_CHARS,
 * JSON nested deeper than MAX_RECORD_DEPTH, more attributes than `options.attributes` allow.
 */
export async function* readRecords(
  source: RecordSource,
  format: FileFormat,
  options: ReadOptions = {},
): AsyncGenerator<RecordBatch> {
  checkFormat(format);
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE));
  if (format === "parquet") yield* readParquet(source, { ...options, batchSize });
  else yield* parseText(source, textParser(source, format, options), batchSize);
}

/** The formats readColumns reads column-wise. */
export const COLUMNAR_FORMATS: readonly FileFormat[] = ["csv", "parquet"];

/**
 * The rows of one CSV or Parquet file as columns, in batches of about `options.batchSize` rows
 * (CSV: at least that many, up to the records of one more chunk; Parquet: at most that many), with
 * the same values, errors and limits as readRecords, except that a Parquet timestamp column holds
 * epoch milliseconds where readRecords has Dates (the batch's `timestamps` flags it). Other formats:
 * use readRecords.
 */
export async function* readColumns(
  source: RecordSource,
  format: FileFormat,
  options: ReadOptions = {},
): AsyncGenerator<ColumnRecordBatch> {
  checkFormat(format);
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE));
  if (format === "parquet") {
    yield* readParquetColumns(source, { ...options, batchSize }, true);
    return;
  }
  if (format !== "csv") throw new ConnectorError(`${format} is not read column-wise`, "unsupported");
  const parser = new CsvParser({
    columns: options.columns,
    name: source.name,
    attributes: options.attributes,
    separator: options.separator,
    columnar: true,
  });
  const batch = (bytes: number): ColumnRecordBatch => ({
    ...parser.takeColumns(),
    bytes,
    raggedRows: parser.raggedRows,
    droppedFields: parser.droppedFields,
  });
  let bytes = 0;
  for await (const chunk of textChunks(source)) {
    bytes = chunk.bytes;
    parser.push(chunk.text);
    if (parser.buffered >= batchRowsFor(batchSize, parser.header?.length ?? 1)) yield batch(bytes);
  }
  parser.finish();
  if (parser.buffered > 0) yield batch(bytes);
}

/**
 * The attributes of one file: Parquet from its footer (declared types and nullability); text formats
 * from the header (CSV) and the first `sampleSize` records, with types inferred and nullable true.
 */
export async function readSchema(
  source: RecordSource,
  format: FileFormat,
  options: SchemaOptions = {},
): Promise<SchemaField[]> {
  checkFormat(format);
  if (format === "parquet") return parquetSchemaFields(source, options);
  const sampleSize = options.sampleSize ?? DEFAULT_SAMPLE_SIZE;
  const parser = textParser(source, format, options);
  const sampler =
    format === "csv"
      ? new SchemaSampler(options.columns ?? [], (value) => textType(value as string))
      : new SchemaSampler(options.columns ?? []);
  let seen = 0;
  // Leaving the loop early cancels the stream: only the sample is read.
  for await (const batch of parseText(source, parser, Math.min(sampleSize, DEFAULT_BATCH_SIZE) || 1)) {
    for (const row of batch.rows) {
      if (seen >= sampleSize) break;
      sampler.add(row);
      seen++;
    }
    if (seen >= sampleSize) break;
  }
  if (parser instanceof CsvParser && !options.columns) {
    // The header names every attribute, even one with no values in the sample (or a file without rows).
    const named = new SchemaSampler(parser.header ?? [], () => "string");
    const inferred = new Map(sampler.fields().map((field) => [field.name, field]));
    return named.fields().map((field) => inferred.get(field.name) ?? field);
  }
  return sampler.fields();
}
