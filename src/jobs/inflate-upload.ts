/**
 * Gzip uploads (Content-Encoding: gzip), with the tenant's limit applied to the inflated bytes: a
 * bomb (kilobytes that inflate to gigabytes) is refused as soon as it passes the limit, and
 * nothing of it stays stored.
 *
 * Into our R2 bucket the bytes go inflated. The inflated length is unknown until the end, and R2
 * stores a stream only of known length: so they go up in parts of a multipart upload (R2 wants
 * every part but the last of one size, at least 5 MiB), one part in memory at a time; an upload
 * that fits in one part is one put. Into a tenant's own bucket the body goes as sent (its length
 * is known), while a second reader inflates it only to count; the scan inflates it again.
 */
import { InvalidInputError, LimitExceededError } from "../lib/errors";
import type { WritableObjectStore } from "../scan/connectors";

/** Bytes of each multipart part but the last: at least R2's minimum of 5 MiB, at most this. */
const MIN_PART_BYTES = 8 * 1024 * 1024;
const MAX_PART_BYTES = 32 * 1024 * 1024;
/** R2's most parts in one multipart upload. */
const MAX_PARTS = 10_000;

/** Part size for a limit: small enough to hold in memory, large enough that the limit fits in MAX_PARTS. */
export function partBytes(limit: number): number {
  return Math.min(MAX_PART_BYTES, Math.max(MIN_PART_BYTES, Math.ceil(limit / MAX_PARTS)));
}

/** Collects chunks until a part is full, then hands out parts of exactly `size` bytes. */
class PartBuffer {
  private chunks: Uint8Array[] = [];
  private length = 0;

  constructor(private readonly size: number) {}

  get buffered(): number {
    return this.length;
  }

  push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.length += chunk.byteLength;
  }

  /** The next full part, or with `all` whatever is left (the last part); undefined when there is none. */
  take(all = false): Uint8Array | undefined {
    const size = all ? this.length : this.size;
    if (this.length < size || size === 0) return undefined;
    const part = new Uint8Array(size);
    let filled = 0;
    while (filled < size) {
      const chunk = this.chunks[0]!;
      const n = Math.min(chunk.byteLength, size - filled);
      part.set(chunk.subarray(0, n), filled);
      filled += n;
      if (n === chunk.byteLength) this.chunks.shift();
      else this.chunks[0] = chunk.subarray(n);
    }
    this.length -= size;
    return part;
  }
}

/**
 * The inflated chunks of a gzip body, counted against `limit`. Over the limit: LimitExceededError
 * (413); not gzip, or truncated: InvalidInputError (400). `total()` is the bytes inflated so far.
 */
function inflating(gzip: ReadableStream<Uint8Array>, limit: number) {
  const reader = gzip.pipeThrough(new DecompressionStream("gzip")).getReader();
  let total = 0;
  return {
    total: () => total,
    async next(): Promise<Uint8Array | undefined> {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch {
        throw new InvalidInputError(
          [],
          "The upload is not valid gzip data (Content-Encoding: gzip), or it is truncated",
        );
      }
      if (read.done) {
        if (total === 0) throw new InvalidInputError([], "The upload is empty");
        return undefined;
      }
      total += read.value.byteLength;
      if (total > limit) {
        throw new LimitExceededError(`The upload inflates to more than ${limit} bytes, this tenant's limit`);
      }
      return read.value;
    },
    cancel: () => reader.cancel().catch(() => undefined),
  };
}

/**
 * Inflates a gzip body into `key` of our bucket, counting inflated bytes against `limit`. Returns
 * the inflated size. Over the limit, not gzip, or truncated: the error of `inflating`, and nothing
 * is left in the bucket.
 */
export async function storeInflated(
  bucket: R2Bucket,
  key: string,
  gzip: ReadableStream<Uint8Array>,
  options: { contentType: string; limit: number },
): Promise<number> {
  const input = inflating(gzip, options.limit);
  const parts = new PartBuffer(partBytes(options.limit));
  let multipart: R2MultipartUpload | undefined;
  const uploaded: R2UploadedPart[] = [];
  const sendPart = async (part: Uint8Array) => {
    multipart ??= await bucket.createMultipartUpload(key, { httpMetadata: { contentType: options.contentType } });
    uploaded.push(await multipart.uploadPart(uploaded.length + 1, part));
  };
  try {
    for (let chunk = await input.next(); chunk; chunk = await input.next()) {
      parts.push(chunk);
      for (let part = parts.take(); part; part = parts.take()) {
        if (uploaded.length + 1 >= MAX_PARTS) {
          throw new LimitExceededError(
            `The upload inflates to more than one compressed upload may hold (${input.total()} bytes so far)`,
          );
        }
        await sendPart(part);
      }
    }
    const last = parts.take(true);
    if (multipart) {
      if (last) await sendPart(last);
      await multipart.complete(uploaded);
    } else {
      await bucket.put(key, last!, { httpMetadata: { contentType: options.contentType } });
    }
    return input.total();
  } catch (err) {
    await input.cancel();
    await multipart?.abort().catch(() => undefined);
    throw err;
  }
}

/**
 * Stores a gzip body of `bytes` bytes as it is at `key` of a tenant's bucket, while a second
 * reader inflates it to hold the tenant's limit against the inflated bytes. Returns the inflated
 * size. Over the limit, not gzip, or truncated: the put is aborted and the object deleted.
 */
export async function storeCompressed(
  store: WritableObjectStore,
  key: string,
  gzip: ReadableStream<Uint8Array>,
  options: { bytes: number; limit: number },
): Promise<number> {
  const [toStore, toCount] = gzip.tee();
  const abort = new AbortController();
  const input = inflating(toCount, options.limit);
  // A put refused on its own (credentials, bucket) ends the count at once, not after the whole body.
  let refusal: { error: unknown } | undefined;
  const putting = store
    .put(key, toStore, { bytes: options.bytes, contentType: "application/gzip", signal: abort.signal })
    .catch((error: unknown) => {
      if (abort.signal.aborted) return;
      refusal = { error };
      return input.cancel();
    });
  try {
    while (await input.next());
  } catch (err) {
    if (!refusal) abort.abort();
    await putting;
    await store.delete(key).catch(() => undefined);
    throw refusal ? refusal.error : err;
  }
  await putting;
  if (refusal) {
    await store.delete(key).catch(() => undefined);
    throw refusal.error;
  }
  return input.total();
}
