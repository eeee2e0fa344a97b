import { ConnectorError } from "../connectors/types";
import type { RecordBatch, RecordSource, Row } from "./types";

/** A push parser for a text format: fed decoded text, it buffers the rows it completes. */
export interface TextParser {
  push(text: string): void;
  /** End of input: completes the last record, or throws if the input stopped mid-record. */
  finish(): void;
  /** Completed rows not yet taken. */
  readonly buffered: number;
  /** Hands over the completed rows and starts a new buffer. */
  take(): Row[];
  readonly raggedRows: number;
  readonly droppedFields: number;
}

/** The completed-rows buffer of a text parser: parsers push into `rows`, the reader takes them. */
export abstract class RowBuffer {
  protected rows: Row[] = [];

  /** Completed rows not yet taken. */
  get buffered(): number {
    return this.rows.length;
  }

  /** Hands over the completed rows and starts a new buffer. */
  take(): Row[] {
    const rows = this.rows;
    this.rows = [];
    return rows;
  }
}

/** Longest field/line/element a text parser carries across chunks, in UTF-16 units: bounds memory on a broken file. */
export const MAX_CARRY_CHARS = 16 * 1024 * 1024;

/** Prefix for error messages naming the file. */
export function where(name: string | undefined): string {
  return name ? `${name}: ` : "";
}

/** A ConnectorError for text that is longer than MAX_CARRY_CHARS without a record boundary. */
export function tooLong(name: string | undefined, what: string): ConnectorError {
  return new ConnectorError(
    `${where(name)}${what} is longer than ${MAX_CARRY_CHARS / (1024 * 1024)} Mi characters (wrong format, separator or an unbalanced quote?)`,
    "invalid",
  );
}

/**
 * The source decoded as UTF-8 text, chunk by chunk (a character split across chunks is kept whole),
 * with the byte count read so far. Without a BOM. Stopping early cancels the stream.
 */
export async function* textChunks(source: RecordSource): AsyncGenerator<{ text: string; bytes: number }> {
  const reader = (await source.stream()).getReader();
  // fatal: false: invalid bytes become U+FFFD, which the profiler sees as data, rather than failing the scan.
  const decoder = new TextDecoder("utf-8");
  let bytes = 0;
  let first = true;
  let done = false;
  try {
    for (;;) {
      const read = await reader.read();
      if (read.done) break;
      bytes += read.value.byteLength;
      let text = decoder.decode(read.value, { stream: true });
      if (first && text.length > 0) {
        first = false;
        // TextDecoder drops the BOM already; this is for decoders that do not.
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      if (text.length > 0) yield { text, bytes };
    }
    done = true;
    const tail = decoder.decode();
    if (tail.length > 0) yield { text: tail, bytes };
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Runs a text parser over the source and yields its rows in batches of at most `batchSize`. */
export async function* parseText(
  source: RecordSource,
  parser: TextParser,
  batchSize: number,
): AsyncGenerator<RecordBatch> {
  let bytes = 0;
  const batch = (rows: Row[]): RecordBatch => ({
    rows,
    bytes,
    raggedRows: parser.raggedRows,
    droppedFields: parser.droppedFields,
  });
  // Rows short of a full batch wait for the next chunk, so batches stay full.
  let carry: Row[] = [];
  for await (const chunk of textChunks(source)) {
    bytes = chunk.bytes;
    parser.push(chunk.text);
    if (carry.length + parser.buffered >= batchSize) {
      const rows = carry.length > 0 ? carry.concat(parser.take()) : parser.take();
      let i = 0;
      for (; i + batchSize <= rows.length; i += batchSize) yield batch(rows.slice(i, i + batchSize));
      carry = rows.slice(i);
    }
  }
  parser.finish();
  const rows = carry.concat(parser.take());
  for (let i = 0; i < rows.length; i += batchSize) yield batch(rows.slice(i, i + batchSize));
}
