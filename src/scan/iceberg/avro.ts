/**
 * An Avro object container file reader (Avro 1.11 specification, "Object Container Files" and
 * "Binary Encoding"), for Iceberg's manifest lists and manifests. Records are decoded with the
 * writer's schema from the file header. Codecs: null, deflate (raw RFC 1951, Iceberg's default),
 * snappy and zstandard. A long that does not fit a double exactly (snapshot ids) is a bigint.
 *
 * Written here rather than taken from npm: avsc is CommonJS on Node's Buffer and turns such
 * longs into errors; icebird's reader has no map, enum or fixed and pins its own hyparquet.
 */

import { decompress as decompressZstd } from "fzstd";
import { crc32 } from "../../lib/crc32";
import { snappyUncompress } from "../formats/snappy";

/** A decoded Avro value. */
export type AvroValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | AvroValue[]
  | { [key: string]: AvroValue };

export type AvroRecord = { [key: string]: AvroValue };

/** The file is not an Avro container file, or is cut or corrupt. */
export class AvroError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AvroError";
  }
}

const MAGIC = [0x4f, 0x62, 0x6a, 0x01]; // "Obj" 1
/** Items a block may count beyond its bytes (each item of a type encoded in no bytes). */
const MAX_ITEMS_WITHOUT_BYTES = 1_000_000;
const text = new TextDecoder();

class Cursor {
  at = 0;
  readonly view: DataView;

  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  take(n: number): Uint8Array {
    if (!(n >= 0) || this.at + n > this.bytes.byteLength) throw new AvroError("the Avro data ends early");
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  get done(): boolean {
    return this.at >= this.bytes.byteLength;
  }

  get remaining(): number {
    return this.bytes.byteLength - this.at;
  }

  /** A zig-zag varint long: a number when exact, else a bigint. */
  long(): number | bigint {
    let n = 0;
    let scale = 1;
    let bytes = 0;
    for (;;) {
      if (this.at >= this.bytes.byteLength) throw new AvroError("the Avro data ends early");
      const b = this.bytes[this.at++]!;
      bytes++;
      if (bytes > 7) return this.bigLong(n, scale, b);
      n += (b & 0x7f) * scale;
      scale *= 128;
      if ((b & 0x80) === 0) break;
    }
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  /** The rest of a long past 49 bits, in bigint arithmetic. */
  private bigLong(low: number, scale: number, first: number): number | bigint {
    let n = BigInt(low);
    let shift = BigInt(Math.log2(scale));
    let b = first;
    for (let i = 0; ; i++) {
      if (i > 2) throw new AvroError("an Avro long is longer than 10 bytes");
      n |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) break;
      if (this.at >= this.bytes.byteLength) throw new AvroError("the Avro data ends early");
      b = this.bytes[this.at++]!;
    }
    n = BigInt.asUintN(64, n);
    const value = (n >> 1n) ^ -(n & 1n);
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  }

  int(): number {
    const v = this.long();
    if (typeof v !== "number" || v < -2147483648 || v > 2147483647) throw new AvroError("an Avro int is out of range");
    return v;
  }

  /** A count (block or length): a non-negative number. */
  length(): number {
    const v = this.long();
    if (typeof v !== "number" || v < 0) throw new AvroError("an Avro length is negative or too large");
    return v;
  }

  bytesValue(): Uint8Array {
    return this.take(this.length());
  }
}

type Decoder = (c: Cursor) => AvroValue;

/** JSON of an Avro schema (as in the file's avro.schema). */
type SchemaJson = string | SchemaJson[] | { type: SchemaJson; [key: string]: unknown };

/** Builds the decoder of a schema once; named types (record, enum, fixed) may be referenced by name later. */
function compile(schema: SchemaJson, named: Map<string, Decoder>, namespace: string | undefined, depth = 0): Decoder {
  if (depth > 64) throw new AvroError("the Avro schema nests too deeply");
  if (Array.isArray(schema)) {
    const branches = schema.map((s) => compile(s, named, namespace, depth + 1));
    return (c) => {
      const i = c.length();
      const branch = branches[i];
      if (!branch) throw new AvroError(`an Avro union branch (${i}) does not exist`);
      return branch(c);
    };
  }
  if (typeof schema === "string") {
    switch (schema) {
      case "null":
        return () => null;
      case "boolean":
        return (c) => c.take(1)[0] === 1;
      case "int":
        return (c) => c.int();
      case "long":
        return (c) => c.long();
      case "float":
        return (c) => {
          const at = c.take(4).byteOffset - c.bytes.byteOffset;
          return c.view.getFloat32(at, true);
        };
      case "double":
        return (c) => {
          const at = c.take(8).byteOffset - c.bytes.byteOffset;
          return c.view.getFloat64(at, true);
        };
      case "bytes":
        return (c) => c.bytesValue();
      case "string":
        return (c) => text.decode(c.bytesValue());
      default: {
        const full = schema.includes(".") || !namespace ? schema : `${namespace}.${schema}`;
        // A name may refer to a type defined later in the same record (recursion): look it up at decode time.
        return (c) => {
          const decoder = named.get(full) ?? named.get(schema);
          if (!decoder) throw new AvroError(`the Avro schema names an unknown type ${schema}`);
          return decoder(c);
        };
      }
    }
  }
  if (schema === null || typeof schema !== "object" || schema.type === undefined) {
    throw new AvroError("the Avro schema is not valid (a type that is not a name, a union or an object with a type)");
  }
  const type = schema.type;
  if (typeof type !== "string") return compile(type, named, namespace, depth + 1);
  const name = typeof schema.name === "string" ? schema.name : undefined;
  const ns = typeof schema.namespace === "string" ? schema.namespace : namespace;
  const fullName = name && (name.includes(".") || !ns ? name : `${ns}.${name}`);
  const register = (decoder: Decoder) => {
    if (fullName) named.set(fullName, decoder);
    if (name) named.set(name, decoder);
    return decoder;
  };
  switch (type) {
    case "record":
    case "error": {
      const fields: [string, Decoder][] = [];
      const decoder = register((c) => {
        const out: AvroRecord = {};
        for (const [field, decode] of fields) out[field] = decode(c);
        return out;
      });
      const declared = schema.fields ?? [];
      if (!Array.isArray(declared)) throw new AvroError(`the Avro record ${name ?? ""} has fields that are not a list`);
      for (const f of declared as Array<{ name: string; type: SchemaJson } | null>) {
        if (f === null || typeof f !== "object" || typeof f.name !== "string") {
          throw new AvroError(`the Avro record ${name ?? ""} has a field without a name`);
        }
        fields.push([
          f.name,
          compile(
            f.type,
            named,
            fullName?.includes(".") ? fullName.slice(0, fullName.lastIndexOf(".")) : ns,
            depth + 1,
          ),
        ]);
      }
      return decoder;
    }
    case "enum": {
      const symbols = (schema.symbols as string[] | undefined) ?? [];
      return register((c) => {
        const i = c.length();
        const symbol = symbols[i];
        if (symbol === undefined) throw new AvroError(`an Avro enum index (${i}) does not exist`);
        return symbol;
      });
    }
    case "fixed": {
      const size = Number(schema.size);
      if (!Number.isInteger(size) || size < 0)
        throw new AvroError(`the Avro fixed type ${name ?? ""} has no valid size`);
      return register((c) => c.take(size));
    }
    case "array": {
      const items = compile(schema.items as SchemaJson, named, ns, depth + 1);
      return (c) => {
        const out: AvroValue[] = [];
        blocks(c, () => out.push(items(c)));
        return out;
      };
    }
    case "map": {
      const values = compile(schema.values as SchemaJson, named, ns, depth + 1);
      return (c) => {
        const out: AvroRecord = {};
        blocks(c, () => {
          const key = text.decode(c.bytesValue());
          out[key] = values(c);
        });
        return out;
      };
    }
    default:
      // A primitive written as {"type": "long", "logicalType": …}: the logical type changes nothing here.
      return compile(type, named, ns, depth + 1);
  }
}

/**
 * A block's count of items against the bytes that hold them: items of a type encoded in no bytes
 * (null, an empty record) could be counted by the trillion in a few corrupt bytes, and decoding
 * them would never end.
 */
function checkCount(count: number, bytes: number, what: string): void {
  if (count > bytes && count > MAX_ITEMS_WITHOUT_BYTES) {
    throw new AvroError(`an Avro block counts ${count} ${what} in ${bytes} bytes`);
  }
}

/** The blocks of an array or map: a count (negative: followed by the block's byte size), 0 ends. */
function blocks(c: Cursor, item: () => void): void {
  for (;;) {
    let count = c.long();
    if (typeof count !== "number") throw new AvroError("an Avro block count is too large");
    if (count === 0) return;
    if (count < 0) {
      count = -count;
      c.length();
    }
    checkCount(count, c.remaining, "items");
    for (let i = 0; i < count; i++) item();
  }
}

/** What an Avro container file says of itself: its header metadata (avro.schema, and Iceberg's keys). */
export interface AvroFile {
  metadata: Record<string, string>;
  records: AvroRecord[];
}

/** Decodes a whole container file: its header metadata and every record, in order. */
export async function readAvroFile(bytes: Uint8Array): Promise<AvroFile> {
  const c = new Cursor(bytes);
  const magic = c.take(4);
  if (!MAGIC.every((b, i) => magic[i] === b)) throw new AvroError("not an Avro container file");
  const metadata: Record<string, string> = {};
  blocks(c, () => {
    const key = text.decode(c.bytesValue());
    metadata[key] = text.decode(c.bytesValue());
  });
  const sync = c.take(16);
  let schema: SchemaJson;
  try {
    schema = JSON.parse(metadata["avro.schema"] ?? "") as SchemaJson;
  } catch {
    throw new AvroError("the Avro file has no valid avro.schema");
  }
  const decode = compile(schema, new Map(), undefined);
  const codec = metadata["avro.codec"] ?? "null";
  if (!["null", "deflate", "snappy", "zstandard"].includes(codec)) {
    throw new AvroError(`the Avro codec ${codec} is not supported`);
  }
  const records: AvroRecord[] = [];
  while (!c.done) {
    const count = c.length();
    const block = await decompress(c.bytesValue(), codec);
    checkCount(count, block.byteLength, "records");
    const marker = c.take(16);
    if (!marker.every((b, i) => b === sync[i])) throw new AvroError("an Avro block's sync marker does not match");
    const inner = new Cursor(block);
    for (let i = 0; i < count; i++) {
      const record = decode(inner);
      if (record === null || typeof record !== "object" || Array.isArray(record) || record instanceof Uint8Array) {
        throw new AvroError("the Avro file's records are not records");
      }
      records.push(record as AvroRecord);
    }
  }
  return { metadata, records };
}

async function decompress(block: Uint8Array, codec: string): Promise<Uint8Array> {
  if (codec === "null") return block;
  if (codec === "snappy") {
    // Snappy-compressed data followed by the CRC-32 of the uncompressed data (4 bytes, big-endian).
    if (block.byteLength < 5) throw new AvroError("an Avro snappy block is shorter than its CRC-32");
    const data = block.subarray(0, block.byteLength - 4);
    const probe = new Cursor(data);
    let size = 0;
    for (let shift = 1; ; shift *= 128) {
      const b = probe.take(1)[0]!;
      size += (b & 0x7f) * shift;
      if ((b & 0x80) === 0) break;
    }
    // No snappy element expands more than 64 bytes from 3 (a 2-byte-offset copy).
    if (size > data.byteLength * 22) throw new AvroError("an Avro snappy block claims more data than it can hold");
    let out: Uint8Array;
    try {
      out = snappyUncompress(data, size);
    } catch (e) {
      throw new AvroError(`an Avro snappy block does not decompress (${(e as Error).message})`);
    }
    const stored = new DataView(block.buffer, block.byteOffset + data.byteLength, 4).getUint32(0);
    if (crc32(out) !== stored) throw new AvroError("an Avro snappy block does not match its CRC-32 (corrupt data)");
    return out;
  }
  if (codec === "zstandard") {
    try {
      return decompressZstd(block);
    } catch (e) {
      throw new AvroError(`an Avro zstandard block does not decompress (${(e as Error).message})`);
    }
  }
  // python-avro (and pyiceberg, which follows it) write zlib's output less its 2-byte header and
  // last byte: raw deflate, then 3 bytes of the Adler-32 trailer. workerd's inflater refuses bytes
  // after the final deflate block (Node's ignores them), so without those 3 bytes once more.
  const inflated = (await inflateRaw(block)) ?? (block.byteLength > 3 ? await inflateRaw(block.subarray(0, -3)) : null);
  if (inflated === null) throw new AvroError("an Avro block does not inflate (corrupt deflate data)");
  return inflated;
}

/** Raw deflate (RFC 1951) inflated, or null when the data is not exactly one deflate stream. */
async function inflateRaw(data: Uint8Array): Promise<Uint8Array | null> {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  try {
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch {
    return null;
  }
}
