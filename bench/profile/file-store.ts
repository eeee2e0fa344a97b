/**
 * A local file as the scan pipeline sees an object in object storage: an ObjectStore whose
 * stream() reads the file front to back in fixed chunks and whose readRange() reads byte ranges
 * with positioned reads, so neither format reader ever holds the whole file.
 */
import { open, stat } from "node:fs/promises";
import { basename, resolve } from "node:path";
import type { ObjectStore, StoredObject } from "../../src/scan/connectors/types";

/** Bytes per streamed chunk: about what an HTTP response body from S3 or R2 delivers per read. */
export const STREAM_CHUNK_BYTES = 64 * 1024;

/** An ObjectStore over local files; a key is a file path. */
export class FileStore implements ObjectStore {
  /** Bytes handed out by stream() and readRange() since construction. */
  bytesRead = 0;

  /** The object for one file, as list() would return it. */
  async object(path: string): Promise<StoredObject> {
    const info = await stat(path);
    return { key: resolve(path), size: info.size, lastModified: info.mtime.toISOString() };
  }

  async list(pattern: string): Promise<StoredObject[]> {
    return [await this.object(pattern)];
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    const file = await open(key, "r");
    let position = 0;
    const close = () => file.close().catch(() => undefined);
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        // A fresh buffer per chunk: the consumer may keep a chunk after the next read.
        const chunk = new Uint8Array(STREAM_CHUNK_BYTES);
        const { bytesRead } = await file.read(chunk, 0, chunk.byteLength, position);
        if (bytesRead === 0) {
          await close();
          controller.close();
          return;
        }
        position += bytesRead;
        this.bytesRead += bytesRead;
        controller.enqueue(bytesRead === chunk.byteLength ? chunk : chunk.subarray(0, bytesRead));
      },
      cancel: close,
    });
  }

  async readRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    const file = await open(key, "r");
    try {
      const bytes = new Uint8Array(length);
      let filled = 0;
      while (filled < length) {
        const { bytesRead } = await file.read(bytes, filled, length - filled, offset + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      this.bytesRead += filled;
      return filled === length ? bytes : bytes.subarray(0, filled);
    } finally {
      await file.close();
    }
  }
}

/** A short label for a file in tables. */
export function fileLabel(path: string): string {
  return basename(path);
}
