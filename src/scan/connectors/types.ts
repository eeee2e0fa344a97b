/** An object (file) in object storage. */
export interface StoredObject {
  key: string;
  size: number;
  /** ISO 8601 UTC, when the store reports it. */
  lastModified?: string;
}

/**
 * Files in object storage (S3, GCS, Azure Blob, R2): the one interface every file connector
 * implements. Bytes are streamed or read by range, never loaded whole.
 */
export interface ObjectStore {
  /** Objects whose keys match a path with `*` / `?` wildcards (or a plain key or prefix). */
  list(pattern: string): Promise<StoredObject[]>;
  /** The object's bytes as a stream. */
  stream(key: string): Promise<ReadableStream<Uint8Array>>;
  /** `length` bytes from `offset` (Parquet footers and column chunks). */
  readRange(key: string, offset: number, length: number): Promise<Uint8Array>;
}

/** A connector error a user can act on; `transient` ones are retried with backoff. */
export class ConnectorError extends Error {
  constructor(
    message: string,
    readonly kind: "auth" | "not_found" | "unreachable" | "invalid" | "unsupported" | "transient",
  ) {
    super(message);
    this.name = "ConnectorError";
  }

  get transient(): boolean {
    return this.kind === "transient" || this.kind === "unreachable";
  }
}
