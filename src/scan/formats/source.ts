import type { ObjectStore, StoredObject } from "../connectors/types";
import type { RecordSource } from "./types";

/** A RecordSource over one object of an object store. */
export function objectSource(store: ObjectStore, object: StoredObject): RecordSource {
  return {
    name: object.key,
    size: object.size,
    stream: () => store.stream(object.key),
    readRange: (offset, length) => store.readRange(object.key, offset, length),
  };
}

/** A RecordSource over bytes already in memory (small uploads, tests). */
export function bytesSource(bytes: Uint8Array, name?: string, chunkSize = 64 * 1024): RecordSource {
  return {
    name,
    size: bytes.byteLength,
    stream: async () => {
      let offset = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= bytes.byteLength) {
            controller.close();
            return;
          }
          const end = Math.min(offset + chunkSize, bytes.byteLength);
          controller.enqueue(bytes.subarray(offset, end));
          offset = end;
        },
      });
    },
    readRange: async (offset, length) => bytes.subarray(offset, Math.min(offset + length, bytes.byteLength)),
  };
}
