import { logNetworkFailure } from "../../lib/network-errors";
import { type ListOptions, listMatching } from "./glob";
import { ConnectorError, type ObjectStore, type StoredObject } from "./types";

/**
 * Objects in the service's own R2 bucket (uploaded data). With a prefix, the store sees only
 * the keys below it, and the keys it lists and reads are relative to it: one tenant's store
 * cannot reach another tenant's folder.
 */
export class R2Store implements ObjectStore {
  constructor(
    private readonly bucket: R2Bucket,
    private readonly prefix = "",
    /** Objects per list call; R2's default and maximum is 1000. */
    private readonly pageSize?: number,
  ) {}

  list(pattern: string, options?: ListOptions): Promise<StoredObject[]> {
    return listMatching(
      pattern,
      async (prefix, cursor) => {
        const page = await this.call("the listing", () =>
          this.bucket.list({
            prefix: this.prefix + prefix,
            ...(cursor ? { cursor } : {}),
            ...(this.pageSize ? { limit: this.pageSize } : {}),
          }),
        );
        return {
          objects: page.objects.map((o) => ({
            key: o.key.slice(this.prefix.length),
            size: o.size,
            lastModified: o.uploaded.toISOString(),
          })),
          ...(page.truncated ? { next: page.cursor } : {}),
        };
      },
      options,
    );
  }

  async stream(key: string): Promise<ReadableStream<Uint8Array>> {
    const object = await this.call(`upload '${key}'`, () => this.bucket.get(this.prefix + key));
    if (!object) throw this.missing(key);
    return object.body;
  }

  async readRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    if (length <= 0) return new Uint8Array(0);
    const head = await this.call(`upload '${key}'`, () => this.bucket.head(this.prefix + key));
    if (!head) throw this.missing(key);
    // R2 refuses a range that starts past the end; HTTP stores answer 416, so this matches them.
    if (offset >= head.size) {
      throw new ConnectorError(`upload '${key}': the range starts past the end of the object`, "invalid");
    }
    const object = await this.call(`upload '${key}'`, () =>
      this.bucket.get(this.prefix + key, { range: { offset, length: Math.min(length, head.size - offset) } }),
    );
    if (!object) throw this.missing(key);
    return new Uint8Array(await object.arrayBuffer());
  }

  private missing(key: string): ConnectorError {
    return new ConnectorError(`upload '${key}' not found`, "not_found");
  }

  /** R2 binding failures are the platform's, so they are retried; its own text is logged, not shown. */
  private async call<T>(what: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      logNetworkFailure({ source: "r2", operation: what }, err);
      throw new ConnectorError(`our upload storage (R2) failed on ${what}; it is retried`, "transient");
    }
  }
}
