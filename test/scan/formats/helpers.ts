import type { ColumnRecordBatch, RecordBatch, RecordSource, Row } from "../../../src/scan/formats";

export const encoder = new TextEncoder();

/** A source whose stream yields exactly these chunks (so tests choose every boundary). */
export function chunkSource(chunks: Uint8Array[]): RecordSource {
  const size = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  return {
    name: "test-file",
    size,
    stream: async () => {
      let next = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = chunks[next++];
          if (chunk) controller.enqueue(chunk);
          else controller.close();
        },
      });
    },
    readRange: async () => {
      throw new Error("not used for text formats");
    },
  };
}

/** The bytes split at the given offsets. */
export function splitAt(bytes: Uint8Array, ...offsets: number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const offset of [...offsets, bytes.byteLength]) {
    chunks.push(bytes.subarray(start, offset));
    start = offset;
  }
  return chunks;
}

/** The bytes in chunks of `size`. */
export function splitEvery(bytes: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.byteLength; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

/** Every batch, in order. */
export async function batchesOf(iterable: AsyncIterable<RecordBatch>): Promise<RecordBatch[]> {
  const batches: RecordBatch[] = [];
  for await (const batch of iterable) batches.push(batch);
  return batches;
}

/** Every row, in order. */
export async function rowsOf(iterable: AsyncIterable<RecordBatch>): Promise<Row[]> {
  return (await batchesOf(iterable)).flatMap((batch) => batch.rows);
}

/** Every row of column batches, in order, as row objects. */
export async function rowsOfColumns(iterable: AsyncIterable<ColumnRecordBatch>): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const { names, columns, length, timestamps, dictionaries } of iterable) {
    // A column's dictionary codes, when the batch has them, give its values exactly (-1: null).
    dictionaries?.forEach((coded, k) => {
      if (coded === undefined) return;
      for (let i = 0; i < length; i++) {
        const c = coded.codes[i]!;
        const value = c < 0 ? null : coded.dictionary[c];
        if (!Object.is(value, columns[k]![i])) {
          throw new Error(
            `${names[k]} row ${i}: code ${c} gives ${String(value)}, the column ${String(columns[k]![i])}`,
          );
        }
      }
    });
    // A column flagged as instants holds epoch milliseconds: the rows hold them as Dates.
    const value = (k: number, i: number) => {
      const v = columns[k]![i];
      return timestamps?.[k] === true && typeof v === "number" ? new Date(v) : v;
    };
    for (let i = 0; i < length; i++) rows.push(Object.fromEntries(names.map((name, k) => [name, value(k, i)])));
  }
  return rows;
}

/** The rejection of a promise (fails the test if it resolves). */
export async function failure(promise: Promise<unknown>): Promise<Error & { kind?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { kind?: string };
  }
  throw new Error("expected a failure");
}
