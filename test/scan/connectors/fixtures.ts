/**
 * The objects seeded into every object-store server (S3, Azure, GCS, R2), shared by the Node
 * global setup that seeds them and the tests (in workerd) that read them back.
 */

/** Byte i of the large object: cheap to recompute anywhere, and no two nearby ranges alike. */
export const largeByte = (i: number) => (i * 31 + (i >>> 8) * 7 + (i >>> 16)) & 0xff;

export const LARGE_KEY = "big/large.bin";
/** A few MB: more than one network chunk, so streams and ranges cross chunk boundaries. */
export const LARGE_SIZE = 3 * 1024 * 1024 + 123;

export function largeObject(): Uint8Array {
  const bytes = new Uint8Array(LARGE_SIZE);
  for (let i = 0; i < LARGE_SIZE; i++) bytes[i] = largeByte(i);
  return bytes;
}

const csv = (rows: string[][]) => `${rows.map((r) => r.join(",")).join("\n")}\n`;

/** Small text objects under nested prefixes; names with "&", "+", spaces and non-ASCII test encoding. */
export const TEXT_OBJECTS: Record<string, string> = {
  "data/2024/01/orders-a.csv": csv([
    ["id", "amount"],
    ["1", "10.5"],
    ["2", "7"],
  ]),
  "data/2024/01/orders-b.csv": csv([
    ["id", "amount"],
    ["3", "1"],
  ]),
  "data/2024/02/orders-c.csv": csv([
    ["id", "amount"],
    ["4", "99"],
    ["5", "12"],
    ["6", "0"],
  ]),
  "data/2024/summary.csv": csv([
    ["month", "total"],
    ["2024-01", "18.5"],
  ]),
  "data/2025/03/deep/orders-d.csv": csv([
    ["id", "amount"],
    ["7", "3"],
  ]),
  "data/2024/01/readme.txt": "not a csv\n",
  "data/odd names/a&b +c.csv": csv([["x"], ["1"]]),
  "data/odd names/été_<1>.csv": csv([["y"], ["2"]]),
};

/** Enough objects under one prefix for several pages at the small page size the tests use. */
export const PAGED_PREFIX = "paged/";
export const PAGED_COUNT = 23;
export const PAGE_SIZE = 5;
export const pagedKey = (i: number) => `${PAGED_PREFIX}part-${String(i).padStart(3, "0")}.csv`;

/** Every seeded object, keyed by name. */
export function seedObjects(): Map<string, Uint8Array> {
  const enc = new TextEncoder();
  const objects = new Map<string, Uint8Array>();
  for (const [key, text] of Object.entries(TEXT_OBJECTS)) objects.set(key, enc.encode(text));
  for (let i = 0; i < PAGED_COUNT; i++) objects.set(pagedKey(i), enc.encode(`n\n${i}\n`));
  objects.set(LARGE_KEY, largeObject());
  return objects;
}

/** What the tests are given about the servers the global setup started (see object-stores.global.ts). */
export interface ObjectStoreServers {
  s3: { endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  azure: {
    endpoint: string;
    account: string;
    container: string;
    /** Read and list on the container (service SAS). */
    sas: string;
    /** Same fields, signed with another key. */
    forgedSas: string;
    /** Valid signature, expired an hour ago. */
    expiredSas: string;
    /** Read only, without list permission. */
    readOnlySas: string;
    /** Read, add, create, write, delete and list: what a tenant's upload storage needs. */
    writeSas: string;
    /** A container that does not exist, and a valid SAS for it. */
    missingContainer: string;
    missingContainerSas: string;
  };
  gcs: {
    endpoint: string;
    bucket: string;
    /** Granted read on the bucket. */
    reader: GcsTestAccount;
    /** Granted read and write (object create and delete) on the bucket. */
    writer: GcsTestAccount;
    /** A valid account with no access to the bucket. */
    stranger: GcsTestAccount;
    /** The reader's e-mail and key id with a private key Google never saw. */
    forged: GcsTestAccount;
    /** GET → {"count": n}: token exchanges made so far for ?email=. */
    tokenCountUrl: string;
  };
  /** A port on 127.0.0.1 where nothing listens. */
  closedPort: number;
}

export interface GcsTestAccount {
  client_email: string;
  private_key: string;
  private_key_id: string;
  token_uri: string;
}
