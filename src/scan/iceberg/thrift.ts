/**
 * The Thrift binary protocol (strict message header), just enough to call one method of a
 * service and read its reply: the Hive Metastore speaks it over a plain TCP stream (TSocket with
 * the buffered transport, no framing). Replies are decoded generically (a struct is a map from
 * field id to value), so the caller picks the fields its IDL names and skips the rest.
 */

/** Thrift type ids (TType). */
export const TType = {
  STOP: 0,
  BOOL: 2,
  BYTE: 3,
  DOUBLE: 4,
  I16: 6,
  I32: 8,
  I64: 10,
  STRING: 11,
  STRUCT: 12,
  MAP: 13,
  SET: 14,
  LIST: 15,
} as const;

/** Message types of the strict header (TMessageType). */
export const TMessageType = { CALL: 1, REPLY: 2, EXCEPTION: 3 } as const;

const VERSION_1 = 0x80010000;
const VERSION_MASK = 0xffff0000;

/** A decoded value: strings stay bytes until the caller asks for text (binary fields exist too). */
export type ThriftValue = boolean | number | bigint | Uint8Array | ThriftStruct | ThriftValue[] | ThriftMap;
export type ThriftStruct = Map<number, ThriftValue>;
export interface ThriftMap {
  entries: [ThriftValue, ThriftValue][];
}

/** A field of a call's arguments: a string, or a struct of such fields (e.g. a GetTableRequest). */
export type CallField = { id: number; value: string } | { id: number; fields: CallField[] };

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** A CALL message whose arguments struct holds strings and structs of strings (e.g. get_table_req(GetTableRequest)). */
export function encodeCall(method: string, seqid: number, args: CallField[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const i32 = (n: number) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setInt32(0, n);
    parts.push(b);
  };
  const bytes = (s: string) => {
    const b = utf8.encode(s);
    i32(b.byteLength);
    parts.push(b);
  };
  const struct = (fields: CallField[]) => {
    for (const field of fields) {
      const head = new Uint8Array(3);
      head[0] = "value" in field ? TType.STRING : TType.STRUCT;
      new DataView(head.buffer).setInt16(1, field.id);
      parts.push(head);
      if ("value" in field) bytes(field.value);
      else struct(field.fields);
    }
    parts.push(new Uint8Array([TType.STOP]));
  };
  i32(VERSION_1 | TMessageType.CALL | 0);
  bytes(method);
  i32(seqid);
  struct(args);
  const out = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Thrown while the bytes received so far hold only part of a message: read more, then decode again. */
export class IncompleteMessage extends Error {
  constructor() {
    super("the Thrift message is incomplete");
    this.name = "IncompleteMessage";
  }
}

/** The bytes are not a Thrift binary-protocol message (or one beyond the decoder's limits). */
export class ThriftProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ThriftProtocolError";
  }
}

/** A decoded message: its header and its one struct (the result or a TApplicationException). */
export interface ThriftMessage {
  name: string;
  type: number;
  seqid: number;
  body: ThriftStruct;
}

/** Nested structs and containers deeper than this are refused (a hostile server cannot recurse us away). */
const MAX_DEPTH = 64;

class Reader {
  private at = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  private need(n: number): number {
    if (this.at + n > this.bytes.byteLength) throw new IncompleteMessage();
    const at = this.at;
    this.at += n;
    return at;
  }

  byte = () => this.view.getInt8(this.need(1));
  i16 = () => this.view.getInt16(this.need(2));
  i32 = () => this.view.getInt32(this.need(4));
  i64 = (): number | bigint => {
    const n = this.view.getBigInt64(this.need(8));
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
  };
  double = () => this.view.getFloat64(this.need(8));

  binary(): Uint8Array {
    const length = this.i32();
    if (length < 0) throw new ThriftProtocolError(`a negative string length (${length})`);
    const at = this.need(length);
    return this.bytes.subarray(at, at + length);
  }

  /** A container's element count (its elements are read one by one, so a large count allocates nothing). */
  count(): number {
    const n = this.i32();
    if (n < 0) throw new ThriftProtocolError(`a negative container size (${n})`);
    return n;
  }

  value(type: number, depth: number): ThriftValue {
    if (depth > MAX_DEPTH) throw new ThriftProtocolError("the message nests too deeply");
    switch (type) {
      case TType.BOOL:
        return this.byte() !== 0;
      case TType.BYTE:
        return this.byte();
      case TType.I16:
        return this.i16();
      case TType.I32:
        return this.i32();
      case TType.I64:
        return this.i64();
      case TType.DOUBLE:
        return this.double();
      case TType.STRING:
        return this.binary();
      case TType.STRUCT:
        return this.struct(depth + 1);
      case TType.MAP: {
        const keyType = this.byte();
        const valueType = this.byte();
        const n = this.count();
        const entries: [ThriftValue, ThriftValue][] = [];
        for (let i = 0; i < n; i++) entries.push([this.value(keyType, depth + 1), this.value(valueType, depth + 1)]);
        return { entries };
      }
      case TType.SET:
      case TType.LIST: {
        const elementType = this.byte();
        const n = this.count();
        const items: ThriftValue[] = [];
        for (let i = 0; i < n; i++) items.push(this.value(elementType, depth + 1));
        return items;
      }
      default:
        throw new ThriftProtocolError(`an unknown Thrift type (${type})`);
    }
  }

  struct(depth: number): ThriftStruct {
    const fields: ThriftStruct = new Map();
    for (;;) {
      const type = this.byte();
      if (type === TType.STOP) return fields;
      const id = this.i16();
      fields.set(id, this.value(type, depth));
    }
  }

  message(): ThriftMessage {
    const header = this.i32();
    if ((header & VERSION_MASK) >>> 0 !== VERSION_1) {
      throw new ThriftProtocolError("the answer is not a strict Thrift binary-protocol message");
    }
    const name = text.decode(this.binary());
    const seqid = this.i32();
    return { name, type: header & 0xff, seqid, body: this.struct(0) };
  }
}

/** Decodes one message from the start of `bytes`; IncompleteMessage when more bytes are needed. */
export function decodeMessage(bytes: Uint8Array): ThriftMessage {
  return new Reader(bytes).message();
}

/** A string field of a decoded struct, or undefined when absent or not a string. */
export function stringField(struct: ThriftStruct | undefined, id: number): string | undefined {
  const v = struct?.get(id);
  return v instanceof Uint8Array ? text.decode(v) : undefined;
}

/** A struct field of a decoded struct. */
export function structField(struct: ThriftStruct | undefined, id: number): ThriftStruct | undefined {
  const v = struct?.get(id);
  return v instanceof Map ? v : undefined;
}

/** A map<string,string> field of a decoded struct, as a plain record. */
export function stringMapField(struct: ThriftStruct | undefined, id: number): Record<string, string> {
  const v = struct?.get(id);
  const out: Record<string, string> = {};
  if (v && typeof v === "object" && "entries" in v && Array.isArray(v.entries)) {
    for (const [k, value] of v.entries) {
      if (k instanceof Uint8Array && value instanceof Uint8Array) out[text.decode(k)] = text.decode(value);
    }
  }
  return out;
}
